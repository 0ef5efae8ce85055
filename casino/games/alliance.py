"""Alliance: the cercle game of four to six players (RULES.md §3). The house does not bank it: it
checks each deal card by card and call by call, and settles the marks between the players.

RULES.md §3 is the specification, REPLAY.md's Alliance section its exact reading; each function
cites the rule it implements. As for the other games, the pieces are separate so that the floor can
follow a deal as it happens (``AllianceDeal``: "whose call or card is next, what may they play, what
does it settle?") while the replay plays whole deals (``play_deal``) through the same code.

>>> from casino.games.cards import ONE_PACK
>>> deal = AllianceDeal(("ana", "ben", "carl", "dora"))
>>> for c in ONE_PACK:
...     _ = deal.receive(c)
>>> deal.table.up, deal.couleur, deal.next_caller
(Card(rank=<Rank.KING: 'K'>, suit=<Suit.SPADES: 'S'>), <Suit.SPADES: 'S'>, 'ana')
>>> [c.value for c in deal.legal_calls()]
['pass', 'alliance', 'lever', 'solo']
>>> for c in ("pass", "pass", "pass", "pass"):
...     _ = deal.call(Call(c))
>>> deal.declarer, deal.game, deal.forced
('ana', <Game.LEVER: 'lever'>, True)

Readings (where RULES.md and REPLAY.md leave a sentence open, the choice made here; each has a
golden file under ``tests/data/replay/alliance/`` or a test):

- A lever's king is "judged on his hand after the take": the hand he plays, after the take *and*
  the discard. Only so can the called card lie "among the discards" as 3.3 foresees.
- ``hold``: the Vorhand may hold on any turn of hers when another player holds the highest game
  and she has never passed. Turns go round, so her turn after being overbid is always the first.
- The ally below a called card that lies: the next lower card of that suit (in the suit's order of
  3.4, the trump order when the suit is trumps) held by another player than the declarer; cards
  on the table, discarded, or in the declarer's hand are passed over.
- In a résistance "a neutral with the Fahne in his tricks" wins even when he is outside the tie.
- Payments of a neutral who wins: the 4 marks are ``neutral``, the honours in his tricks
  ``honours`` (REPLAY.md's kinds).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Literal, NamedTuple

from casino.games.cards import ONE_PACK, Card, Colour, Rank, Suit, card, check_whole_pack
from casino.games.errors import (
    BadCall,
    BadContract,
    BadTricks,
    ForeignCard,
    IllegalDeal,
    MustFollowSuit,
    NotInHand,
    gettext_noop,
)
from casino.games.reglement import Reglement

# --- players, the deal ----------------------------------------------------------------------------

# Players -> (rounds, cards per packet) (RULES.md 3.1); each round ends with one table card.
ROUNDS: dict[int, tuple[int, int]] = {4: (4, 3), 5: (2, 5), 6: (4, 2)}
TRICKS: dict[int, int] = {4: 12, 5: 10, 6: 8}
TO_WIN: dict[int, int] = {4: 7, 5: 6, 6: 5}
FIRST_SIX = 6  # the first-six bonus counts tricks 1 to 6 for every number of players (3.6)
TABLE = -1  # the seat of a table card in the dealing plan


def dealing_plan(players: int) -> tuple[int, ...]:
    """For each of the 52 cards in dealing order, the seat that receives it (``TABLE``: the table).

    >>> plan = dealing_plan(4)
    >>> plan[:4], plan[12], plan.count(TABLE)
    ((0, 0, 0, 1), -1, 4)
    """
    if players not in ROUNDS:
        raise ValueError(f"Alliance is played by 4, 5 or 6, not {players}")
    rounds, packet = ROUNDS[players]
    plan: list[int] = []
    for _ in range(rounds):
        for seat in range(players):
            plan.extend([seat] * packet)
        plan.append(TABLE)
    assert len(plan) == len(ONE_PACK)
    return tuple(plan)


@dataclass(frozen=True)
class Table:
    """The table cards: the first face up (its suit is the couleur), the others face down."""

    up: Card
    down: tuple[Card, ...]

    @property
    def cards(self) -> tuple[Card, ...]:
        return (self.up, *self.down)


def deal(cards: Sequence[Card], players: int) -> tuple[tuple[tuple[Card, ...], ...], Table]:
    """The hands (in the order received) and the table of a pack dealt by RULES.md 3.1.

    >>> hands, table = deal(ONE_PACK, 5)
    >>> len(hands[0]), [str(c) for c in table.cards]
    (10, ['KH', 'KC'])
    """
    hands: list[list[Card]] = [[] for _ in range(players)]
    table: list[Card] = []
    for c, seat in zip(cards, dealing_plan(players), strict=True):
        (table if seat == TABLE else hands[seat]).append(c)
    return tuple(tuple(h) for h in hands), Table(table[0], tuple(table[1:]))


# --- calls and games ------------------------------------------------------------------------------


class Game(Enum):
    """The games, lowest first (RULES.md 3.2)."""

    ALLIANCE = "alliance"
    LEVER = "lever"
    SOLO = "solo"

    @property
    def level(self) -> int:
        return _LEVELS[self]


_LEVELS = {Game.ALLIANCE: 1, Game.LEVER: 2, Game.SOLO: 3}


class Call(Enum):
    PASS = "pass"
    ALLIANCE = "alliance"
    LEVER = "lever"
    SOLO = "solo"
    HOLD = "hold"

    @property
    def game(self) -> Game | None:
        """The game this call bids, None for ``pass`` and ``hold``."""
        return None if self in (Call.PASS, Call.HOLD) else Game(self.value)


# --- card order, the Fahne, the figures ------------------------------------------------------------

_TRUMP_ORDER = "AKQJT98765432"
_RED_ORDER = "KQJAT98765432"
_BLACK_ORDER = "KQJT98765432A"


def suit_order(suit: Suit, trumps: Suit | None) -> tuple[Card, ...]:
    """The cards of ``suit``, highest first (RULES.md 3.4): in trumps A K Q J T 9 … 2; outside,
    red K Q J A T 9 … 2, black K Q J T 9 … 2 A.

    >>> [str(c) for c in suit_order(Suit.CLUBS, Suit.HEARTS)][:4]
    ['KC', 'QC', 'JC', 'TC']
    """
    if suit is trumps:
        order = _TRUMP_ORDER
    elif suit.colour is Colour.RED:
        order = _RED_ORDER
    else:
        order = _BLACK_ORDER
    return tuple(Card(Rank(r), suit) for r in order)


@cache
def strengths(trumps: Suit) -> Mapping[Card, int]:
    """Each card's place in its suit's order under ``trumps`` (higher wins; 13 is the top)."""
    table: dict[Card, int] = {}
    for suit in Suit:
        for index, c in enumerate(suit_order(suit, trumps)):
            table[c] = 13 - index
    return table


def _revokes(c: Card, led: Suit, hand: Sequence[Card]) -> bool:
    """``c`` does not follow the suit led though its player's ``hand`` holds it (RULES.md 3.4:
    follow suit when you can; nobody is obliged to trump)."""
    return c.suit is not led and any(h.suit is led for h in hand)


def trick_winner(cards: Sequence[Card], trumps: Suit) -> int:
    """The index in ``cards`` (the order played) of the card that wins the trick: the highest
    trump, else the highest card of the suit led (RULES.md 3.4).

    >>> trick_winner([card("7H"), card("AH"), card("2S"), card("KH")], Suit.CLUBS)
    3
    >>> trick_winner([card("7H"), card("AH"), card("2S"), card("KH")], Suit.SPADES)
    2
    """
    strength = strengths(trumps)
    best = 0
    for index, c in enumerate(cards[1:], start=1):
        top = cards[best]
        if c.suit is top.suit:
            if strength[c] > strength[top]:
                best = index
        elif c.suit is trumps:
            best = index  # the first trump on a trick led in another suit
    return best


def fahne(trumps: Suit) -> Card:
    """The Fahne (flag): the 3 of trumps when trumps are black, the 9 when red (RULES.md 3.4).

    >>> str(fahne(Suit.CLUBS)), str(fahne(Suit.DIAMONDS))
    ('3C', '9D')
    """
    return Card(Rank.THREE if trumps.colour is Colour.BLACK else Rank.NINE, trumps)


def figures(trumps: Suit, honours: Mapping[str, int]) -> dict[Card, int]:
    """The figures (honours) and their values: the Fahne and the king, queen and jack of trumps
    (RULES.md 3.4, 3.6; ``alliance_honours``)."""
    return {
        fahne(trumps): honours["fahne"],
        Card(Rank.JACK, trumps): honours["J"],
        Card(Rank.QUEEN, trumps): honours["Q"],
        Card(Rank.KING, trumps): honours["K"],
    }


_CALLED_RANKS = tuple(Rank(r) for r in "KQJT98765432A")


def called_rank(hand: Iterable[Card]) -> Rank:
    """The rank a declarer calls: the first of K, Q, J, T, 9 … of which he does not hold all four
    (RULES.md 3.3).

    >>> called_rank([card("KS"), card("KH"), card("KD"), card("KC"), card("2S")])
    <Rank.QUEEN: 'Q'>
    """
    held = [c.rank for c in hand]
    for r in _CALLED_RANKS:
        if held.count(r) < 4:
            return r
    raise AssertionError("no hand holds all 52 cards")


# --- contracts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AllianceContract:
    """An alliance: trumps named, a card called (RULES.md 3.3)."""

    trumps: Suit
    called: Card


@dataclass(frozen=True)
class LeverContract:
    """A lever: the face-down table card turned (1-based, in dealing order) gives trumps; with
    ``take`` the table cards go to the declarer's hand and ``discard`` (as many) lie aside."""

    turn: int
    called: Card
    take: bool = False
    discard: tuple[Card, ...] = ()


