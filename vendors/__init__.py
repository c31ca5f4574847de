"""Facts about the vendors the proxy speaks for (names, hosts, default purposes).

The bottom layer: it imports nothing else of the project, and stubs, proxy and harness share it.
"""
