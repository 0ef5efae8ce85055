"""Cards, packs and their exact composition.

Codes are rank + suit: ranks ``A 2 3 4 5 6 7 8 9 T J Q K`` (``10`` accepted on input for ``T``),
suits ``S`` pique, ``H`` cœur, ``D`` carreau, ``C`` trèfle.

>>> card("10h")
Card(rank=<Rank.TEN: 'T'>, suit=<Suit.HEARTS: 'H'>)
>>> str(card("10h")), card("QS").colour
('TH', <Colour.BLACK: 'black'>)
>>> len(SIXAIN), SIXAIN[card("AS")]
(312, 6)
>>> rank("10"), rank("q")
(<Rank.TEN: 'T'>, <Rank.QUEEN: 'Q'>)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cached_property
from operator import attrgetter
from typing import Any, cast

from casino.games.errors import ForeignCard, IllegalCard, IllegalRank, gettext_noop


class Colour(Enum):
    RED = "red"
    BLACK = "black"


class Suit(Enum):
    # Members are singletons, so hashing by identity is exact; Enum's own hash (of the name) is a
    # Python call, and every card is hashed each time a pack is checked or counted.
    __hash__ = object.__hash__

    SPADES = "S"
    HEARTS = "H"
    DIAMONDS = "D"
    CLUBS = "C"

    @property
    def colour(self) -> Colour:
        return Colour.RED if self in (Suit.HEARTS, Suit.DIAMONDS) else Colour.BLACK


class Rank(Enum):
    __hash__ = object.__hash__  # as Suit's

    ACE = "A"
    TWO = "2"
    THREE = "3"
    FOUR = "4"
    FIVE = "5"
    SIX = "6"
    SEVEN = "7"
    EIGHT = "8"
    NINE = "9"
    TEN = "T"
    JACK = "J"
    QUEEN = "Q"
    KING = "K"

    @property
    def is_figure(self) -> bool:
        return self in (Rank.JACK, Rank.QUEEN, Rank.KING)

    @property
    def pips(self) -> int:
        """Face value before the règlement's rule for figures: ace 1, 2..10, figures 10."""
        return min(10, RANKS.index(self) + 1)


RANKS: tuple[Rank, ...] = tuple(Rank)
SUITS: tuple[Suit, ...] = tuple(Suit)


@dataclass(frozen=True, eq=False, init=False)
class Card:
    """One of the 52 cards. There is one ``Card`` object per rank and suit (``Card(r, s)`` is
    that object), so a card equals only itself and hashes by identity, both in C: a dataclass's
    ``__eq__`` and ``__hash__`` are Python calls, and the engines compare and hash a card at
    every card dealt, checked or played (issue 17)."""

    rank: Rank
    suit: Suit

    def __new__(cls, rank: Rank, suit: Suit) -> Card:
        try:
            return _ONE_OF_EACH[rank, suit]
        except (KeyError, TypeError):
            raise TypeError(f"a card is a Rank and a Suit, not {rank!r} and {suit!r}") from None

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return card, (self.code,)  # a copy or an unpickled card is the one card too

    def __str__(self) -> str:
        return self.code

    @cached_property
    def code(self) -> str:
        """The card's code, rank + suit (``TH``): worked out once, as records write it often."""
        return self.rank.value + self.suit.value

    @property
    def colour(self) -> Colour:
        return self.suit.colour


def card(code: str) -> Card:
    """The card of a code; ``IllegalCard`` names what is wrong."""
    if isinstance(code, str) and code in _BY_CODE:  # a canonical code, as every record writes it
        return _BY_CODE[code]
    if not isinstance(code, str):
        raise IllegalCard(
            gettext_noop("une carte est un texte comme 'KS', pas %(code)r"), code=code
        )
    text = code.strip().upper()
    if text.startswith("10"):
        text = "T" + text[2:]
    if len(text) != 2:
        raise IllegalCard(
            gettext_noop(
                "%(code)r n'est pas une carte (rang + couleur, par exemple 'KS', 'TH', '10D')"
            ),
            code=code,
        )
    try:
        return Card(Rank(text[0]), Suit(text[1]))
    except ValueError:
        raise IllegalCard(
            gettext_noop("%(code)r n'est pas une carte (rangs A23456789TJQK, couleurs SHDC)"),
            code=code,
        ) from None


def rank(code: str) -> Rank:
    """The rank of a code (Pharao's stakes are on ranks); ``IllegalRank`` names what is wrong."""
    text = code.strip().upper() if isinstance(code, str) else None
    if text == "10":
        text = "T"
    try:
        return Rank(text)
    except ValueError:
        raise IllegalRank(
            gettext_noop("%(code)r n'est pas un rang (A 2 3 4 5 6 7 8 9 T J Q K, ou 10)"),
            code=code,
        ) from None