@dataclass(frozen=True)
class SoloContract:
    """A solo: trumps named; ``resistance`` the opponent who declared it, or None."""

    trumps: Suit
    resistance: str | None = None


Contract = AllianceContract | LeverContract | SoloContract

PaymentKind = Literal["game", "honours", "bonus", "resistance", "neutral", "both_lose", "figure"]
KINDS: tuple[PaymentKind, ...] = (
    "game",
    "honours",
    "bonus",
    "resistance",
    "neutral",
    "both_lose",
    "figure",
)


# --- results --------------------------------------------------------------------------------------


class Trick(NamedTuple):  # made for every trick: a NamedTuple, as ``Played``
    number: int  # 1-based
    leader: str
    cards: tuple[Card, ...]
    players: tuple[str, ...]  # who played each card
    winner: str


@dataclass(frozen=True)
class Payment:
    payer: str
    payee: str
    marks: int
    kind: PaymentKind


@dataclass(frozen=True)
class Outcome:
    """What a deal played out settles (RULES.md 3.5, 3.6; REPLAY.md, Alliance)."""

    players: tuple[str, ...]
    hands: tuple[tuple[Card, ...], ...]
    table: Table
    couleur: Suit
    declarer: str
    game: Game
    forced: bool
    trumps: Suit
    called: Card | None
    ally: str | None
    resister: str | None
    neutrals: tuple[str, ...]
    discards: tuple[Card, ...]
    tricks: tuple[Trick, ...]
    taken: dict[str, int]
    fahne_with: str | None
    winners: tuple[str, ...]
    payments: tuple[Payment, ...]
    marks: dict[str, int]
    fee: int
    money: dict[str, int]

    @property
    def fahne(self) -> Card:
        return fahne(self.trumps)


