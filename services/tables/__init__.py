"""The tables service: witnessed play (Book V.5: "your real income is server-witnessed play").

A player opens a table at a venue against its AI, brings half of a commit-reveal deal and
plays each move as a signed request; the service applies it with the engine
(``game.window.witnessed``), answers with the opponent's replies, and records every request and
reply in its own signed Merkle log, so a table's result is a fact anyone can audit
(docs/formats.md, "Witnessed tables"). ``create_app(settings)`` serves it alone; ``league
serve`` mounts :data:`services.tables.app.SERVICE` beside the other services. Handlers are thin:
requests and events are protocol objects (``ledger.tables``), deciding is one event-log
transaction (``services.tables.playing``).
"""
