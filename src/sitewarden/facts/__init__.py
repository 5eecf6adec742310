"""Ground floor: the facts every product reads, and nothing of the products.

The typed records, the PEP 668 marker, the one reader of bytes and startup files, a
distribution with its metadata and ``RECORD``, dpkg's lists, whether a file is what its
owner installed, and the private cache.  Imports only ``sitewarden``'s top-level modules;
every package above may import it.
"""
