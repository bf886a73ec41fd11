"""The league protocol, pure: keys, addresses, canonical bytes, certificates, proofs.

Nothing in this package does IO: no files, no sockets, no database. Services and clients
call into it; it never calls out.
"""
