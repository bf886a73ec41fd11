"""Cards as data, compiled: the card set's JSON checked against every rule a schema cannot say,
then turned into small frozen objects the engine reads on its hot path.

Types, kinds, speeds and effects become small integers; identities become indices into the
set's identity list; every class of cards becomes a :class:`Selector`. A fault is one
:class:`CardDataError` naming the card, the ability and the rule (docs/charter.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from game.charter import schema as S
from game.charter.errors import CardDataError

# Card types (Locations, Structures, Objects, Entities, Edicts).
LOCATION, STRUCTURE, OBJECT, ENTITY, EDICT = range(5)
TYPE_NAMES = ("location", "structure", "object", "entity", "edict")
TYPE_BY_NAME = {name: i for i, name in enumerate(TYPE_NAMES)}
#: The attributes each type carries, and no others (Locations … Edicts).
ATTRIBUTES: dict[int, tuple[str, ...]] = {
    LOCATION: ("strength", "resilience", "integrity", "extent"),
    STRUCTURE: ("strength", "resilience", "integrity", "size"),
    OBJECT: (),
    ENTITY: ("strength", "resilience", "integrity"),
    EDICT: (),
}
ALL_ATTRIBUTES = ("strength", "resilience", "integrity", "extent", "size")

# Ability kinds and activated speeds (Triggered, Activated, Transactional, Static abilities).
TRIGGERED, ACTIVATED, TRANSACTIONAL, STATIC = range(4)
KIND_BY_NAME = {"triggered": 0, "activated": 1, "transactional": 2, "static": 3}
STANDARD, INTERRUPT, RESERVE = range(3)
SPEED_BY_NAME = {"standard": 0, "interrupt": 1, "reserve": 2}
#: Each reserved keyword's kind (Ability keywords).
KEYWORD_KIND = {
    "Interrupt": STATIC,
    "Affix": TRANSACTIONAL,
    "Attach": ACTIVATED,
    "Grant": STATIC,
    "Free": ACTIVATED,
}
TRIGGERS = ("enters", "leaves", "turn_start", "attacks", "blocks", "releases")
#: Effects that act on a target, and effects only a static ability may state.
TARGETED = frozenset({"damage", "destroy", "control", "return", "release", "counter", "repair"})
STATIC_ONLY = frozenset({"modify", "withhold"})

ANY, YOU, OTHER = 0, 1, 2
_CONTROLLER = {"any": ANY, "you": YOU, "other": OTHER}
ALL_TYPES = 0b11111


def weight(tier: int) -> int:
    """A tier's weight: 1, 2, 4, … doubling per step (Resource tiers)."""
    return 1 << (tier - 1)


@dataclass(frozen=True, slots=True)
class Selector:
    """A class of cards. ``types`` is a bit mask; ``controller`` is read from the chooser."""

    types: int = ALL_TYPES
    controller: int = ANY
    name: str | None = None
    anchored: bool | None = None
    committed: bool | None = None
    min_value: int = 0
    zone: str = "board"


@dataclass(frozen=True, slots=True)
class Price:
    named: tuple[int, ...] = ()  # identity indices, sorted
    additional: int = 0
    consume: tuple[Selector, ...] = ()
    commit: bool = False
    manifest: bool = False
    need: tuple[tuple[int, int], ...] = ()  # (identity, how many) of the named requirements
    #: Resources alone pay it (no consume, commitment or manifest use), worked out once.
    plain: bool = field(init=False, repr=False, compare=False)
    #: It asks no resource, consume or manifest use (at most the card's commitment).
    bare: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "plain", not (self.consume or self.commit or self.manifest))
        bare = not (self.named or self.additional or self.consume or self.manifest)
        object.__setattr__(self, "bare", bare)

    @property
    def resources(self) -> int:
        return len(self.named) + self.additional


FREE_PRICE = Price()


@dataclass(frozen=True, slots=True)
class Effect:
    do: str
    target: str | Selector | None = None  # "self", "host", a chosen class, or none
    amount: int = 0
    identity: int = -1
    mods: tuple[int, int, int, int] = (0, 0, 0, 0)  # strength, resilience, integrity, extent


@dataclass(frozen=True, slots=True)
class Ability:
    kind: int
    keyword: str | None
    speed: int
    trait: str | None
    trigger: str | None
    price: Price
    effect: Effect | None
    host: Selector | None
    target: Selector | None  # Interrupt's term, Free's target
    granted: Ability | None
    complexity: int
    #: The class of the card chosen when this is played or used (None: no choice); worked
    #: out once, as the ability is made.
    chooses: Selector | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "chooses", _chooses(self))


def _chooses(a: Ability) -> Selector | None:
    if a.keyword in ("Affix", "Attach"):
        return a.host
    if a.keyword == "Free":
        return a.target
    if a.effect is not None and isinstance(a.effect.target, Selector):
        return a.effect.target
    return None


