"""Every SQL statement of the event store, bound once to a validated schema name.

Schema names cannot be query parameters, so they are spliced into these templates in one
place, after :data:`SCHEMA_NAME` has checked them; everything else is a ``$n`` parameter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

SCHEMA_NAME = re.compile(r"[a-z][a-z0-9_]{0,62}")

_EVENT_COLUMNS = "seq, stream, stream_version, type, body::text, recorded_at, leaf_hash, signature"


@dataclass(frozen=True, slots=True)
class Statements:
    """The store's statements; ``{s}`` is the schema, ``{e}`` the event columns."""

    # The time is read once the row is locked (the CTE's lock comes before the outer select),
    # not when the statement started to wait for it: recorded_at never runs backwards.
    lock_head: str = (
        "WITH head AS (SELECT size, edge FROM {s}.log_head FOR UPDATE) "
        "SELECT size, edge, clock_timestamp() FROM head"
    )
    read_head: str = "SELECT size, edge FROM {s}.log_head"
    head_size: str = "SELECT size FROM {s}.log_head"
    max_seq: str = "SELECT max(seq) FROM {s}.events"
    # One backward index probe per stream (a GROUP BY max() would read whole streams).
    stream_versions: str = (
        "SELECT w.stream, (SELECT e.stream_version FROM {s}.events e WHERE e.stream = w.stream"
        " ORDER BY e.stream_version DESC LIMIT 1) FROM unnest($1::text[]) AS w(stream)"
    )
    # One round trip per append: the events, the subtrees they close, the new head.
    append: str = (
        "WITH new_events AS (INSERT INTO {s}.events (seq, stream, stream_version, type, body,"
        " recorded_at, leaf, leaf_hash, signature) SELECT e.seq, e.stream, e.version, e.type,"
        " e.body::jsonb, $6, e.leaf, e.leaf_hash, e.signature FROM unnest($1::bigint[],"
        " $2::text[], $3::int[], $4::text[], $5::text[], $7::bytea[], $8::bytea[], $9::bytea[])"
        " AS e(seq, stream, version, type, body, leaf, leaf_hash, signature)),"
        " new_nodes AS (INSERT INTO {s}.tree_nodes (level, idx, hash)"
        " SELECT * FROM unnest($10::smallint[], $11::bigint[], $12::bytea[]))"
        " UPDATE {s}.log_head SET size = $13, edge = $14::bytea[]"
    )
    read_feed: str = "SELECT {e} FROM {s}.events WHERE seq > $1 ORDER BY seq LIMIT $2"
    read_stream: str = (
        "SELECT {e} FROM {s}.events WHERE stream = $1 AND stream_version > $2"
        " ORDER BY stream_version LIMIT $3"
    )
    read_event: str = "SELECT {e} FROM {s}.events WHERE seq = $1"
    read_events: str = "SELECT {e} FROM {s}.events WHERE seq = ANY($1::bigint[]) ORDER BY seq"
    read_subtrees: str = (
        "SELECT 0, seq, leaf_hash FROM {s}.events WHERE seq = ANY($1::bigint[]) "
        "UNION ALL SELECT t.level, t.idx, t.hash FROM {s}.tree_nodes t "
        "JOIN unnest($2::smallint[], $3::bigint[]) AS w(level, idx) "
        "ON t.level = w.level AND t.idx = w.idx"
    )
    # The audit's reads: every column of a range of events (the leaf last), then the stored
    # subtrees of one level in index order, concatenated (compared in one piece), or as rows
    # (to find which one is wrong). recorded_at comes as the leaf's time text (UTC, six
    # fraction digits, Z), rendered by the server: any stored value renders, even one no
    # Python datetime can hold ('-infinity', year 10000), and a wrong one is simply unequal.
    audit_range: str = (
        "SELECT seq, stream, stream_version, type, body::text,"
        """ to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),"""
        " leaf_hash, signature, leaf FROM {s}.events WHERE seq >= $1 AND seq < $2 ORDER BY seq"
    )
    nodes_joined: str = (
        "SELECT count(*), coalesce(string_agg(hash, ''::bytea ORDER BY idx), ''::bytea)"
        " FROM {s}.tree_nodes WHERE level = $1 AND idx >= $2 AND idx < $3"
    )
    nodes_listed: str = (
        "SELECT idx, hash FROM {s}.tree_nodes WHERE level = $1 AND idx >= $2 AND idx < $3"
        " ORDER BY idx"
    )
    count_nodes: str = "SELECT count(*) FROM {s}.tree_nodes"
    latest_checkpoint: str = (
        "SELECT tree_size, root_hash, note FROM {s}.checkpoints ORDER BY tree_size DESC LIMIT 1"
    )
    all_checkpoints: str = (
        "SELECT tree_size, root_hash, note FROM {s}.checkpoints ORDER BY tree_size"
    )
    insert_checkpoint: str = (
        "INSERT INTO {s}.checkpoints (tree_size, root_hash, note) VALUES ($1, $2, $3)"
    )
    notify: str = "SELECT pg_notify($1, $2)"

    @classmethod
    def for_schema(cls, schema: str) -> Statements:
        if not SCHEMA_NAME.fullmatch(schema):
            raise ValueError(f"not a schema name: {schema!r}")
        bound = {
            f.name: str(f.default).replace("{s}", schema).replace("{e}", _EVENT_COLUMNS)
            for f in fields(cls)
        }
        return cls(**bound)
