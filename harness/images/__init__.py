"""Building the offline images: the debootstrap base, the wheelhouse and the engine and Node
images."""