@dataclass(frozen=True, slots=True)
class CardDef:
    name: str
    type: int
    complexity: int
    strength: int
    resilience: int
    integrity: int
    extent: int
    size: int
    price: Price
    value: int  # the combined weight of the named requirements (Resource tiers)
    produces: tuple[int, ...]
    maintenance: tuple[Price, Effect | None] | None
    abilities: tuple[Ability, ...]
    text: str


@dataclass(frozen=True, slots=True)
class CardSet:
    name: str
    identities: tuple[str, ...]
    tiers: tuple[int, ...]
    cards: tuple[CardDef, ...]
    by_name: dict[str, int]
    source: dict[str, Any]  # the JSON it was read from, kept for positions and records

    def card(self, name: str) -> CardDef:
        return self.cards[self.by_name[name]]


def trait_of(kind: int, speed: int) -> str | None:
    """The one gutter mark an ability shows, or None for an empty gutter (Ability traits)."""
    if kind == TRANSACTIONAL:
        return "transactional"
    if kind == ACTIVATED and speed == INTERRUPT:
        return "interrupt"
    if kind == ACTIVATED and speed == RESERVE:
        return "reserve"
    return None


class _Compiler:
    def __init__(self, data: S.CardSet) -> None:
        self.identities = {ident.name: i for i, ident in enumerate(data.identities)}
        self.tiers = tuple(ident.tier for ident in data.identities)
        self.where = ""

    def fail(self, message: str) -> CardDataError:
        return CardDataError(f"{self.where}: {message}")

    def identity(self, name: str) -> int:
        if name not in self.identities:
            raise self.fail(f"unknown resource identity {name!r}")
        return self.identities[name]

    def selector(self, c: S.CardClass) -> Selector:
        types = ALL_TYPES
        if c.types is not None:
            if not c.types:
                raise self.fail("a class names at least one card type")
            types = sum(1 << TYPE_BY_NAME[t] for t in set(c.types))
        return Selector(
            types, _CONTROLLER[c.controller], c.name, c.anchored, c.committed, c.min_value, c.zone
        )

    def price(self, p: S.Price, *, card: bool, ability: bool) -> Price:
        if p.manifest and not card:
            raise self.fail("only a card's own price may spend a manifest use (Manifest)")
        if p.commit and not ability:
            raise self.fail("only an ability or obligation price may commit its card")
        named = tuple(sorted(self.identity(n) for n in p.named))
        need = tuple((i, named.count(i)) for i in sorted(set(named)))
        consume = tuple(self.selector(c) for c in p.consume)
        return Price(named, p.additional, consume, p.commit, p.manifest, need)

    def effect(self, e: S.Effect, kind: int) -> Effect:
        if e.do in STATIC_ONLY and kind != STATIC:
            raise self.fail(f"{e.do!r} is a standing fact: only a static ability states it")
        if kind == STATIC and e.do not in STATIC_ONLY:
            raise self.fail(f"a static ability never fires, so it cannot {e.do!r}")
        target: str | Selector | None
        if isinstance(e.target, S.CardClass):
            target = self.selector(e.target)
            wanted = "stack" if e.do == "counter" else "board"
            if target.zone != wanted:
                raise self.fail(f"{e.do!r} acts on a card on the {wanted}")
        else:
            target = e.target
        if target == "opponents" and e.do != "damage":
            raise self.fail("only 'damage' reaches players: 'opponents' is its target alone")
        if e.do in TARGETED and target is None:
            raise self.fail(f"{e.do!r} needs a target")
        if e.do in ("draw", "add") and target is not None:
            raise self.fail(f"{e.do!r} acts for the controller: no target")
        if e.do in ("damage", "draw", "add", "repair") and e.amount < 1:
            raise self.fail(f"{e.do!r} needs an amount of at least 1")
        identity = -1
        if e.do == "add":
            if e.identity is None:
                raise self.fail("'add' names the identity of the resources it adds")
            identity = self.identity(e.identity)
        mods = (e.strength, e.resilience, e.integrity, e.extent)
        if e.do != "modify" and any(mods):
            raise self.fail("attribute changes belong to 'modify' only")
        return Effect(e.do, target, e.amount, identity, mods)

    def ability(self, a: S.Ability, card_type: int, *, granted: bool = False) -> Ability:
        kind = KIND_BY_NAME[a.kind]
        kw = a.keyword
        if kw is not None and KEYWORD_KIND[kw] != kind:
            raise self.fail(f"{kw} is {_KIND_NAMES[KEYWORD_KIND[kw]]}, not {a.kind}")
        if a.speed is not None and kind != ACTIVATED:
            raise self.fail("only an activated ability has a speed")
        speed = SPEED_BY_NAME[a.speed or "standard"]
        trait = trait_of(kind, speed)
        if a.trait is not None and a.trait != trait:
            shown = trait or "an empty gutter"
            raise self.fail(f"the gutter shows {shown}, not the {a.trait} trait (Ability traits)")
        if (kind == TRIGGERED) != (a.trigger is not None):
            raise self.fail("a triggered ability, and only one, states its trigger")
        if kind == ACTIVATED and a.price is None:
            raise self.fail("an activated ability states its price")
        if kind != ACTIVATED and a.price is not None:
            raise self.fail("only an activated ability has a price of its own")
        price = self.price(a.price, card=False, ability=True) if a.price else FREE_PRICE
        effect = self.effect(a.effect, kind) if a.effect is not None else None
        if kw in ("Affix", "Attach"):
            if a.host is None:
                raise self.fail(f"{kw} states the class of its host")
            if card_type in (LOCATION, STRUCTURE) or granted:
                raise self.fail(f"{kw} anchors objects, entities and edicts only (C-12)")
        elif a.host is not None:
            raise self.fail("only Affix and Attach state a host")
        if kw == "Free" and a.target is None:
            raise self.fail("Free states the class of anchored card it frees")
        if kw not in ("Interrupt", "Free") and a.target is not None:
            raise self.fail("only Interrupt and Free state a target class of their own")
        if kw == "Grant":
            if a.granted is None:
                raise self.fail("Grant states the ability the host has")
        elif a.granted is not None:
            raise self.fail("only Grant carries a granted ability")
        if kw is None and effect is None:
            raise self.fail("an ability without a keyword states its effect")
        if kw is not None and effect is not None:
            raise self.fail(f"{kw}'s behaviour is the rulebook's: it states no effect")
        inner = self.ability(a.granted, card_type, granted=True) if a.granted else None
        target = self.selector(a.target) if a.target else None
        host = self.selector(a.host) if a.host else None
        return Ability(
            kind, kw, speed, trait, a.trigger, price, effect, host, target, inner, a.complexity or 0
        )

    def card(self, c: S.Card) -> CardDef:
        t = TYPE_BY_NAME[c.type]
        for attr in ALL_ATTRIBUTES:
            present = getattr(c, attr) is not None
            if present != (attr in ATTRIBUTES[t]):
                rule = "carries" if not present else "carries no"
                article = "an" if c.type[0] in "aeiou" else "a"
                raise self.fail(f"{article} {c.type} {rule} {attr}")
        price = self.price(c.price, card=True, ability=False)
        abilities = tuple(self.ability(a, t) for a in c.abilities)
        keywords = [a.keyword for a in abilities]
        if "Grant" in keywords and not ({"Affix", "Attach"} & set(keywords)):
            raise self.fail("Grant works only while anchored: the card needs Affix or Attach")
        if keywords.count("Affix") > 1:
            raise self.fail("one Affix per card: it anchors once")
        if t == EDICT and TRANSACTIONAL not in {a.kind for a in abilities}:
            raise self.fail("an edict performs its ability as it resolves: it needs one")
        chosen = [a.chooses for a in abilities if a.kind == TRANSACTIONAL and a.chooses]
        if len(chosen) + (t == STRUCTURE) > 1:
            raise self.fail("a card chooses at most one host or target when played (C-09)")
        if sum(a.complexity for a in abilities) > c.complexity:
            raise self.fail("its abilities' complexity exceeds the card's (Ability keywords)")
        maintenance = None
        if c.maintenance is not None:
            m_price = self.price(c.maintenance.price, card=False, ability=True)
            consequence = None
            if c.maintenance.consequence is not None:
                consequence = self.effect(c.maintenance.consequence, TRIGGERED)
            maintenance = (m_price, consequence)
        tiers = self.tiers
        return CardDef(
            name=c.name,
            type=t,
            complexity=c.complexity,
            strength=c.strength or 0,
            resilience=c.resilience or 0,
            integrity=c.integrity or 0,
            extent=c.extent or 0,
            size=c.size or 0,
            price=price,
            value=sum(weight(tiers[i]) for i in price.named),
            produces=tuple(self.identity(n) for n in c.produces),
            maintenance=maintenance,
            abilities=abilities,
            text=c.text,
        )


_KIND_NAMES = ("triggered", "activated", "transactional", "static")


def load_card_set(data: Any) -> CardSet:
    """The card set ``data`` (parsed JSON) holds; :class:`CardDataError` at the first fault."""
    parsed: S.CardSet = S.parse_model(S.CardSet, data, "card set")
    compiler = _Compiler(parsed)
    compiler.where = f"card set {parsed.name!r}"
    names = [i.name for i in parsed.identities]
    if len(set(names)) != len(names):
        raise compiler.fail("an identity is named twice")
    cards: list[CardDef] = []
    by_name: dict[str, int] = {}
    for c in parsed.cards:
        compiler.where = f"card set {parsed.name!r} card {c.name!r}"
        if c.name in by_name:
            raise compiler.fail("the name is used twice")
        by_name[c.name] = len(cards)
        cards.append(compiler.card(c))
    return CardSet(parsed.name, tuple(names), compiler.tiers, tuple(cards), by_name, data)