_code = attrgetter("code")  # a card's code, fetched in C


def _made(r: Rank, s: Suit) -> Card:
    made = object.__new__(Card)
    object.__setattr__(made, "rank", r)  # frozen: set as the dataclass's own __init__ sets
    object.__setattr__(made, "suit", s)
    return made


_ONE_OF_EACH: dict[tuple[Rank, Suit], Card] = {(r, s): _made(r, s) for s in SUITS for r in RANKS}
ONE_PACK: tuple[Card, ...] = tuple(_ONE_OF_EACH.values())
_BY_CODE = {str(c): c for c in ONE_PACK}


def cards_of_codes(codes: Iterable[Any]) -> list[Card] | None:
    """The cards of ``codes`` when each is a card's code as records write it (``KS``, ``TH``),
    looked up at once (a replayed sixain is 312 of them); None otherwise, when ``card`` is to
    read them one by one and name the fault.

    >>> [str(c) for c in cards_of_codes(["KS", "TH"])], cards_of_codes(["KS", "10H"])
    (['KS', 'TH'], None)
    """
    try:
        found = list(map(_BY_CODE.get, codes))
    except TypeError:  # a value that cannot be a key (a list, an object): not a code
        return None
    return cast(list[Card], found) if all(found) else None


@dataclass(frozen=True)
class Composition:
    """What a sealed pack holds, card by card: 1 pack of 52, or a sixain of 6 x 52."""

    counts: Mapping[Card, int]

    @classmethod
    def packs(cls, n: int) -> Composition:
        if not 1 <= n <= 8:
            raise ValueError(f"a shoe holds 1 to 8 packs, not {n}")
        return cls({c: n for c in ONE_PACK})

    def __getitem__(self, c: Card) -> int:
        return self.counts.get(c, 0)

    def __len__(self) -> int:
        return sum(self.counts.values())

    @cached_property
    def cards(self) -> tuple[Card, ...]:
        """Every card, in a fixed order (pack order, then repeated)."""
        return tuple(c for c in ONE_PACK for _ in range(self[c]))

    @cached_property
    def _counts_by_code(self) -> dict[str, int]:
        return {c.code: n for c, n in self.counts.items()}

    def check_contains(self, laid: Iterable[Card], *, where: str = "cards") -> None:
        """Refuse a sequence this pack cannot hold: a card more often than the pack has it."""
        laid = list(laid)
        # Counted at once first, by code: equal cards have equal codes, and a code is hashed in C
        # where a Card's dataclass hash is a Python call (a sixain is 312 of them). Walked card by
        # card only to name the card and the index at which it came once too often.
        holds = self._counts_by_code
        if all(n <= holds.get(code, 0) for code, n in Counter(map(_code, laid)).items()):
            return
        seen: Counter[Card] = Counter()
        for index, c in enumerate(laid):
            seen[c] += 1
            if seen[c] > self[c]:
                raise ForeignCard(
                    gettext_noop(
                        "%(card)s paraît %(seen)s fois ; le jeu la contient %(holds)s fois"
                    ),
                    where=f"{where}[{index}]",
                    card=str(c),
                    seen=seen[c],
                    holds=self[c],
                )

    def remaining(self, laid: Iterable[Card]) -> Counter[Card]:
        left = Counter(self.counts)
        left.subtract(Counter(laid))
        return left

    def codes_left(self, laid: Mapping[str, int]) -> list[str]:
        """The codes of the cards left once those ``laid`` (counted by code) are out, in pack
        order, each as often as it is left: ``remaining`` by code, hashed in C."""
        return [
            code for code, n in self._counts_by_code.items() for _ in range(n - laid.get(code, 0))
        ]


def check_whole_pack(cards: Sequence[Card], *, repeated: str, count: str) -> None:
    """A whole single pack (Pharao's taille, Alliance's deal): 52 distinct cards. ``ForeignCard``
    names the first repeated card at its later index (message ``repeated``, with ``%(card)s``),
    then a count other than 52 (``count``, with ``%(count)s``): each game says it in its words."""
    # Counted at once first, by code (hashed in C, where a Card's hash is a Python call); walked
    # card by card only to name the fault.
    if len(cards) == len(ONE_PACK) and len(set(map(_code, cards))) == len(ONE_PACK):
        return
    seen: set[Card] = set()
    for index, c in enumerate(cards):
        if c in seen:
            raise ForeignCard(repeated, where=f"cards[{index}]", card=str(c))
        seen.add(c)
    if len(cards) != len(ONE_PACK):
        raise ForeignCard(count, where="cards", count=len(cards))


SINGLE_PACK = Composition.packs(1)
SIXAIN = Composition.packs(6)
