"""Published maximums: every parser of untrusted input and every service checks against these.

They are part of the protocol, not tuning knobs: a slip written within them is accepted by every
client and every league. Sizes are in bytes of the text as received (armor included).
"""

from __future__ import annotations

KIB = 1024
MIB = 1024 * KIB

#: Longest address text accepted before decoding (``CZ-XXXX-XXXX-XXXX`` is 17 characters).
MAX_ADDRESS_CHARS = 64

#: Longest serial text accepted before parsing.
MAX_SERIAL_CHARS = 64

#: Largest armored block per label, checked before any decoding.
MAX_ARMOR_BYTES: dict[str, int] = {
    "CZ LEDGER CARD": 1 * KIB,
    "CZ KEY": 4 * KIB,
    "CZ SLIP": 2 * MIB,
    "CZ SAVE CODE": 8 * MIB,
}

#: Whole chains (one per print or note) in one slip.
MAX_CHAINS_PER_SLIP = 256

#: Endorsements in one chain. A chain ends when its item returns to the issuer and is re-issued,
#: so only a long run of trades between players comes near this.
MAX_HOPS_PER_CHAIN = 1024

#: Prints presented in one stamping request (the manifest's default stamp batch limit).
MAX_STAMP_BATCH = 100

#: Endorsements submitted to the notary in one request.
MAX_ENDORSEMENT_BATCH = 1024

#: Hops of one chain the notary records in one request: those after its last recorded hop.
#: A wallet notarizes each hop it receives, so only a run of offline trades brings more; such
#: a chain is notarized in pieces (its first hops are a chain too). Ruling L-22.
MAX_NEW_HOPS_PER_CHAIN = 16

#: Notes paid in one purchase, and notes issued in one faucet claim.
MAX_NOTES_PER_REQUEST = 256

#: Events returned by one feed read (``GET /<service>/events?after=N``).
MAX_FEED_PAGE = 1000

#: Bytes of event bodies one feed page carries: a page stops at the first event past this
#: (it always carries one), so a page of the largest events still fits every reader's
#: answer limit (MAX_ANSWER_BYTES). A reader goes on from the page's ``next_after``, never
#: from the number of events it asked for.
MAX_FEED_PAGE_BYTES = 4 * MIB

#: Largest JSON request body any service accepts (a full slip plus its envelope).
MAX_REQUEST_BODY_BYTES = 3 * MIB

#: Largest answer a client reads from a league (a full feed page is well under 2 MiB).
MAX_ANSWER_BYTES = 16 * MIB

#: Longest league id and display name in a manifest.
MAX_LEAGUE_ID_CHARS = 64
MAX_LEAGUE_NAME_CHARS = 120

#: Largest print run total per title (serial numbers have four digits).
MAX_RUN_TOTAL = 9999

#: Largest count of notes of one denomination (note serial numbers have six digits).
MAX_NOTES_PER_DENOMINATION = 999_999
