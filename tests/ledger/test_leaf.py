"""The exact leaf bytes of an event, as an auditor recomputes them offline."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ledger.canonical import DOMAIN_TAGS
from ledger.checkpoint import Checkpoint, sign_checkpoint
from ledger.errors import BadSignatureError, DecodeError, SchemaError, SizeLimitError
from ledger.keys import SigningKey
from ledger.leaf import event_leaf, format_time, parse_time
from ledger.signed_note import NoteSigner

MOMENT = datetime(2026, 12, 2, 15, 51, 34, 120000, tzinfo=UTC)


def test_leaf_bytes_are_the_domain_tag_then_jcs_of_the_event() -> None:
    """The leaf is b"CZ1/event\\n" + RFC 8785 JSON with sorted keys and a fixed time form."""
    leaf = event_leaf(
        seq=7,
        stream="print/CZ-MODEL-A-0042",
        stream_version=1,
        type="stamped",
        body={"serial": "CZ-MODEL-A-0042", "finish": "gilt", "n": 3},
        recorded_at=MOMENT,
    )
    assert leaf == (
        b"CZ1/event\n"
        b'{"body":{"finish":"gilt","n":3,"serial":"CZ-MODEL-A-0042"},'
        b'"recorded_at":"2026-12-02T15:51:34.120000Z","seq":7,'
        b'"stream":"print/CZ-MODEL-A-0042","stream_version":1,"type":"stamped"}'
    )


def test_times_are_utc_with_six_digits_and_round_trip() -> None:
    """Any zone is rendered in UTC with microseconds; only that exact form parses back."""
    plus_two = MOMENT.astimezone(timezone(timedelta(hours=2)))
    assert format_time(plus_two) == "2026-12-02T15:51:34.120000Z"
    assert parse_time(format_time(MOMENT)) == MOMENT
    for bad in ("2026-12-02T15:51:34Z", "2026-12-02T15:51:34.12Z", "2026-12-02 15:51:34.120000"):
        with pytest.raises(SchemaError):
            parse_time(bad)
    with pytest.raises(SchemaError):
        format_time(datetime(2026, 1, 1))


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"body": {"x": 0.5}}, SchemaError),
        ({"body": {"x": [1, {"y": 2.0}]}}, SchemaError),
        ({"body": {"x": "\x00"}}, SchemaError),
        ({"body": {"x": 2**60}}, SchemaError),
        ({"body": [1]}, SchemaError),
        ({"type": ""}, SchemaError),
        ({"stream": "s" * 201}, SizeLimitError),
        ({"body": {"x": "y" * 70_000}}, SizeLimitError),
    ],
)
def test_events_outside_the_limits_are_typed_errors(
    fields: dict[str, object], error: type[Exception]
) -> None:
    """Floats, NULs, unsafe integers, non-objects, empty names, oversize: each a typed error."""
    event = {
        "seq": 0,
        "stream": "s",
        "stream_version": 1,
        "type": "t",
        "body": {},
        "recorded_at": MOMENT,
    } | fields
    with pytest.raises(error):
        event_leaf(**event)  # type: ignore[arg-type]


def test_event_and_checkpoint_signatures_cannot_stand_in_for_each_other() -> None:
    """The service key signs events and checkpoints; neither's bytes parse as the other."""
    key = SigningKey(bytes(range(32)))
    leaf = event_leaf(seq=0, stream="s", stream_version=1, type="t", body={}, recorded_at=MOMENT)
    with pytest.raises(DecodeError):
        Checkpoint.from_note(
            leaf.decode() + "\n\n" + NoteSigner("CZ1/event", key).sign(leaf.decode() + "\n").line()
        )
    checkpoint = sign_checkpoint("CZ1/event", 0, bytes(32), key)
    assert not checkpoint.text.encode().startswith(DOMAIN_TAGS["event"] + b"{")
    with pytest.raises(BadSignatureError):
        key.public.verify_raw(leaf, checkpoint.note.signatures[0].signature)
