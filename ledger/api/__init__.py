"""The services' request and answer models: what a client parses and an auditor reads.

One module per API: ``mint`` (stamping, orders and the census), ``treasury`` (claims, buys,
the supply), ``notary`` (notarizing, receipts, holders, provenance's records), ``provenance``
(a print's or a note's story checked offline), ``witness`` (cosigning and evidence),
``tables`` (witnessed play), ``logs`` (every service's feed, checkpoints and proofs),
``problems`` (RFC 9457 problem details).
"""
