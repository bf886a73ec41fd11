"""Certificates: the first link of every chain (docs/architecture.md §3, Book V.1 and V.5).

A print certificate is signed by the mint: this serial, of this title, set and finish, was
stamped to ``issued_to`` by mint log event ``event`` under the manifest whose hash is
``manifest``. A note certificate is signed by the treasury: this serial of this denomination
was issued to ``issued_to``. Both carry an ``issue`` number: an item that comes back to its
issuer may be re-issued as a fresh certificate with the issue counting up, and every chain of
an older issue is history (``verify_chain(..., current_issue=...)`` refuses it).

These models check their own shape (serial well-formed and agreeing with title, finish or
denomination); whether the serial belongs to the league's runs is checked against the manifest
(``LeagueManifest.check_certificate``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import Field, model_validator

from ledger.errors import SchemaError, UnknownKindError
from ledger.note_set import Denomination
from ledger.print_runs import (
    MISPRINT,
    MISPRINT_SERIAL,
    MISPRINT_SET,
    MISPRINT_TITLE,
    PrintFinish,
    SetName,
    TitleText,
)
from ledger.wire import MAX_SAFE_INTEGER, HashText, KeyText, SignedModel

SerialText = Annotated[str, Field(min_length=1, max_length=64)]
#: A log position: the ``seq`` of the event that issued the certificate.
EventIndex = Annotated[int, Field(ge=0, le=MAX_SAFE_INTEGER)]
IssueNumber = Annotated[int, Field(ge=1, le=2**31)]


class PrintCertificate(SignedModel):
    """A stamped print: mint-signed."""

    KIND: ClassVar[str] = "print"
    WHAT = "print certificate"

    kind: Literal["print"]
    serial: SerialText
    title: TitleText
    set: SetName
    finish: PrintFinish
    issued_to: KeyText
    issue: IssueNumber
    event: EventIndex
    manifest: HashText

    @model_validator(mode="after")
    def _serial_agrees(self) -> Self:
        misprint = self.serial == MISPRINT_SERIAL
        if misprint != (self.finish == MISPRINT):
            raise ValueError(f"only {MISPRINT_SERIAL} has the finish {MISPRINT!r}")
        if misprint and (self.title, self.set) != (MISPRINT_TITLE, MISPRINT_SET):
            raise ValueError(f"{MISPRINT_SERIAL} is a {MISPRINT_TITLE} of the base set")
        if not misprint and not _serial_names_title(self.serial, self.title):
            raise ValueError(f"serial {self.serial!r} is not a serial of {self.title}")
        return self


class NoteCertificate(SignedModel):
    """A note: treasury-signed."""

    KIND: ClassVar[str] = "note"
    WHAT = "note certificate"

    kind: Literal["note"]
    serial: SerialText
    denomination: Denomination
    issued_to: KeyText
    issue: IssueNumber
    event: EventIndex
    manifest: HashText

    @model_validator(mode="after")
    def _serial_agrees(self) -> Self:
        if not self.serial.startswith(f"CZ-M{self.denomination}-"):
            raise ValueError(f"serial {self.serial!r} is not an M{self.denomination} note")
        return self


Certificate = PrintCertificate | NoteCertificate


def _serial_names_title(serial: str, title: str) -> bool:
    head, _, number = serial.rpartition("-")
    return head == f"CZ-{title.upper()}" and re.fullmatch(r"[0-9]{4}", number) is not None


def certificate_from_wire(data: Mapping[str, Any]) -> Certificate:
    """Parse a certificate of either kind, dispatching on ``kind``."""
    if not isinstance(data, Mapping):
        raise SchemaError("a certificate is a JSON object")
    kind = data.get("kind")
    if kind == PrintCertificate.KIND:
        return PrintCertificate.from_wire(data)
    if kind == NoteCertificate.KIND:
        return NoteCertificate.from_wire(data)
    raise UnknownKindError(f"expected a print or note certificate, got kind {kind!r}")
