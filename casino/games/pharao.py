"""Pharao (Faro): one 52-card pack, 26 draws, stakes on ranks, plié, marks, approvals.

RULES.md §2 is the specification, REPLAY.md's Pharao section its exact reading; each function cites
the rule it implements. As for Trente-et-Quarante, the pieces are separate so that a table terminal
can deal card by card and act by act (``TailleDeal``: "whose card is next, what does this draw
settle?") while the replay plays whole tailles (``play_taille``) through the same code.

>>> deal = TailleDeal(card("QS"))
>>> deal.place(Stake("p1", Rank.SEVEN, 100)).riding
100
>>> deal.next_side, deal.lay(card("3C")).settled
(<Side.BANK: 'bank'>, None)
>>> draw = deal.lay(card("7H")).settled
>>> draw.number, [(s.stake, s.outcome.value, s.paid) for s in draw.settlements]
(1, [('p1', 'won', 100)])
>>> deal.act(Action("p1", Act.PAROLI)).stake.riding
200

Readings (where REPLAY.md leaves a sentence open, the choice made here; each has a golden file
under ``tests/data/replay/pharao/``):

- On draw 26 under ``pharao_last_card: dead``, a stake on the rank of both cards (the left card and
  the bottom card) loses to the left card and gets no ``dead`` line: a lost stake no longer stands
  (``reading_last_draw_both_cards_of_the_rank_lost_once``).
- A stake is exhausted-checked from what is known at the table: the cards dealt and the bottom
  card. With a whole pack this is REPLAY.md's "none of ``cards[2N-2 .. 50]``".
- "The stakes on the drawn ranks in the order the stakes were given" is the order of the stakes
  list, not the order of placing: a stake listed first but placed later settles first
  (``reading_lines_in_the_order_stakes_are_given``; ``play_taille`` sorts, ``TailleDeal`` settles
  in the order placed).
- A raise or a reduction keeps a pending win: a mark may still follow before the same draw, on the
  stake as it now stands (REPLAY.md: "after a raise or reduce";
  ``reading_raise_or_reduce_then_mark``).
- Stakes still standing after draw 26 are returned as the 26th card is laid (``Laid.end``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from fractions import Fraction
from itertools import pairwise
from typing import Any, Literal, NamedTuple

from casino.games.cards import Card, Rank, card, check_whole_pack, rank
from casino.games.errors import (
    BadMark,
    DrawInProgress,
    FalseParoli,
    ForeignCard,
    IllegalDeal,
    NotApproved,
    OverLimit,
    PharaoRefusal,
    RankExhausted,
    StakeIdTaken,
    StakeRefused,
    UnderLimit,
    UnknownStake,
    gettext_noop,
)
from casino.games.reglement import Reglement

DRAWS = 26  # a 52-card pack makes 26 draws: the taille
SIMPLE = "simple"


class Side(Enum):
    """Where a card of a draw is laid: left for the bank, right for the players."""

    BANK = "bank"
    PLAYERS = "players"


class Move(Enum):
    """How a winning card is bent (RULES.md §2, letting winnings ride)."""

    APPE = "appe"  # the winnings ride, the original stake is protected
    PAROLI = "paroli"  # everything on the card rides


class Act(Enum):
    """What a player (or the banker's approval) does to a standing stake between draws."""

    PAROLI = "paroli"
    APPE = "appe"
    COLLECT = "collect"
    WITHDRAW = "withdraw"
    REDUCE = "reduce"
    RAISE = "raise"

    __hash__ = object.__hash__  # as Rank's: members are singletons, Enum's hash a Python call

    @property
    def move(self) -> Move | None:
        """The mark's move for ``paroli`` and ``appe``, else None."""
        return _MOVES.get(self)


_MOVES = {Act.PAROLI: Move.PAROLI, Act.APPE: Move.APPE}


class Outcome(Enum):
    WON = "won"
    LOST = "lost"
    PLIE = "plie"
    DEAD = "dead"
    COLLECTED = "collected"
    WITHDRAWN = "withdrawn"
    REDUCED = "reduced"
    RETURNED = "returned"


# --- the marks table ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """A row of the marks table (``pharao_marks``): amounts in units of the original stake b."""

    name: str
    source: str | None  # the mark it is reached from, after a win there (None for simple)
    move: Move | None
    riding: int
    protected: int
    gain: int


def marks_of(reglement: Reglement) -> dict[str, Mark]:
    """The règlement's marks table, ``simple`` first.

    >>> marks = marks_of(Reglement())
    >>> marks["15"].riding, marks["15"].protected, marks["30"].gain
    (8, 0, 30)
    """
    return {
        name: Mark(name, source, Move(move) if move else None, riding, protected, gain)
        for name, (source, move, riding, protected, gain) in reglement.pharao_marks.items()
    }


def transition(marks: Mapping[str, Mark], mark: str, move: Move) -> Mark | None:
    """The mark reached by ``move`` after a win at ``mark``, or None when the table has none.

    >>> transition(marks_of(Reglement()), "7", Move.PAROLI).name
    '15'
    """
    for row in marks.values():
        if row.source == mark and row.move is move:
            return row
    return None


# --- stakes -------------------------------------------------------------------------------------


# The records made for every card, draw and stake (stakes, settlements, draws, laid cards, the
# answers to acts, a stake as it stands after each draw and act) are NamedTuples, as
# Trente-et-Quarante's: immutable and typed as a frozen dataclass is, but built three times
# faster.
class Stake(NamedTuple):
    """A stake as placed: ``amount`` on ``rank`` (the suit of the player's book is irrelevant)."""

    id: str
    rank: Rank
    amount: int


class Standing(NamedTuple):
    """A stake as it stands on the layout.

    ``base`` is the original stake b as it stands (after raises, reductions, or a plié); the mark
    says what rides and what is protected, in minor units here. ``won_on`` is the draw it last won
    and ``marked`` whether a mark has used that win up (one mark per win).
    """

    id: str
    rank: Rank
    base: int
    mark: str = SIMPLE
    riding: int = 0
    protected: int = 0
    won_on: int | None = None
    marked: bool = False

    @classmethod
    def placed(cls, stake: Stake) -> Standing:
        return cls(stake.id, stake.rank, stake.amount, SIMPLE, stake.amount, 0)

    def marked_as(self, row: Mark) -> Standing:
        """The stake after a mark reached ``row`` of the table: its win used up."""
        b = self.base
        return Standing(
            self.id, self.rank, b, row.name, row.riding * b, row.protected * b, self.won_on, True
        )

    def rebased(self, base: int) -> Standing:
        """The stake after a raise or a reduction: ``base`` all riding, nothing protected, a
        pending win kept."""
        return Standing(self.id, self.rank, base, self.mark, base, 0, self.won_on, self.marked)

    def won(self, draw: int) -> Standing:
        """The stake after its card won at ``draw``: as it stood, the win not yet used by a
        mark."""
        return Standing(
            self.id, self.rank, self.base, self.mark, self.riding, self.protected, draw, False
        )

    @property
    def stands(self) -> int:
        """All that stands on the card: riding and protected together."""
        return self.riding + self.protected

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "rank": self.rank.value,
            "base": self.base,
            "mark": self.mark,
            "riding": self.riding,
            "protected": self.protected,
            "won_on": self.won_on,
            "marked": self.marked,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Standing:
        return cls(
            data["id"],
            rank(data["rank"]),
            data["base"],
            data["mark"],
            data["riding"],
            data["protected"],
            data["won_on"],
            data["marked"],
        )


@dataclass(frozen=True)
class Action:
    """An act on a standing stake between draws. ``amount`` is the change of a ``reduce`` (taken
    off and returned) or a ``raise`` (added); ``approved_by`` the banker who approved a
    ``withdraw`` or ``reduce`` (None: no approval)."""

    stake: str
    act: Act
    amount: int | None = None
    approved_by: str | None = None

    def __post_init__(self) -> None:
        if (self.act in (Act.REDUCE, Act.RAISE)) != (self.amount is not None):
            raise ValueError(f"{self.act.value}: an amount with reduce and raise only")
        if self.amount is not None and self.amount < 1:
            raise ValueError(f"{self.act.value}: the amount {self.amount} is not >= 1")


class Settlement(NamedTuple):
    """What a draw or an act did to one stake's money (REPLAY.md: ``paid`` from the bank,
    ``returned`` to the player, ``to_bank`` kept by the bank); ``mark`` is the stake's mark when
    settled (for a plié, the mark before it)."""

    stake: str
    outcome: Outcome
    paid: int = 0
    returned: int = 0
    to_bank: int = 0
    mark: str = SIMPLE


class Acted(NamedTuple):
    """The answer to an act: the stake as it now stands (None when it ended), the money put on the
    layout (a raise, or the winnings put back by a mark), and the line the replay lists (collect,
    withdraw, reduce; none for a mark or a raise)."""

    action: Action
    stake: Standing | None
    put: int = 0
    settlement: Settlement | None = None


class Draw(NamedTuple):
    """One draw (Abzug): the bank's card (left), the players' card (right), and what it settled:
    first the acts made before it (in their order), then the stakes on the drawn ranks."""

    number: int
    bank: Card
    players: Card
    plie: bool
    settlements: tuple[Settlement, ...]


class Laid(NamedTuple):
    """Where a card went and what follows: the terminal's answer to "what next?".

    ``settled`` is the draw this card completed (None after a left card); ``end`` the stakes
    returned after the last draw (None before it)."""

    card: Card
    side: Side
    draw: int
    settled: Draw | None
    next_side: Side | None
    end: tuple[Settlement, ...] | None = None


# --- the taille, card by card and act by act ----------------------------------------------------


class TailleDeal:
    """One taille at the table: the bottom card shown first, then 52 cards laid one at a time,
    left (bank) and right (players) in turn; between draws, stakes placed and acts on them.

    Everything the rules refuse raises a ``PharaoRefusal`` naming the rule (its ``code`` is the
    replay's reason) and changes nothing. A card the pack cannot hold (one already laid, the bottom
    card before its turn, or another card in its place) is refused as the pack's integrity asks.
    """

    def __init__(self, bottom: Card, reglement: Reglement | None = None) -> None:
        self.reglement = reglement or Reglement()
        self.bottom = bottom
        self.laid: list[Card] = []
        self.standing: dict[str, Standing] = {}  # in the order placed
        self.used: set[str] = set()
        self.pending: list[Settlement] = []  # the acts' lines since the last draw
        self._marks = marks_of(self.reglement)
        # What is out, kept alongside ``laid`` for constant-time checks (the pack, the ranks).
        self._seen: set[Card] = set()
        self._out = dict.fromkeys(Rank, 0)
        self._out[bottom.rank] = 1

    @classmethod
    def from_codes(
        cls, bottom: str, codes: Iterable[str], reglement: Reglement | None = None
    ) -> TailleDeal:
        deal = cls(card(bottom), reglement)
        for code in codes:
            deal.lay(card(code))
        return deal

    # -- where the taille stands

    @property
    def completed(self) -> int:
        """The number of draws made."""
        return len(self.laid) // 2

    @property
    def number(self) -> int | None:
        """The draw in progress, or the next one; None once the taille is complete."""
        return None if self.complete else self.completed + 1

    @property
    def complete(self) -> bool:
        return len(self.laid) == 2 * DRAWS

    # The properties below are asked at every card, stake and act: each reads ``laid`` once,
    # where asking ``complete`` was a call more.
    @property
    def next_side(self) -> Side | None:
        """Whose card is next: the bank's (left) first, then the players' (right)."""
        laid = len(self.laid)
        if laid == 2 * DRAWS:
            return None
        return Side.PLAYERS if laid % 2 else Side.BANK

    @property
    def between_draws(self) -> bool:
        """Stakes may change: no draw is half dealt and the taille is not over."""
        laid = len(self.laid)
        return laid % 2 == 0 and laid != 2 * DRAWS

    def rank_left(self, r: Rank) -> int:
        """How many cards of ``r`` are left to draw (the bottom card, already shown, not counted)."""
        return 4 - self._out[r]

    def exhausted(self, r: Rank) -> bool:
        """RULES.md §2: none of the rank's cards is left undealt apart from the bottom card."""
        return self.rank_left(r) == 0

    @property
    def cards_left(self) -> int:
        """Undealt cards, not counting the bottom card (51 before the first draw)."""
        return 2 * DRAWS - 1 - len(self.laid) if not self.complete else 0

    # -- acts between draws

    def _between(self, what: Act | Literal["stake"]) -> None:
        laid = len(self.laid)
        if laid == 2 * DRAWS:
            raise IllegalDeal(
                gettext_noop("la taille est finie : %(act)s n'est plus possible"),
                act=what if isinstance(what, str) else what.value,
            )
        if laid % 2:
            raise DrawInProgress(
                gettext_noop(
                    "le tirage %(draw)s est commencé (%(card)s à gauche) : aucune mise ne change "
                    "avant qu'il soit réglé"
                ),
                draw=self.completed + 1,
                card=str(self.laid[-1]),
            )

    def place(self, stake: Stake) -> Standing:
        """Place a new stake before the next draw (RULES.md §2: stakes on ranks, face up).

        Refused: ``RankExhausted``, ``OverLimit``, ``UnderLimit`` (in that order, REPLAY.md).
        """
        self._between("stake")
        if isinstance(stake.amount, bool) or not isinstance(stake.amount, int) or stake.amount < 1:
            raise StakeRefused(
                gettext_noop("mise %(stake)s : le montant %(amount)r n'est pas un entier positif"),
                where="amount",
                stake=stake.id,
                amount=stake.amount,
            )
        if stake.id in self.used:
            raise StakeIdTaken(
                gettext_noop("la mise %(stake)s existe déjà dans cette taille"), stake=stake.id
            )
        self._check_rank(stake.id, stake.rank)
        r = self.reglement
        if r.max_stake is not None and stake.amount > r.max_stake:
            raise OverLimit(
                gettext_noop(
                    "mise %(stake)s : %(amount)s dépasse le maximum de la table %(maximum)s"
                ),
                stake=stake.id,
                amount=stake.amount,
                maximum=r.max_stake,
            )
        if r.min_stake is not None and stake.amount < r.min_stake:
            raise UnderLimit(
                gettext_noop(
                    "mise %(stake)s : %(amount)s est sous le minimum de la table %(minimum)s"
                ),
                stake=stake.id,
                amount=stake.amount,
                minimum=r.min_stake,
            )
        standing = Standing.placed(stake)
        self.standing[stake.id] = standing
        self.used.add(stake.id)
        return standing

    def _check_rank(self, stake: str, r: Rank) -> None:
        if self.exhausted(r):
            raise RankExhausted(
                gettext_noop(
                    "mise %(stake)s : le rang %(rank)s est épuisé, aucune de ses cartes ne reste "
                    "à tirer"
                ),
                stake=stake,
                rank=r.value,
            )

    def act(self, action: Action) -> Acted:
        """Apply one act to a standing stake before the next draw (RULES.md §2).

        Refusals, in REPLAY.md's order: ``UnknownStake``; for a mark ``FalseParoli`` then
        ``BadMark``; for collect and withdraw ``NotApproved``; for reduce ``NotApproved`` then
        ``BadMark``; for raise ``BadMark``, ``RankExhausted``, ``OverLimit``.
        """
        self._between(action.act)
        s = self.standing.get(action.stake)
        if s is None:
            raise UnknownStake(
                gettext_noop(
                    "aucune mise %(stake)r ne tient sur le tapis (jamais posée, refusée, terminée, "
                    "ou posée pour le tirage qui vient)"
                ),
                stake=action.stake,
            )
        last = self.completed  # the draw just made
        won_last = s.won_on is not None and s.won_on == last
        move = action.act.move
        if move is not None:
            return self._mark(action, s, move, won_last, last)
        if action.act is Act.COLLECT:
            if not won_last:
                raise NotApproved(
                    gettext_noop(
                        "la mise %(stake)s n'a pas gagné au tirage %(draw)s : l'enlever est un "
                        "retrait, qui demande l'accord du banquier"
                    ),
                    stake=s.id,
                    draw=last,
                )
            return self._ends(action, s, Outcome.COLLECTED)
        if action.act is Act.WITHDRAW:
            if action.approved_by is None:
                raise NotApproved(
                    gettext_noop("retirer la mise %(stake)s demande l'accord du banquier"),
                    stake=s.id,
                )
            return self._ends(action, s, Outcome.WITHDRAWN)
        assert action.amount is not None  # Action refuses reduce and raise without one
        if action.act is Act.REDUCE:
            if action.approved_by is None:
                raise NotApproved(
                    gettext_noop("réduire la mise %(stake)s demande l'accord du banquier"),
                    stake=s.id,
                )
            self._unmarked(s, action)
            if s.base - action.amount < 1:
                raise BadMark(
                    gettext_noop(
                        "réduire la mise %(stake)s de %(amount)s laisserait %(left)s (il faut au "
                        "moins 1)"
                    ),
                    stake=s.id,
                    amount=action.amount,
                    left=s.base - action.amount,
                )
            now = s.rebased(s.base - action.amount)
            self.standing[s.id] = now
            line = Settlement(s.id, Outcome.REDUCED, returned=action.amount, mark=s.mark)
            self.pending.append(line)
            return Acted(action, now, 0, line)
        # Raise: up to the maximum, on a rank that still has cards to come.
        self._unmarked(s, action)
        self._check_rank(s.id, s.rank)
        maximum = self.reglement.max_stake
        if maximum is not None and s.base + action.amount > maximum:
            raise OverLimit(
                gettext_noop(
                    "mise %(stake)s : %(amount)s dépasse le maximum de la table %(maximum)s"
                ),
                stake=s.id,
                amount=s.base + action.amount,
                maximum=maximum,
            )
        now = s.rebased(s.base + action.amount)
        self.standing[s.id] = now
        return Acted(action, now, action.amount, None)

    def _mark(self, action: Action, s: Standing, move: Move, won_last: bool, last: int) -> Acted:
        """A mark uses up the win of the draw just made and applies the table to b as it stands;
        the winnings go back on the card (RULES.md §2; REPLAY.md: one mark per win)."""
        if not won_last:
            raise FalseParoli(
                gettext_noop(
                    "faux paroli : la mise %(stake)s n'a pas gagné au tirage %(draw)s qui vient "
                    "d'être fait"
                ),
                stake=s.id,
                draw=last,
            )
        if s.marked:
            raise FalseParoli(
                gettext_noop(
                    "faux paroli : la mise %(stake)s est déjà marquée depuis son gain au tirage "
                    "%(draw)s (une marque par gain)"
                ),
                stake=s.id,
                draw=last,
            )
        row = transition(self._marks, s.mark, move)
        if row is None:
            raise BadMark(
                gettext_noop(
                    "mise %(stake)s : la table des marques ne mène nulle part par %(move)s depuis "
                    "%(mark)s"
                ),
                stake=s.id,
                move=move.value,
                mark=s.mark,
            )
        now = s.marked_as(row)
        self.standing[s.id] = now
        return Acted(action, now, now.stands - s.stands, None)

    def _unmarked(self, s: Standing, action: Action) -> None:
        if s.mark != SIMPLE:
            raise BadMark(
                gettext_noop(
                    "mise %(stake)s : marquée %(mark)s, elle ne se réduit ni ne s'augmente plus "
                    "(%(act)s refusé)"
                ),
                stake=s.id,
                mark=s.mark,
                act=action.act.value,
            )

    def _ends(self, action: Action, s: Standing, outcome: Outcome) -> Acted:
        del self.standing[s.id]
        line = Settlement(s.id, outcome, returned=s.stands, mark=s.mark)
        self.pending.append(line)
        return Acted(action, None, 0, line)

    # -- the cards

    def lay(self, c: Card) -> Laid:
        """Lay the next card: left for the bank, then right for the players (RULES.md §2). The
        right card settles the draw; the last one (the bottom card) also ends the taille."""
        side = self.next_side
        if side is None:
            raise IllegalDeal(
                gettext_noop(
                    "la taille est finie : les 26 tirages sont faits, %(card)s ne peut pas être "
                    "posée"
                ),
                card=str(c),
            )
        position = len(self.laid)
        if c in self._seen:
            raise ForeignCard(
                gettext_noop(
                    "%(card)s est déjà sortie : un jeu de 52 cartes ne la contient qu'une fois"
                ),
                where=f"cards[{position}]",
                card=str(c),
            )
        last = position == 2 * DRAWS - 1
        if (c == self.bottom) != last:
            raise ForeignCard(
                gettext_noop(
                    "%(card)s à la carte %(position)s : la carte du dessous, %(bottom)s, sort au "
                    "dernier tirage et seulement là"
                ),
                where=f"cards[{position}]",
                card=str(c),
                position=position + 1,
                bottom=str(self.bottom),
            )
        self._add(c)
        number = position // 2 + 1
        if side is Side.BANK:
            return Laid(c, side, number, None, Side.PLAYERS)
        draw = self._settle(number, self.laid[-2], c)
        end = self._end() if last else None
        return Laid(c, side, number, draw, self.next_side, end)

    def _draw(
        self, number: int, left: Card, right: Card
    ) -> tuple[Draw, tuple[Settlement, ...] | None]:
        """Draw ``number`` of a pack checked whole (``play_taille``): what ``lay`` does with its
        two cards, but the card-by-card checks, which a pack of 52 distinct cards whose last is
        the bottom card passes. The draw, and after the last the stakes returned."""
        self._add(left)
        self._add(right)
        return self._settle(number, left, right), self._end() if number == DRAWS else None

    def _add(self, c: Card) -> None:
        self.laid.append(c)
        self._seen.add(c)
        if c != self.bottom:  # the bottom card was counted out when it was shown
            self._out[c.rank] += 1

    def _settle(self, number: int, left: Card, right: Card) -> Draw:
        """What one draw does to every stake on its ranks (RULES.md §2; REPLAY.md, Pharao)."""
        last = number == DRAWS
        plie = not last and left.rank is right.rank
        lines = list(self.pending)
        self.pending.clear()
        # Only a stake on a drawn rank can change: the others are not looked at again.
        ranks = (left.rank, right.rank)
        for s in [s for s in self.standing.values() if s.rank in ranks]:
            if plie and s.rank is left.rank:
                lines.append(self._plie(s))
            elif s.rank is left.rank or (
                last and s.rank is right.rank and self.reglement.pharao_last_card == "bank"
            ):
                # The bank's card: the riding amount is lost, the protected one returned.
                del self.standing[s.id]
                lines.append(
                    Settlement(
                        s.id, Outcome.LOST, returned=s.protected, to_bank=s.riding, mark=s.mark
                    )
                )
            elif s.rank is right.rank and last:
                lines.append(Settlement(s.id, Outcome.DEAD, mark=s.mark))  # the dead bottom card
            elif s.rank is right.rank:
                # The players' card: the riding amount is paid; the stake stays as it was.
                self.standing[s.id] = s.won(number)
                lines.append(Settlement(s.id, Outcome.WON, paid=s.riding, mark=s.mark))
        return Draw(number, left, right, plie, tuple(lines))

    def _plie(self, s: Standing) -> Settlement:
        """The bank takes its share of all that stands (rounded down); the rest stands on as a
        simple stake whose original amount is that rest, and a pending win is gone."""
        taken = plie_share(s.stands, self.reglement.pharao_plie_share)
        rest = s.stands - taken
        if rest == 0:
            del self.standing[s.id]
        else:
            self.standing[s.id] = Standing(s.id, s.rank, rest, SIMPLE, rest, 0)
        return Settlement(s.id, Outcome.PLIE, to_bank=taken, mark=s.mark)

    def _end(self) -> tuple[Settlement, ...]:
        """After the last draw every standing stake is returned, all that stands on it."""
        lines = tuple(
            Settlement(s.id, Outcome.RETURNED, returned=s.stands, mark=s.mark)
            for s in self.standing.values()
        )
        self.standing.clear()
        return lines

    # -- the canonical text form of a taille in progress

    def to_json(self) -> str:
        """The state as canonical JSON (sorted keys, no white space): the bottom card, the cards
        laid, the standing stakes in the order placed, the ids used, the acts' lines waiting for
        the next draw. ``TailleDeal.from_json(d.to_json(), r).to_json() == d.to_json()`` and the
        restored deal plays on exactly as the original (the règlement is recorded apart)."""
        data = {
            "bottom": str(self.bottom),
            "laid": [str(c) for c in self.laid],
            "standing": [s.to_dict() for s in self.standing.values()],
            "used": sorted(self.used),
            "pending": [settlement_dict(s) for s in self.pending],
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, reglement: Reglement | None = None) -> TailleDeal:
        data = json.loads(text)
        deal = cls(card(data["bottom"]), reglement)
        for code in data["laid"]:
            deal._add(card(code))
        deal.standing = {s["id"]: Standing.from_dict(s) for s in data["standing"]}
        deal.used = set(data["used"])
        deal.pending = [
            Settlement(
                s["stake"], Outcome(s["outcome"]), s["paid"], s["returned"], s["to_bank"], s["mark"]
            )
            for s in data["pending"]
        ]
        return deal


def plie_share(stands: int, share: Fraction) -> int:
    """The bank's share of a plié: floor(stands x share), so an odd unit stays the player's
    (RULES.md §2, rounded down as in 1.4).

    >>> plie_share(101, Fraction(1, 2)), plie_share(100, Fraction(1, 3))
    (50, 33)
    """
    return stands * share.numerator // share.denominator


def settlement_dict(s: Settlement) -> dict[str, Any]:
    """A settlement as REPLAY.md writes it."""
    return {
        "stake": s.stake,
        "outcome": s.outcome.value,
        "paid": s.paid,
        "returned": s.returned,
        "to_bank": s.to_bank,
        "mark": s.mark,
    }


# --- whole tailles ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """An act or a new stake the rules refused, before draw ``draw``; ``reason`` is the code."""

    draw: int
    stake: str
    do: Act | Literal["stake"]
    reason: str
    error: PharaoRefusal = field(compare=False, repr=False)


@dataclass(frozen=True)
class Taille:
    bottom_card: Card
    draws: tuple[Draw, ...]
    refused: tuple[Refusal, ...]
    end: tuple[Settlement, ...]
    # What stood on the layout as each draw began, draw by draw: what the bank was exposed to
    # (the expected hold of ``pharao_odds.expected_result``).
    exposed: tuple[tuple[Standing, ...], ...] = ()


def check_pack(cards: Sequence[Card]) -> None:
    """The pack's integrity (RULES.md §2): 52 distinct cards."""
    check_whole_pack(
        cards,
        repeated=gettext_noop(
            "%(card)s est déjà sortie : un jeu de 52 cartes ne la contient qu'une fois"
        ),
        count=gettext_noop("un jeu de Pharao a 52 cartes, pas %(count)s"),
    )


def play_taille(
    cards: Sequence[Card],
    stakes: Sequence[tuple[int, Stake]],
    actions: Sequence[tuple[int, Action]],
    reglement: Reglement,
) -> Taille:
    """Play a whole taille: ``cards`` are the 52 in dealing order (the last is the bottom card,
    shown first), ``stakes`` and ``actions`` each with the draw before which they happen.

    Before draw N the actions of draw N apply in the order given, then the stakes of draw N are
    placed; a refused one is listed (``refused``, in the order things happened) and changes
    nothing. A draw's settlements list the acts' lines in their order, then the stakes on the
    drawn ranks in the order the stakes were given; ``end`` lists the stakes returned after the
    last draw in that order too.

    >>> from casino.games.cards import ONE_PACK
    >>> pack = [str(c) for c in ONE_PACK]
    >>> taille = play_taille([card(c) for c in pack], [(1, Stake("a", Rank.TWO, 10))], [], Reglement())
    >>> taille.bottom_card, [(s.outcome.value, s.paid) for s in taille.draws[0].settlements]
    (Card(rank=<Rank.KING: 'K'>, suit=<Suit.CLUBS: 'C'>), [('won', 10)])
    """
    check_pack(cards)
    order = {stake.id: index for index, (_, stake) in enumerate(stakes)}
    # Stakes given in draw order are placed, and so settled, in the order given: their lines
    # need no sorting (``_in_order``), which cost an eighth of the taille.
    placed_as_given = all(a <= b for (a, _), (b, _) in pairwise(stakes))
    by_draw: dict[int, list[Stake]] = {}
    for number, stake in stakes:
        by_draw.setdefault(number, []).append(stake)
    acts_by_draw: dict[int, list[Action]] = {}
    for number, action in actions:
        acts_by_draw.setdefault(number, []).append(action)
    deal = TailleDeal(cards[-1], reglement)
    refused: list[Refusal] = []

    def refusal(number: int, stake: str, do: Act | Literal["stake"], exc: PharaoRefusal) -> None:
        # The error is kept for its words; its traceback would hold this frame, and with it the
        # whole taille, in a cycle only the garbage collector frees.
        refused.append(Refusal(number, stake, do, exc.code, exc.with_traceback(None)))

    draws: list[Draw] = []
    exposed: list[tuple[Standing, ...]] = []
    end: tuple[Settlement, ...] = ()
    for number in range(1, DRAWS + 1):
        for action in acts_by_draw.get(number, ()):
            try:
                deal.act(action)
            except PharaoRefusal as exc:
                refusal(number, action.stake, action.act, exc)
        for stake in by_draw.get(number, ()):
            try:
                deal.place(stake)
            except PharaoRefusal as exc:
                refusal(number, stake.id, "stake", exc)
        exposed.append(tuple(deal.standing.values()))
        settled, ended = deal._draw(number, cards[2 * number - 2], cards[2 * number - 1])
        draws.append(settled if placed_as_given else _in_order(settled, order))
        if ended is not None:
            end = ended if placed_as_given else tuple(sorted(ended, key=lambda s: order[s.stake]))
    return Taille(cards[-1], tuple(draws), tuple(refused), end, tuple(exposed))


def _in_order(draw: Draw, order: Mapping[str, int]) -> Draw:
    """The acts' lines first as they came, then the stakes' lines in the order stakes were given."""
    acts = [s for s in draw.settlements if s.outcome in _ACT_OUTCOMES]
    stakes = sorted(
        (s for s in draw.settlements if s.outcome not in _ACT_OUTCOMES),
        key=lambda s: order[s.stake],
    )
    return Draw(draw.number, draw.bank, draw.players, draw.plie, (*acts, *stakes))


_ACT_OUTCOMES = (Outcome.COLLECTED, Outcome.WITHDRAWN, Outcome.REDUCED)