@dataclass(frozen=True)
class Called:
    """The answer to a call: whose call is next (None once the auction is over), and when over,
    the declarer and his game."""

    call: Call
    caller: str
    next_caller: str | None
    ended: bool
    declarer: str | None
    game: Game | None
    forced: bool


class Played(NamedTuple):  # made for every card: a NamedTuple, three times cheaper to build
    """The answer to a card: who played it, the trick it completed (None in mid-trick), who plays
    next (None after the last trick), and the outcome of the deal after its last card."""

    card: Card
    player: str
    trick: Trick | None
    next_player: str | None
    outcome: Outcome | None = None


class Phase(Enum):
    DEALING = "dealing"
    AUCTION = "auction"
    CONTRACT = "contract"
    PLAY = "play"
    OVER = "over"


# --- one deal, card by card and call by call -------------------------------------------------------


class AllianceDeal:
    """One deal at the table: the 52 cards received one at a time (RULES.md 3.1), the calls of the
    auction (3.2), the declarer's contract (3.3), then every card of every trick (3.4); the last
    card settles the deal (3.5, 3.6).

    What the rules refuse raises an ``AllianceFault`` naming the rule, its ``where`` as the replay
    names it (``auction[3]``, ``contract.called``, ``tricks[4][2]``), and changes nothing.
    """

    def __init__(
        self, players: Sequence[str], reglement: Reglement | None = None, *, mark_value: int = 0
    ) -> None:
        if len(players) not in ROUNDS:
            raise ValueError(f"Alliance is played by 4, 5 or 6, not {len(players)}")
        if len(set(players)) != len(players):
            raise ValueError(f"the players {list(players)} are not distinct")
        if isinstance(mark_value, bool) or not isinstance(mark_value, int) or mark_value < 0:
            raise ValueError(f"a mark value is an integer >= 0, not {mark_value!r}")
        self.players = tuple(players)
        self.n = len(players)
        self.mark_value = mark_value  # the table's mark, in minor units (the money of 3.6)
        self.reglement = reglement or Reglement()
        self._plan = dealing_plan(self.n)
        self.received: list[Card] = []
        self._seen: set[Card] = set()
        self.hands: list[list[Card]] = [[] for _ in players]
        self._table: list[Card] = []
        # the auction
        self.calls: list[Call] = []
        self._highest: Game | None = None
        self._declarer: int | None = None
        self._passed: set[int] = set()
        self._passes = 0
        self.forced = False
        self._auction_over = False
        # the contract
        self.contract: Contract | None = None
        self.trumps: Suit | None = None
        self.ally: int | None = None
        self.resister: int | None = None
        self.discards: tuple[Card, ...] = ()
        self._dealt: tuple[tuple[Card, ...], ...] = ()
        self._strength: Mapping[Card, int] = {}
        # the play
        self.tricks: list[Trick] = []
        self._current: list[Card] = []
        self._leader = 0
        self._won: list[list[Card]] = [[] for _ in players]
        self._played_by: dict[Card, int] = {}
        self.outcome: Outcome | None = None

    # -- where the deal stands

    @property
    def phase(self) -> Phase:
        if len(self.received) < len(ONE_PACK):
            return Phase.DEALING
        if not self._auction_over:
            return Phase.AUCTION
        if self.contract is None:
            return Phase.CONTRACT
        if self.outcome is None:
            return Phase.PLAY
        return Phase.OVER

    @property
    def table(self) -> Table | None:
        """The table cards as dealt, once all are dealt."""
        if self.phase is Phase.DEALING:
            return None
        return Table(self._table[0], tuple(self._table[1:]))

    @property
    def couleur(self) -> Suit | None:
        """The couleur suit: the suit of the face-up table card, once it is dealt."""
        return self._table[0].suit if self._table else None

    @property
    def next_receiver(self) -> str | Literal["table"] | None:
        """Who receives the next card of the deal: a player, ``"table"``, or None when dealt."""
        if len(self.received) == len(ONE_PACK):
            return None
        seat = self._plan[len(self.received)]
        return "table" if seat == TABLE else self.players[seat]

    @property
    def declarer(self) -> str | None:
        return None if self._declarer is None else self.players[self._declarer]

    @property
    def game(self) -> Game | None:
        return self._highest

    # -- the deal

    def receive(self, c: Card) -> str | Literal["table"]:
        """The next card of the pack goes where RULES.md 3.1 sends it; returns who received it."""
        position = len(self.received)
        if position == len(ONE_PACK):  # the phase is past dealing (``phase``, asked directly)
            raise IllegalDeal(
                gettext_noop("les 52 cartes sont données : %(card)s est de trop"), card=str(c)
            )
        if c in self._seen:
            raise ForeignCard(
                gettext_noop(
                    "%(card)s est déjà donnée : un jeu de 52 cartes ne la contient qu'une fois"
                ),
                where=f"cards[{position}]",
                card=str(c),
            )
        seat = self._plan[position]
        self.received.append(c)
        self._seen.add(c)
        if seat == TABLE:
            self._table.append(c)
        else:
            self.hands[seat].append(c)
        if position == len(ONE_PACK) - 1:
            self._dealt = tuple(tuple(h) for h in self.hands)
        return "table" if seat == TABLE else self.players[seat]

    def _receive_pack(self, cards: Sequence[Card]) -> None:
        """A whole pack checked whole (``play_deal``), into a deal not yet dealt: where 52
        ``receive`` send its cards, but their card-by-card checks, which 52 distinct cards pass."""
        for c, seat in zip(cards, self._plan, strict=True):
            (self._table if seat == TABLE else self.hands[seat]).append(c)
        self.received.extend(cards)
        self._seen.update(cards)
        self._dealt = tuple(tuple(h) for h in self.hands)

    # -- the auction (RULES.md 3.2)

    @property
    def next_caller(self) -> str | None:
        if self.phase is not Phase.AUCTION:
            return None
        return self.players[len(self.calls) % self.n]

    def legal_calls(self) -> tuple[Call, ...]:
        """The calls the player whose turn it is may make, ``pass`` first."""
        if self.phase is not Phase.AUCTION:
            return ()
        seat = len(self.calls) % self.n
        return tuple(c for c in Call if self._why_not(seat, c) is None)

    def _why_not(self, seat: int, c: Call) -> tuple[str, dict[str, object]] | None:
        """Why ``c`` is not a legal call for ``seat`` now (a message and its parameters)."""
        game = c.game
        if game is not None:
            if self._highest is not None and game.level <= self._highest.level:
                return (
                    gettext_noop("%(call)s n'est pas plus haut que %(highest)s déjà annoncé"),
                    {"call": c.value, "highest": self._highest.value},
                )
            return None
        if c is Call.HOLD:
            if seat != 0:
                return (
                    gettext_noop("seule la Vorhand (%(vorhand)s) peut tenir (hold)"),
                    {"vorhand": self.players[0]},
                )
            if 0 in self._passed:
                return (gettext_noop("la Vorhand a passé : elle ne peut plus tenir"), {})
            if self._declarer is None or self._declarer == 0:
                return (gettext_noop("la Vorhand ne peut tenir qu'après avoir été surenchérie"), {})
        return None

    def call(self, c: Call) -> Called:
        """The next call of the auction, by the player whose turn it is (RULES.md 3.2).

        Refused (``BadCall``): a game not higher than the highest so far; ``hold`` by anyone but
        the Vorhand, after she passed, or when she is not overbid; any call after the end.
        """
        position = len(self.calls)
        where = f"auction[{position}]"
        if self.phase is not Phase.AUCTION:
            raise BadCall(
                gettext_noop("l'enchère est finie : l'appel %(call)s vient après sa fin"),
                where=where,
                call=c.value,
            )
        seat = position % self.n
        why = self._why_not(seat, c)
        if why is not None:
            template, params = why
            raise BadCall(template, where=where, **params)
        self.calls.append(c)
        game = c.game
        if c is Call.PASS:
            self._passed.add(seat)
            self._passes += 1
            if self._highest is None and self._passes == self.n:
                # RULES.md 3.2: all pass in the first round, the Vorhand must play a lever.
                self._highest, self._declarer, self.forced = Game.LEVER, 0, True
                self._auction_over = True
            elif self._highest is not None and self._passes == self.n - 1:
                self._auction_over = True
        elif c is Call.HOLD:
            self._declarer, self._passes = 0, 0
        else:
            assert game is not None
            self._highest, self._declarer, self._passes = game, seat, 0
        over = self._auction_over
        return Called(
            c,
            self.players[seat],
            self.next_caller,
            over,
            self.declarer if over else None,
            self._highest if over else None,
            self.forced,
        )

    def auction_unfinished(self) -> BadCall:
        """The fault of an auction that stopped before its end (RULES.md 3.2: a fault of the
        auction as a whole)."""
        return BadCall(
            gettext_noop(
                "l'enchère s'arrête avant sa fin après %(calls)s appels : c'est au tour de "
                "%(player)s"
            ),
            where="auction",
            calls=len(self.calls),
            player=self.next_caller,
        )

    # -- the contract (RULES.md 3.3)

    def declare(self, contract: Contract) -> Contract:
        """The declarer's contract, checked against his game and his cards (RULES.md 3.3)."""
        if self.phase is not Phase.CONTRACT:
            raise IllegalDeal(
                gettext_noop("pas de contrat maintenant (la donne est en phase %(phase)s)"),
                phase=self.phase.value,
            )
        assert self._declarer is not None
        assert self._highest is not None
        declarer = self._declarer
        game = self._highest
        expected = {
            Game.ALLIANCE: AllianceContract,
            Game.LEVER: LeverContract,
            Game.SOLO: SoloContract,
        }[game]
        if not isinstance(contract, expected):
            raise BadContract(
                gettext_noop("le jeu est %(game)s : ce contrat est celui d'un autre jeu"),
                where="contract",
                game=game.value,
            )
        hand = list(self.hands[declarer])
        discards: tuple[Card, ...] = ()
        ally: int | None = None
        resister: int | None = None
        if isinstance(contract, SoloContract):
            trumps = contract.trumps
            if contract.resistance is not None:
                if contract.resistance not in self.players:
                    raise BadContract(
                        gettext_noop("%(name)r n'est pas un joueur de cette donne"),
                        where="contract.resistance",
                        name=contract.resistance,
                    )
                resister = self.players.index(contract.resistance)
                if resister == declarer:
                    raise BadContract(
                        gettext_noop("le soliste %(name)s ne peut pas faire résistance à soi-même"),
                        where="contract.resistance",
                        name=contract.resistance,
                    )
        else:
            if isinstance(contract, LeverContract):
                down = self._table[1:]
                if not 1 <= contract.turn <= len(down):
                    raise BadContract(
                        gettext_noop(
                            "le lever retourne une des %(count)s cartes couvertes, pas la %(turn)se"
                        ),
                        where="contract.turn",
                        count=len(down),
                        turn=contract.turn,
                    )
                trumps = down[contract.turn - 1].suit
                hand, discards = self._take(hand, contract)
            else:
                trumps = contract.trumps
            rank = called_rank(hand)
            if contract.called.rank is not rank:
                raise BadContract(
                    gettext_noop(
                        "le déclarant doit appeler un %(rank)s (le premier rang dont il n'a pas "
                        "les quatre), pas %(card)s"
                    ),
                    where="contract.called",
                    rank=rank.value,
                    card=str(contract.called),
                )
            if contract.called in hand:
                raise BadContract(
                    gettext_noop("le déclarant tient %(card)s : il ne peut pas l'appeler"),
                    where="contract.called",
                    card=str(contract.called),
                )
            ally = self._ally(contract.called, declarer, trumps)
        self.contract = contract
        self.trumps = trumps
        self.discards = discards
        self.ally = ally
        self.resister = resister
        self.hands[declarer] = hand
        self._strength = strengths(trumps)
        return contract

    def _take(
        self, hand: list[Card], contract: LeverContract
    ) -> tuple[list[Card], tuple[Card, ...]]:
        """A lever's take: all the table cards into the hand, then as many discarded (3.3)."""
        if not contract.take:
            if contract.discard:
                raise BadContract(
                    gettext_noop("sans prise (take), le lever n'écarte rien"),
                    where="contract.discard",
                )
            return hand, ()
        taken = hand + self._table
        seen: set[Card] = set()
        for index, c in enumerate(contract.discard):
            if c not in taken:
                raise BadContract(
                    gettext_noop(
                        "%(card)s n'est ni dans la main du déclarant ni sur la table : il ne "
                        "peut pas l'écarter"
                    ),
                    where=f"contract.discard[{index}]",
                    card=str(c),
                )
            if c in seen:
                raise BadContract(
                    gettext_noop("%(card)s est écartée deux fois"),
                    where=f"contract.discard[{index}]",
                    card=str(c),
                )
            seen.add(c)
        if len(contract.discard) != len(self._table):
            raise BadContract(
                gettext_noop(
                    "après la prise, le lever écarte autant de cartes qu'il en a prises "
                    "(%(count)s), pas %(given)s"
                ),
                where="contract.discard",
                count=len(self._table),
                given=len(contract.discard),
            )
        return [c for c in taken if c not in seen], tuple(contract.discard)

    def _ally(self, called: Card, declarer: int, trumps: Suit) -> int | None:
        """The holder of the called card; when it lies (table or discards), the holder of the next
        lower card of its suit in another player's hand; None: the declarer plays alone (3.3)."""
        holder = {c: seat for seat, h in enumerate(self.hands) if seat != declarer for c in h}
        order = suit_order(called.suit, trumps)
        for c in order[order.index(called) :]:
            if c in holder:
                return holder[c]
        return None

    # -- the play (RULES.md 3.4)

    @property
    def cards_played(self) -> int:
        """The cards played so far in the deal, the trick in progress included."""
        return len(self._played_by)

    @property
    def next_player(self) -> str | None:
        seat = self._next_seat()
        return None if seat is None else self.players[seat]

    def _next_seat(self) -> int | None:
        # In play exactly while a contract stands and the deal is not settled (a contract is
        # declared only once the auction is over): asked twice a card, cheaper than ``phase``.
        if self.contract is None or self.outcome is not None:
            return None
        return (self._leader + len(self._current)) % self.n

    def legal_cards(self) -> tuple[Card, ...]:
        """The cards the player whose turn it is may play: the suit led when he holds it, else
        any card of his hand (nobody is obliged to trump)."""
        seat = self._next_seat()
        if seat is None:
            return ()
        hand = self.hands[seat]
        if self._current:
            led = self._current[0].suit
            following = tuple(c for c in hand if c.suit is led)
            if following:
                return following
        return tuple(hand)

    def _where(self, number: int) -> str:
        """Where the card being played stands in the replay's tricks (named only in a refusal)."""
        return f"tricks[{number}][{len(self._current)}]"

    def play(self, c: Card) -> Played:
        """The next card of the trick, by the player whose turn it is (RULES.md 3.4). The last card
        of a trick names its winner, who leads next; the last card of the deal settles it."""
        seat = self._next_seat()
        number = len(self.tricks)
        if seat is None:
            raise IllegalDeal(
                gettext_noop("aucune carte ne se joue maintenant (phase %(phase)s) : %(card)s"),
                phase=self.phase.value,
                card=str(c),
            )
        hand = self.hands[seat]
        try:
            at = hand.index(c)  # one scan of the hand: to check the card, then to take it out
        except ValueError:
            raise NotInHand(
                gettext_noop("%(player)s n'a pas %(card)s en main"),
                where=self._where(number),
                player=self.players[seat],
                card=str(c),
            ) from None
        if self._current:
            led = self._current[0].suit
            if _revokes(c, led, hand):
                raise MustFollowSuit(
                    gettext_noop(
                        "%(player)s doit fournir à %(suit)s (il en a) : %(card)s n'est pas permise"
                    ),
                    where=self._where(number),
                    player=self.players[seat],
                    suit=led.value,
                    card=str(c),
                )
        del hand[at]
        self._current.append(c)
        self._played_by[c] = seat
        if len(self._current) < self.n:  # the next seat plays next
            return Played(c, self.players[seat], None, self.players[(seat + 1) % self.n])
        trick = self._gather()
        return Played(c, self.players[seat], trick, self.next_player, self.outcome)

    def play_all(self, cards: Sequence[Card]) -> None:
        """Play ``cards`` in order, as ``play`` does one by one (a refused card raises, the cards
        before it played), but each whole trick at once, without an answer per card: a replayed
        deal, or the records of one replayed at every act."""
        at, n = 0, self.n
        while at < len(cards):
            if self._play_trick(cards[at : at + n]):
                at += n
            else:
                self.play(cards[at])
                at += 1

    def _play_trick(self, cards: Sequence[Card]) -> bool:
        """A whole trick, its cards in the order played, from its first card: what ``play`` does
        with each. A trick that ``play`` would refuse somewhere is left as it was (False), for
        ``play`` to name the fault card by card."""
        if self._current or len(cards) != self.n or self._next_seat() is None:
            return False
        leader, n, hands = self._leader, self.n, self.hands
        led = cards[0].suit
        for offset, c in enumerate(cards):
            hand = hands[(leader + offset) % n]
            if c not in hand or (offset and _revokes(c, led, hand)):
                return False
        for offset, c in enumerate(cards):
            seat = (leader + offset) % n
            hands[seat].remove(c)
            self._played_by[c] = seat
        self._current = list(cards)
        self._gather()
        return True

    def _gather(self) -> Trick:
        """The trick just completed goes to its winner, who leads next; the last one settles the
        deal."""
        assert self.trumps is not None
        cards = tuple(self._current)
        winner = (self._leader + trick_winner(cards, self.trumps)) % self.n
        order = self.players[self._leader :] + self.players[: self._leader]
        trick = Trick(
            len(self.tricks) + 1, self.players[self._leader], cards, order, self.players[winner]
        )
        self.tricks.append(trick)
        self._won[winner].extend(cards)
        self._current = []
        self._leader = winner
        if len(self.tricks) == TRICKS[self.n]:
            self.outcome = self._settle()
        return trick

    # -- who wins, what is paid (RULES.md 3.5, 3.6)

    def _settle(self) -> Outcome:
        assert self.trumps is not None
        assert self._declarer is not None
        assert self._highest
        r = self.reglement
        trumps = self.trumps
        names = self.players
        n = self.n
        taken = [len(w) // n for w in self._won]
        flag = fahne(trumps)
        fahne_seat = next((s for s in range(n) if flag in self._won[s]), None)
        honour = figures(trumps, r.alliance_honours)
        couleur = self._table[0].suit
        double = 2 if trumps is couleur else 1
        declarer = self._declarer
        owed: dict[tuple[int, int, PaymentKind], int] = {}

        def pay(payer: int, payee: int, kind: PaymentKind, marks: int) -> None:
            if marks:
                key = (payer, payee, kind)
                owed[key] = owed.get(key, 0) + marks * double

        def honours_of(seats: Iterable[int]) -> int:
            return sum(honour.get(c, 0) for s in seats for c in self._won[s])

        neutrals: tuple[int, ...] = ()
        if self.resister is None:
            side = {declarer} | ({self.ally} if self.ally is not None else set())
            others = set(range(n)) - side
            mine = sum(taken[s] for s in side)
            total = TRICKS[n]
            if mine >= TO_WIN[n]:
                wins = True
            elif 2 * mine == total:  # equal tricks: the Fahne, then the honours (3.5)
                wins = (
                    fahne_seat in side
                    if fahne_seat is not None
                    else honours_of(side) > honours_of(others)
                )
            else:
                wins = False
            winners = sorted(side if wins else others)
            losers = sorted(others if wins else side)
            key = "lever_forced" if self.forced else self._highest.value
            game_value = r.alliance_values[key]
            honours = honours_of(winners)
            first = [t.winner for t in self.tricks[:FIRST_SIX]]
            winning_names = {names[s] for s in winners}
            bonus = 0
            if all(w in winning_names for w in (t.winner for t in self.tricks)):
                bonus = r.alliance_bonuses["all"]
            elif all(w in winning_names for w in first):
                bonus = r.alliance_bonuses["first_six"]
            for loser in losers:
                for payee in winners:
                    pay(loser, payee, "game", game_value)
                    pay(loser, payee, "honours", honours)
                    pay(loser, payee, "bonus", bonus)
        else:
            resister = self.resister
            neutrals = tuple(s for s in range(n) if s not in (declarer, resister))
            most = max(taken)
            top = [s for s in range(n) if taken[s] == most]
            winner: int | None
            if len(top) == 1:
                winner = top[0]
            elif fahne_seat in top or fahne_seat in neutrals:
                winner = fahne_seat
            else:
                winner = None
            if winner in (declarer, resister):
                loser = resister if winner == declarer else declarer
                assert winner is not None
                pay(loser, winner, "resistance", 2 * r.alliance_values["solo"])
            elif winner is not None:
                for payer in (declarer, resister):
                    pay(payer, winner, "neutral", r.alliance_bonuses["neutral"])
                    pay(payer, winner, "honours", honours_of([winner]))
            else:
                paid: set[int] = set()
                for payer in (declarer, resister):
                    for step in range(1, n):
                        seat = (payer + step) % n
                        if seat in neutrals and seat not in paid:
                            pay(payer, seat, "both_lose", r.alliance_bonuses["both_lose"])
                            paid.add(seat)
                            break
            # The figure rule: a neutral who did not win is paid each figure in his tricks by
            # the player who played it, unless he played it himself.
            for neutral in neutrals:
                if neutral == winner:
                    continue
                for c in self._won[neutral]:
                    by = self._played_by[c]
                    if c in honour and by != neutral:
                        pay(by, neutral, "figure", honour[c])
            winners = [] if winner is None else [winner]
        kind_order = {k: i for i, k in enumerate(KINDS)}
        payments = tuple(
            Payment(names[payer], names[payee], marks, kind)
            for (payer, payee, kind), marks in sorted(
                owed.items(), key=lambda item: (item[0][0], item[0][1], kind_order[item[0][2]])
            )
        )
        net = dict.fromkeys(names, 0)
        for p in payments:
            net[p.payer] -= p.marks
            net[p.payee] += p.marks
        fee = r.cercle_fee
        contract = self.contract
        return Outcome(
            players=names,
            hands=self._dealt,
            table=Table(self._table[0], tuple(self._table[1:])),
            couleur=couleur,
            declarer=names[declarer],
            game=self._highest,
            forced=self.forced,
            trumps=trumps,
            called=None
            if isinstance(contract, SoloContract) or contract is None
            else contract.called,
            ally=None if self.ally is None else names[self.ally],
            resister=None if self.resister is None else names[self.resister],
            neutrals=tuple(names[s] for s in neutrals),
            discards=self.discards,
            tricks=tuple(self.tricks),
            taken={names[s]: taken[s] for s in range(n)},
            fahne_with=None if fahne_seat is None else names[fahne_seat],
            winners=tuple(names[s] for s in winners),
            payments=payments,
            marks=net,
            fee=fee,
            money={name: net[name] * self.mark_value - fee for name in names},
        )

    # -- the canonical text form of a deal in progress

    def to_json(self) -> str:
        """The deal as canonical JSON (sorted keys, no white space): the players, the cards
        received, the calls, the contract, the cards played. ``AllianceDeal.from_json(d.to_json(),
        r).to_json() == d.to_json()`` and the restored deal plays on exactly as the original (the
        règlement is recorded apart)."""
        data: dict[str, Any] = {
            "players": list(self.players),
            "mark_value": self.mark_value,
            "cards": [str(c) for c in self.received],
            "calls": [c.value for c in self.calls],
            "contract": None if self.contract is None else contract_dict(self.contract),
            "played": [str(c) for t in self.tricks for c in t.cards]
            + [str(c) for c in self._current],
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, reglement: Reglement | None = None) -> AllianceDeal:
        data = json.loads(text)
        again = cls(data["players"], reglement, mark_value=data["mark_value"])
        for code in data["cards"]:
            again.receive(card(code))
        for word in data["calls"]:
            again.call(Call(word))
        if data["contract"] is not None:
            again.declare(contract_from_dict(data["contract"]))
        for code in data["played"]:
            again.play(card(code))
        return again


def contract_dict(contract: Contract) -> dict[str, Any]:
    """A contract as REPLAY.md writes it (the inverse of ``contract_from_dict``)."""
    if isinstance(contract, AllianceContract):
        return {"trumps": contract.trumps.value, "called": str(contract.called)}
    if isinstance(contract, LeverContract):
        data: dict[str, Any] = {
            "turn": contract.turn,
            "take": contract.take,
            "called": str(contract.called),
        }
        if contract.take:
            data["discard"] = [str(c) for c in contract.discard]
        return data
    return {"trumps": contract.trumps.value, "resistance": contract.resistance}


def contract_from_dict(data: Mapping[str, Any]) -> Contract:
    if "turn" in data:
        return LeverContract(
            data["turn"],
            card(data["called"]),
            data.get("take", False),
            tuple(card(c) for c in data.get("discard", ())),
        )
    if "called" in data:
        return AllianceContract(Suit(data["trumps"]), card(data["called"]))
    return SoloContract(Suit(data["trumps"]), data.get("resistance"))


# --- whole deals ----------------------------------------------------------------------------------


def check_pack(cards: Sequence[Card]) -> None:
    """RULES.md 3.6: 52 distinct cards."""
    check_whole_pack(
        cards,
        repeated=gettext_noop(
            "%(card)s est déjà donnée : un jeu de 52 cartes ne la contient qu'une fois"
        ),
        count=gettext_noop("une donne d'Alliance a 52 cartes, pas %(count)s"),
    )


def check_tricks_count(tricks: Sequence[object], players: int) -> None:
    if len(tricks) != TRICKS[players]:
        raise BadTricks(
            gettext_noop("une donne à %(players)s joueurs a %(expected)s plis, pas %(count)s"),
            where="tricks",
            players=players,
            expected=TRICKS[players],
            count=len(tricks),
        )


def check_trick_length(index: int, trick: Sequence[object], players: int) -> None:
    if len(trick) != players:
        raise BadTricks(
            gettext_noop("le pli %(number)s a %(count)s cartes, pas une par joueur (%(players)s)"),
            where=f"tricks[{index}]",
            number=index + 1,
            count=len(trick),
            players=players,
        )


def play_deal(
    players: Sequence[str],
    cards: Sequence[Card],
    calls: Sequence[Call],
    contract: Contract,
    tricks: Sequence[Sequence[Card]],
    reglement: Reglement,
    *,
    mark_value: int = 0,
) -> Outcome:
    """Play a whole deal: the pack in dealing order, the auction, the contract, every trick in the
    order played (each starting with its leader). The first fault is raised, named as the replay
    names it; a deal played out returns its ``Outcome``.

    >>> from casino.games.simulator import simulate_alliance_deal
    >>> sim = simulate_alliance_deal(seed=3)
    >>> outcome = play_deal(
    ...     sim.players, sim.cards, sim.calls, sim.contract, sim.tricks, Reglement(), mark_value=100
    ... )
    >>> outcome == sim.outcome, sum(outcome.marks.values())
    (True, 0)
    """
    check_pack(cards)
    table = AllianceDeal(players, reglement, mark_value=mark_value)
    table._receive_pack(cards)
    for word in calls:
        table.call(word)
    if table.phase is Phase.AUCTION:
        raise table.auction_unfinished()
    table.declare(contract)
    check_tricks_count(tricks, len(players))
    for index, trick in enumerate(tricks):
        check_trick_length(index, trick, len(players))
        table.play_all(trick)
    assert table.outcome is not None
    return table.outcome


def payment_dict(p: Payment) -> dict[str, Any]:
    return {"from": p.payer, "to": p.payee, "marks": p.marks, "for": p.kind}


def render(outcome: Outcome) -> dict[str, Any]:
    """The output document of REPLAY.md, Alliance."""
    o = outcome
    return {
        "hands": {name: [str(c) for c in h] for name, h in zip(o.players, o.hands, strict=True)},
        "table": {"up": str(o.table.up), "down": [str(c) for c in o.table.down]},
        "couleur": o.couleur.value,
        "declarer": o.declarer,
        "game": o.game.value,
        "forced": o.forced,
        "trumps": o.trumps.value,
        "fahne": str(o.fahne),
        "called": None if o.called is None else str(o.called),
        "ally": o.ally,
        "resister": o.resister,
        "neutrals": list(o.neutrals),
        "tricks": [
            {
                "number": t.number,
                "leader": t.leader,
                "cards": [str(c) for c in t.cards],
                "winner": t.winner,
            }
            for t in o.tricks
        ],
        "taken": dict(o.taken),
        "fahne_with": o.fahne_with,
        "winners": list(o.winners),
        "payments": [payment_dict(p) for p in o.payments],
        "marks": dict(o.marks),
        "fee": o.fee,
        "money": dict(o.money),
    }


__all__ = [
    "AllianceContract",
    "AllianceDeal",
    "Call",
    "Contract",
    "Game",
    "LeverContract",
    "Outcome",
    "Payment",
    "SoloContract",
    "Trick",
    "play_deal",
    "render",
]
