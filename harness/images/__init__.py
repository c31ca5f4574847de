"""Building the offline images: the debootstrap base, the wheelhouse and the engine and Node
images."""

from harness.images.build import BuildOptions, build_images, list_images
from harness.images.image import ImageInfo

__all__ = [
    "BuildOptions",
    "ImageInfo",
    "build_images",
    "list_images",
]
