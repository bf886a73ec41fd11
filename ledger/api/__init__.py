"""The services' request and answer models: what a client parses and an auditor reads.

One module per API: ``mint`` (stamping and the census), ``logs`` (every service's feed,
checkpoints and proofs), ``problems`` (RFC 9457 problem details).
"""
