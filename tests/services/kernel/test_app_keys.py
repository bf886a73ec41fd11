"""The app keys a composed app keeps per service are made once: asked again, from any thread,
they are the same key (an aiohttp AppKey made on a thread whose stack has no module frame
raised before, which broke a league served on a background thread)."""

from __future__ import annotations

import threading

from services.http.logs import served_checkpoint_key
from services.kernel.witness_server import witness_key


def test_per_service_app_keys_are_made_once_and_asked_from_any_thread() -> None:
    """witness_key and served_checkpoint_key answer one key per service, on a thread too."""
    made = [witness_key("notary"), served_checkpoint_key("notary")]
    seen: list[object] = []
    failed: list[BaseException] = []

    def ask() -> None:
        try:
            seen.extend([witness_key("notary"), served_checkpoint_key("notary")])
        except BaseException as exc:  # reported below, on the test's thread
            failed.append(exc)

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join()
    assert failed == []
    assert all(a is b for a, b in zip(made, seen, strict=True))
