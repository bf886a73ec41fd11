"""Raw HTTP over a socket: an answer read until the server closes, under a guard."""

from __future__ import annotations

import asyncio

#: A guard against a hung test, never an assertion about how long something took.
GUARD = 20.0


async def read_answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """Everything the server sends until it closes: status, headers, body (guarded)."""
    raw = await asyncio.wait_for(reader.read(), GUARD)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines[0] else 0
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    if "content-type" in headers:  # the media type alone, without "; charset=utf-8"
        headers["content-type"] = headers["content-type"].split(";")[0]
    return status, headers, body
