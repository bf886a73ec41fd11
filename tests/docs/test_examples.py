"""Every marked example in docs/ runs through the real parser or engine.

A fenced example is marked by the HTML comment on the line before its fence,
``<!-- example: KIND -->``; KIND names the runner below. ``sketch`` marks an outline that holds
``…`` and is not JSON: it is checked to be one, so a runnable example cannot hide as a sketch.
A doc with any marker must mark every fence it has. Placeholders (``"<key>"``, ``"<hash>"``,
``"<sig by mint>"``) are filled with well-formed values of a test league before parsing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clients.cz import main as cz
from game.window import from_json, to_json
from ledger.cards import LedgerCard
from ledger.certificates import NoteCertificate, PrintCertificate
from ledger.endorsements import Endorsement
from ledger.keys import SigningKey
from ledger.note_set import DEFAULT_NOTE_SET, NoteSet
from ledger.print_runs import DEFAULT_PRINT_RUNS, PrintRunTable
from ledger.wire import SignedModel, hash_text
from tests.ledger.factories import League, key, make_league

DOCS = Path(__file__).resolve().parents[2] / "docs"
_FENCE = re.compile(r"^```", re.M)
_MARKED = re.compile(r"^<!-- example: ([a-z-]+) -->\n```[a-z]*\n(.*?)^```", re.M | re.S)


@dataclass(frozen=True)
class Example:
    doc: str
    line: int
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}:{self.kind}"


def _examples() -> list[Example]:
    found = []
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        for match in _MARKED.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(Example(path.name, line, match.group(1), match.group(2)))
    return found


EXAMPLES = _examples()
ALICE, BOB = key(10), key(11)


def _placeholder(value: object) -> bool:
    return isinstance(value, str) and value.startswith("<") and value.endswith(">")


def _fill(example: dict[str, Any], values: dict[str, str]) -> dict[str, Any]:
    """``example`` without ``kind`` and ``sig``, each other placeholder replaced by the value of
    its field; a placeholder the test has no value for fails the test (KeyError)."""
    assert _placeholder(example["sig"]), "a signed example shows its signature as a placeholder"
    return {
        field: values[field] if _placeholder(value) else value
        for field, value in example.items()
        if field not in ("kind", "sig")
    }


def _signed(model: type[SignedModel], signer: SigningKey, example: Any, **values: str) -> None:
    """Sign the filled example as ``model`` and check the signature under ``signer``."""
    model.sign(signer, **_fill(example, values)).verify(signer.public)


def _print_certificate(example: Any, league: League) -> None:
    fields = {"issued_to": ALICE.public.to_text(), "manifest": league.manifest.hash_text()}
    certificate = PrintCertificate.sign(league.mint, **_fill(example, fields))
    certificate.verify(league.mint.public)
    league.manifest.check_certificate(certificate)


def _note_certificate(example: Any, league: League) -> None:
    fields = {"issued_to": ALICE.public.to_text(), "manifest": league.manifest.hash_text()}
    certificate = NoteCertificate.sign(league.treasury, **_fill(example, fields))
    certificate.verify(league.treasury.public)
    league.manifest.check_certificate(certificate)


def _endorsement(example: Any, league: League) -> None:
    fields = {
        "prev": hash_text(bytes(32)),
        "from": ALICE.public.to_text(),
        "to": BOB.public.to_text(),
    }
    _signed(Endorsement, ALICE, example, **fields)


def _ledger_card(example: Any, league: League) -> None:
    LedgerCard.from_wire(example)


def _print_runs(example: Any, league: League) -> None:
    published = {run.title: run for run in DEFAULT_PRINT_RUNS.runs}
    for run in PrintRunTable.from_wire(example).runs:
        assert run == published[run.title]


def _note_set(example: Any, league: League) -> None:
    assert NoteSet.from_wire(example) == DEFAULT_NOTE_SET


def _position(example: Any, league: League) -> None:
    assert to_json(from_json(example)) == example


RUNNERS: dict[str, Callable[[Any, League], None]] = {
    "print-certificate": _print_certificate,
    "note-certificate": _note_certificate,
    "endorsement": _endorsement,
    "ledger-card": _ledger_card,
    "print-runs": _print_runs,
    "note-set": _note_set,
    "position": _position,
}


@pytest.fixture(scope="module")
def league() -> League:
    return make_league()


def test_every_fence_of_a_marked_doc_is_marked() -> None:
    """A doc that marks examples marks all of its fenced blocks, each with a known kind, and
    formats.md is such a doc: no example there goes untested by being left unmarked."""
    marked_docs = {e.doc for e in EXAMPLES}
    assert "formats.md" in marked_docs
    for doc in marked_docs:
        fences = len(_FENCE.findall((DOCS / doc).read_text(encoding="utf-8")))
        assert fences == 2 * sum(e.doc == doc for e in EXAMPLES), f"{doc}: an unmarked fence"
    for example in EXAMPLES:
        assert example.kind in {*RUNNERS, "record", "sketch"}, f"{example}: unknown kind"


# Regression: the example record in docs/formats.md was illegal ('build Tally' at turn 1).
@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.kind == "record"], ids=str)
def test_record_examples_replay_with_cz(
    example: Example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record example replays legally with ``cz table replay`` (exit 0, nothing on stderr)
    and prints the final position, the columns and the verdict."""
    path = tmp_path / "record.json"
    path.write_text(example.text, encoding="utf-8")
    status = cz(["table", "replay", "--json", str(path)])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert set(json.loads(out)) == {"position", "columns", "verdict"}


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.kind in RUNNERS], ids=str)
def test_format_examples_parse(example: Example, league: League) -> None:
    """Each wire-format example parses with its model's from_wire (after its placeholders are
    filled), signs and verifies where it is signed, and agrees with the published data."""
    RUNNERS[example.kind](json.loads(example.text), league)


@pytest.mark.parametrize("example", [e for e in EXAMPLES if e.kind == "sketch"], ids=str)
def test_sketches_are_outlines_not_json(example: Example) -> None:
    """A block marked sketch holds an ellipsis and is not JSON, so it cannot be a runnable
    example that escaped its test."""
    assert "…" in example.text
    with pytest.raises(json.JSONDecodeError):
        json.loads(example.text)
