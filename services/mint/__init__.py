"""The mint: stamps prints from the league's fixed, published runs (Book V.1, V.4;
docs/architecture.md §4).

``create_app(settings)`` serves it alone; ``league serve`` mounts :data:`SERVICE` beside the
other services. Handlers are thin: the request is a signed protocol object
(``ledger.requests``; the answers are ``ledger.api.mint``), stamping is one event-log
transaction (``services.mint.stamping``), the census reads the projections
(``services.mint.census``).
"""
