"""The notary checks each chain offline before anything else, and a certificate's signature
once: a certificate it already followed from the mint's verified feed, signature and all, is
not verified again; one that differs from it in any byte is (Book V.6, V.7)."""

from __future__ import annotations

import pytest

from apiclient.league import LeagueProblem
from ledger.canonical import domain_tag
from ledger.certificates import PrintCertificate
from ledger.endorsements import Chain
from ledger.keys import PublicKey, SigningKey
from services.eventlog import PostgresEventStore, Row
from tests.harness.trading import T0, Trade, hop

PRINT_TAG = domain_tag("print")


class Certificates:
    """Counts the print certificates whose signature this process checks (every Ed25519
    verification still runs, through the real key)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.verified = 0
        verify_raw = PublicKey.verify_raw

        def counted(key: PublicKey, message: bytes, signature: bytes) -> None:
            if message.startswith(PRINT_TAG):
                self.verified += 1
            verify_raw(key, message, signature)

        monkeypatch.setattr(PublicKey, "verify_raw", counted)


async def test_a_followed_certificate_is_not_verified_again(
    trade: Trade, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A print's first hop makes the notary follow the mint past its stamp; a later request
    bringing the same certificate costs no verification of the mint's signature on it."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    to_b = hop(await trade.stamp(a), a, b)
    await trade.league.notarize([to_b])  # the notary has followed the stamp by now

    certificates = Certificates(monkeypatch)
    answer = await trade.league.notarize([hop(to_b, b, c, T0 + 1)])
    assert answer.recorded == 1
    assert certificates.verified == 0


async def test_a_followed_certificate_with_another_signature_is_refused(
    trade: Trade, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stamped certificate's content under a signature that is not the mint's (here a
    forger's over the same bytes) is not the certificate followed: it is verified, and
    refused 422 bad-signature, though its hash (which leaves the signature out) is the
    stamped one's."""
    a, b, c, forger = (SigningKey.generate() for _ in range(4))
    stamped = await trade.stamp(a)
    await trade.league.notarize([hop(stamped, a, b)])  # followed, as above
    certificate = stamped.certificate
    resigned = PrintCertificate.sign(
        forger, **{k: v for k, v in certificate.to_wire().items() if k not in ("kind", "sig")}
    )
    assert resigned.hash() == certificate.hash()
    assert resigned.sig != certificate.sig

    certificates = Certificates(monkeypatch)
    forged = hop(hop(Chain(certificate=resigned, endorsements=()), a, b), b, c, T0 + 1)
    with pytest.raises(LeagueProblem) as refused:
        await trade.league.notarize([forged])
    assert (refused.value.status, refused.value.slug) == (422, "bad-signature")
    assert certificates.verified == 1


async def test_the_followed_certificate_is_read_once_a_request(
    trade: Trade, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the notary followed of a request's prints is read once: the one read tells both
    whether a certificate is the one followed (not verified again) and whether it is the
    print's current issue (``following.check_current``)."""
    a, b, c = SigningKey.generate(), SigningKey.generate(), SigningKey.generate()
    to_b = hop(await trade.stamp(a), a, b)
    await trade.league.notarize([to_b])  # followed by now: nothing to catch up below

    reads: list[str] = []
    fetch = PostgresEventStore.fetch

    async def counted(store: PostgresEventStore, query: str, *args: object) -> list[Row]:
        if "notary.prints" in query:
            reads.append(query)
        return await fetch(store, query, *args)

    monkeypatch.setattr(PostgresEventStore, "fetch", counted)
    certificates = Certificates(monkeypatch)
    answer = await trade.league.notarize([hop(to_b, b, c, T0 + 1)])
    assert answer.recorded == 1
    assert certificates.verified == 0
    assert len(reads) == 1
