"""The independent auditor: ``league audit``'s IO around ``ledger.audit`` (docs/operations.md
"Auditing a running league").

Nothing but the league's API client (``apiclient/``) and ``ledger/``, never the services' own
code, which is what it checks: an auditor installs and runs it without the server. A
:class:`Source` gives what a league serves, as served (the JSON and notes' text):
:class:`Served` reads it over HTTP (and, with ``--save``, writes every answer into a
:class:`SavedLeague` directory as it arrives), :class:`Saved` reads such a directory back
(``--offline``): :mod:`auditor.sources`. :func:`run_audit` (:mod:`auditor.run`) feeds either
through the same :class:`ledger.audit.Auditor`; pages are checked by
:func:`ledger.audit.check_page` in a pool of worker processes, one page each, while this process
does the stateful checks in seq order. What is kept between runs is :mod:`auditor.state`;
``league audit`` parses its options and calls :func:`auditor.cli.audit`.

The services may answer at separate hosts: :class:`Served` reads each from the URL given for
it (``--mint``, ``--treasury``, ``--notary``), else the URL the league's manifest names for it
(once its root signature is checked against the pin), else the league's URL.

What the auditor keeps between runs (:class:`AuditState`, one JSON file) is keyed by the
league's root key: the root pinned for each URL on first use, and per root the latest
checkpoint each service served to a passed audit. A league that moves host keeps its
history; a changed root at a known URL is refused.

The saved directory (docs/operations.md, "Auditing offline")::

    DIR/audit.json                      {"format", "url", "saved_at"}
    DIR/manifest.json                   GET /mint/manifest
    DIR/<service>/checkpoint            GET /<service>/checkpoint
    DIR/<witness>/evidence/000000.json  GET /<witness>/evidence (the first page)
    DIR/<service>/events/NNNNNN.json    GET /<service>/events?after=...&limit=..., in order
    DIR/notary/holders/NNNNNN.json      GET /notary/holders?after=..., in order
"""

from auditor.errors import AuditorError
from auditor.run import (
    AuditOutcome,
    AuditProgress,
    PageChecker,
    audit_offline,
    audit_url,
    run_audit,
    service_urls,
)
from auditor.sources import Saved, SavedLeague, Served, Source
from auditor.state import AuditState

__all__ = [
    "AuditOutcome",
    "AuditProgress",
    "AuditState",
    "AuditorError",
    "PageChecker",
    "Saved",
    "SavedLeague",
    "Served",
    "Source",
    "audit_offline",
    "audit_url",
    "run_audit",
    "service_urls",
]
