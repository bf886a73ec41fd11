"""The notary: the one arbiter of transfers (Book V.6, V.7, V.8; docs/architecture.md §3 and §4).

``POST /notary/endorsements`` takes whole chains (a slip, or the chains themselves), verifies
them offline-style under the league manifest and against the mint's feed as followed, and
records the first endorsement at each (serial, issue, hop): a receipt per hop, or a 409 with
the prior record and the fraud proof. ``GET /provenance/{serial}`` tells one print's whole life.
Modules: ``notarizing`` (the one writer), ``receipts``, ``projection`` and ``tables`` (SQL
through the store only), ``following`` (the mint's feed), ``provenance``, ``app``.
"""
