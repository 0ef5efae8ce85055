"""Trente-et-Quarante (Rouge et Noir): dealing, result, announcement, settlement, end of the taille.

RULES.md §1 is the specification; each function cites the rule it implements. The pieces are
separate so that a table terminal can deal card by card (``CoupDeal``) while the replay deals whole
talons (``deal_talon``: each row laid from the card values at once, a test holds it to
``CoupDeal``'s rows) and settles them (``settle_talon``) through the same ``decide`` and
``settle``.

>>> deal = CoupDeal.from_codes("KS 7H 9D 2C 5S TH QD AS 4C 3H 9S".split())
>>> outcome = deal.outcome()
>>> outcome.noir.total, outcome.rouge.total, outcome.result.value, outcome.couleur
(33, 37, 'noir', <Couleur.COULEUR: 'couleur'>)
>>> outcome.announcement.result
'rouge perd, couleur gagne'
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal, NamedTuple

from casino.games.cards import RANKS, SIXAIN, Card, Colour, Composition, Rank, card
from casino.games.errors import IllegalDeal, StakeRefused, gettext_noop
from casino.games.money import bank_half, insurance_premium
from casino.games.reglement import Reglement


class Chance(Enum):
    __hash__ = object.__hash__  # as cards.Suit's: a hold reading hashes every stake's chance

    ROUGE = "rouge"
    NOIR = "noir"
    COULEUR = "couleur"
    INVERSE = "inverse"


class Result(Enum):
    __hash__ = object.__hash__  # as Chance's: the replay looks up the word of each coup's result

    NOIR = "noir"
    ROUGE = "rouge"
    APRES = "apres"
    REFAIT = "refait"
    INCOMPLETE = "incomplete"


class Couleur(Enum):
    __hash__ = object.__hash__  # as Result's

    COULEUR = "couleur"
    INVERSE = "inverse"


class Outcome(Enum):
    __hash__ = object.__hash__  # as Result's: and of each settlement's outcome

    WON = "won"
    LOST = "lost"
    PUSH = "push"
    HALF_LOST = "half_lost"
    IMPRISONED = "imprisoned"
    STILL_IMPRISONED = "still_imprisoned"
    FREED = "freed"
    PRISON_LOST = "prison_lost"
    VOID = "void"
    REFUNDED = "refunded"


class EndReason(Enum):
    COUNT = "count"
    CUT_CARD = "cut_card"
    EXHAUSTED = "exhausted"


RowName = Literal["noir", "rouge"]
ChanceResult = Literal["win", "lose", "push", "refait"]

ROW_WORDS = {
    31: "un",
    32: "deux",
    33: "trois",
    34: "quatre",
    35: "cinq",
    36: "six",
    37: "sept",
    38: "huit",
    39: "neuf",
    40: "quarante",
}


def points(c: Card, reglement: Reglement) -> int:
    """A card's points: ace 1, 2..10 their pips, figures the règlement's ``face_value`` (1.1)."""
    return rank_points(c.rank, reglement)


def rank_points(r: Rank, reglement: Reglement) -> int:
    """The points of every card of rank ``r``: a card's points depend on its rank alone."""
    if r.is_figure:
        return reglement.face_values[(Rank.JACK, Rank.QUEEN, Rank.KING).index(r)]
    return r.pips


# The records made once per coup or per stake (rows, outcomes, stakes, settlements, prisoners,
# coup records) are NamedTuples: typed and immutable as a frozen dataclass is, but built three
# times faster (a frozen dataclass sets each field through ``object.__setattr__``): a coup with
# five stakes makes a dozen of them. The records of a whole talon stay frozen dataclasses.
class Row(NamedTuple):
    cards: tuple[Card, ...] = ()
    total: int = 0

    @property
    def closed(self) -> bool:
        """A row is laid until its total exceeds 30 (1.2.3), so a closed row totals 31..40."""
        return self.total > 30

    @property
    def word(self) -> str | None:
        """The tailleur's word for the row: its points over 30, ``quarante`` for 40; None for a
        row not closed (its total, 30 at most, has no word)."""
        return ROW_WORDS.get(self.total)

    def plus(self, c: Card, value: int) -> Row:
        return Row((*self.cards, c), self.total + value)


class Announcement(NamedTuple):
    noir: str | None
    rouge: str | None
    result: str | None


class CoupOutcome(NamedTuple):
    """What the cards decided. ``couleur`` is None unless noir or rouge won."""

    noir: Row
    rouge: Row
    result: Result
    couleur: Couleur | None

    @property
    def announcement(self) -> Announcement:
        """The tailleur's words, always phrased on rouge (1.2.8)."""
        return Announcement(self.noir.word, self.rouge.word, _PHRASES[self.result, self.couleur])

    def chance(self, chance: Chance) -> ChanceResult:
        """What this coup means for a stake on ``chance``."""
        return self.meanings[chance]

    @property
    def meanings(self) -> Mapping[Chance, ChanceResult]:
        """What this coup means for a stake on each chance: looked up by result and couleur,
        as settling a coup asks it of every stake."""
        return _MEANINGS[self.result, self.couleur]


def _phrase(result: Result, couleur: Couleur | None) -> str | None:
    if result is Result.ROUGE:
        return (
            "rouge gagne et couleur" if couleur is Couleur.COULEUR else "rouge gagne, couleur perd"
        )
    if result is Result.NOIR:
        return (
            "rouge perd, couleur gagne" if couleur is Couleur.COULEUR else "rouge perd et couleur"
        )
    if result is Result.APRES:
        return "après"
    if result is Result.REFAIT:
        return "refait"
    return None


def _meaning(result: Result, couleur: Couleur | None, chance: Chance) -> ChanceResult:
    if couleur is None:  # no row won: a refait, an après or a coup cut short
        return "refait" if result is Result.REFAIT else "push"
    row_won = Chance.NOIR if result is Result.NOIR else Chance.ROUGE
    couleur_won = Chance.COULEUR if couleur is Couleur.COULEUR else Chance.INVERSE
    return "win" if chance is row_won or chance is couleur_won else "lose"


# The phrase and the meanings of each result and couleur, worked out once: the replay asks the
# phrase of every coup, settling the meaning of every stake.
_OUTCOMES = [(result, couleur) for result in Result for couleur in (*Couleur, None)]
_PHRASES = {outcome: _phrase(*outcome) for outcome in _OUTCOMES}
_MEANINGS = {
    outcome: {chance: _meaning(*outcome, chance) for chance in Chance} for outcome in _OUTCOMES
}


def decide(noir: Row, rouge: Row) -> CoupOutcome:
    """Result and couleur from the two rows (1.2.4-7).

    >>> r = lambda codes: Row(tuple(card(c) for c in codes.split()), 0)
    >>> decide(Row(r("TH 8S QD").cards, 38), Row(r("TS AH QD KC").cards, 31)).couleur
    <Couleur.COULEUR: 'couleur'>
    """
    if not (noir.closed and rouge.closed):
        return CoupOutcome(noir, rouge, Result.INCOMPLETE, None)
    if noir.total == rouge.total:
        return CoupOutcome(noir, rouge, Result.REFAIT if noir.total == 31 else Result.APRES, None)
    noir_won = noir.total < rouge.total
    # The couleur is the colour of the first card of the first row; couleur wins when the winning
    # row (noir = first = black, rouge = second = red) has that colour.
    first_black = noir.cards[0].colour is Colour.BLACK
    return CoupOutcome(
        noir,
        rouge,
        Result.NOIR if noir_won else Result.ROUGE,
        Couleur.COULEUR if first_black is noir_won else Couleur.INVERSE,
    )


@dataclass(frozen=True)
class Laid:
    """Where a card went and what follows: the terminal's answer to "what next?"."""

    row: RowName
    value: int
    row_total: int
    row_closed: bool
    coup_complete: bool
    next_row: RowName | None


class CoupDeal:
    """The cards of one coup, laid one at a time: first row (noir) until it exceeds 30, then the
    second (rouge) the same way (1.2.3). Laying a card once both rows are closed is refused."""

    def __init__(self, reglement: Reglement | None = None) -> None:
        self.reglement = reglement or Reglement()
        self.noir = Row()
        self.rouge = Row()

    @classmethod
    def from_codes(cls, codes: Iterable[str], reglement: Reglement | None = None) -> CoupDeal:
        deal = cls(reglement)
        for code in codes:
            deal.lay(card(code))
        return deal

    @property
    def next_row(self) -> RowName | None:
        if not self.noir.closed:
            return "noir"
        if not self.rouge.closed:
            return "rouge"
        return None

    @property
    def complete(self) -> bool:
        return self.next_row is None

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.noir.cards + self.rouge.cards

    def lay(self, c: Card) -> Laid:
        row = self.next_row
        if row is None:
            raise IllegalDeal(
                gettext_noop(
                    "les deux rangées sont fermées (%(noir)s, %(rouge)s) ; %(card)s ne peut "
                    "pas être posée dans ce coup"
                ),
                noir=self.noir.total,
                rouge=self.rouge.total,
                card=str(c),
            )
        value = points(c, self.reglement)
        if row == "noir":
            self.noir = self.noir.plus(c, value)
            laid = self.noir
        else:
            self.rouge = self.rouge.plus(c, value)
            laid = self.rouge
        return Laid(row, value, laid.total, laid.closed, self.complete, self.next_row)

    def outcome(self) -> CoupOutcome:
        """The outcome; for a coup whose cards ran out, ``Result.INCOMPLETE`` with totals reached."""
        return decide(self.noir, self.rouge)


# --- stakes, prison and settlement -------------------------------------------------------------

RefaitChoice = Literal["prison", "half"] | tuple[Literal["move"], Chance]


class Stake(NamedTuple):
    """A stake on one of the four chances for one coup. ``on_refait`` matters under ``choice``."""

    id: str
    chance: Chance
    amount: int
    insured: bool = False
    on_refait: RefaitChoice | None = None


class Prisoner(NamedTuple):
    """An imprisoned stake: ``held`` stays on ``chance`` until freed or lost (1.4)."""

    stake: str
    chance: Chance
    held: int
    level: int


class Settlement(NamedTuple):
    """What one coup did to one stake. Over a stake's life: amount = returned + to_bank + held."""

    stake: str
    outcome: Outcome
    paid: int = 0
    returned: int = 0
    to_bank: int = 0
    premium: int = 0
    held: int = 0
    level: int = 0
    chance: Chance | None = None  # where the money stands after this coup (a moved prisoner)


def check_stake(stake: Stake, reglement: Reglement) -> None:
    """Refuse a stake the règlement does not accept (1.2.1, 1.5)."""
    if not isinstance(stake.amount, int) or isinstance(stake.amount, bool) or stake.amount <= 0:
        raise StakeRefused(
            gettext_noop("mise %(stake)s : le montant %(amount)r n'est pas un entier positif"),
            where="amount",
            stake=stake.id,
            amount=stake.amount,
        )
    if reglement.min_stake is not None and stake.amount < reglement.min_stake:
        raise StakeRefused(
            gettext_noop("mise %(stake)s : %(amount)s est sous le minimum de la table %(minimum)s"),
            where="amount",
            stake=stake.id,
            amount=stake.amount,
            minimum=reglement.min_stake,
        )
    if reglement.max_stake is not None and stake.amount > reglement.max_stake:
        raise StakeRefused(
            gettext_noop("mise %(stake)s : %(amount)s dépasse le maximum de la table %(maximum)s"),
            where="amount",
            stake=stake.id,
            amount=stake.amount,
            maximum=reglement.max_stake,
        )
    if stake.insured:
        if not reglement.insurance:
            raise StakeRefused(
                gettext_noop("mise %(stake)s : le règlement %(reglement)s n'a pas d'assurance"),
                where="insured",
                stake=stake.id,
                reglement=reglement.name,
            )
        if stake.amount < reglement.insurance_min_stake:
            raise StakeRefused(
                gettext_noop(
                    "mise %(stake)s : l'assurance demande une mise d'au moins %(minimum)s"
                ),
                where="insured",
                stake=stake.id,
                minimum=reglement.insurance_min_stake,
            )


def premium_of(stake: Stake, reglement: Reglement) -> int:
    if not stake.insured:
        return 0
    return insurance_premium(
        stake.amount, unit=reglement.insurance_unit, premium=reglement.insurance_premium
    )


class CoupSettlement(NamedTuple):
    settlements: tuple[Settlement, ...]
    prison: tuple[Prisoner, ...]


def _settle_prisoner(
    p: Prisoner,
    result: ChanceResult,
    reglement: Reglement,
) -> tuple[Settlement, Prisoner | None]:
    """One coup for an imprisoned stake (1.4)."""

    def stays(
        outcome: Outcome,
        held: int,
        level: int,
        to_bank: int = 0,
    ) -> tuple[Settlement, Prisoner]:
        return (
            Settlement(p.stake, outcome, to_bank=to_bank, held=held, level=level, chance=p.chance),
            Prisoner(p.stake, p.chance, held, level),
        )

    if result == "push":
        return stays(Outcome.STILL_IMPRISONED, p.held, p.level)
    if result == "lose":
        return Settlement(p.stake, Outcome.PRISON_LOST, to_bank=p.held, chance=p.chance), None
    if result == "win":
        level = 0 if reglement.prison_repeat == "halve" else p.level - 1
        if level == 0:
            return Settlement(p.stake, Outcome.FREED, returned=p.held, chance=p.chance), None
        return stays(Outcome.STILL_IMPRISONED, p.held, level)
    # Another refait.
    if reglement.prison_repeat == "halve":
        # Still in prison, the half taken (REPLAY.md); a prisoner of 1 stays 1 (rounded down).
        taken = bank_half(p.held)
        return stays(Outcome.STILL_IMPRISONED, p.held - taken, 1, to_bank=taken)
    if p.level + 1 > reglement.max_prison_level:
        return Settlement(p.stake, Outcome.PRISON_LOST, to_bank=p.held, chance=p.chance), None
    return stays(Outcome.STILL_IMPRISONED, p.held, p.level + 1)


def _settle_stake(
    s: Stake,
    result: ChanceResult,
    reglement: Reglement,
) -> tuple[Settlement, Prisoner | None]:
    """One coup for a stake placed on it (1.2.9, 1.4, 1.5), ``result`` what the coup means for
    its chance."""
    premium = premium_of(s, reglement)
    if result == "refait" and s.insured:
        result = "push"  # an insured stake is not affected by a refait (1.5)
    if result == "win":
        return Settlement(
            s.id, Outcome.WON, paid=s.amount, returned=s.amount, premium=premium, chance=s.chance
        ), None
    if result == "lose":
        return Settlement(
            s.id, Outcome.LOST, to_bank=s.amount, premium=premium, chance=s.chance
        ), None
    if result == "push":
        return Settlement(
            s.id, Outcome.PUSH, returned=s.amount, premium=premium, chance=s.chance
        ), None
    choice: RefaitChoice = "prison" if reglement.refait_mode == "prison" else "half"
    if reglement.refait_mode == "choice":
        choice = s.on_refait if s.on_refait is not None else reglement.refait_default
    if choice == "half":
        taken = bank_half(s.amount)
        return Settlement(
            s.id,
            Outcome.HALF_LOST,
            returned=s.amount - taken,
            to_bank=taken,
            premium=premium,
            chance=s.chance,
        ), None
    chance = choice[1] if isinstance(choice, tuple) else s.chance
    return (
        Settlement(
            s.id, Outcome.IMPRISONED, held=s.amount, level=1, premium=premium, chance=chance
        ),
        Prisoner(s.id, chance, s.amount, 1),
    )


def settle(
    outcome: CoupOutcome,
    *,
    void: bool,
    stakes: Sequence[Stake],
    prison: Sequence[Prisoner],
    reglement: Reglement,
    checked: bool = False,
) -> CoupSettlement:
    """Settle a coup: the prisoners it began with, then the stakes placed on it.

    A void coup returns every stake and charges no premium; prisoners stay as they were (1.3).
    Money moves in the order of 1.2.9 (losers collected, then winners paid); that order is the
    ledger's business, the amounts are decided here. Each stake is refused as ``check_stake``
    refuses it, unless ``checked`` says the caller has already done so.
    """
    settlements: list[Settlement] = []
    new_prison: list[Prisoner] = []
    meanings = outcome.meanings
    for p in prison:
        if void:
            settlements.append(
                Settlement(
                    p.stake, Outcome.STILL_IMPRISONED, held=p.held, level=p.level, chance=p.chance
                )
            )
            new_prison.append(p)
            continue
        settled, kept = _settle_prisoner(p, meanings[p.chance], reglement)
        settlements.append(settled)
        if kept is not None:
            new_prison.append(kept)
    for s in stakes:
        if not checked:
            check_stake(s, reglement)
        if void:
            settlements.append(Settlement(s.id, Outcome.VOID, returned=s.amount, chance=s.chance))
            continue
        settled, kept = _settle_stake(s, meanings[s.chance], reglement)
        settlements.append(settled)
        if kept is not None:
            new_prison.append(kept)
    return CoupSettlement(tuple(settlements), tuple(new_prison))


def refund_at_end(
    prison: Sequence[Prisoner],
    reglement: Reglement,
) -> tuple[tuple[Settlement, ...], tuple[Prisoner, ...]]:
    """Prisoners when the taille ends: carried over, or refunded half (1.4, ``prison_at_end``)."""
    if reglement.prison_at_end == "carry":
        return (), tuple(prison)
    refunds = []
    for p in prison:
        taken = bank_half(p.held)
        refunds.append(
            Settlement(
                p.stake, Outcome.REFUNDED, returned=p.held - taken, to_bank=taken, chance=p.chance
            )
        )
    return tuple(refunds), ()


# --- the taille: coups dealt from one talon ----------------------------------------------------


def count_rule_ends(cards_left: int, points_left: int, reglement: Reglement) -> bool:
    """ "Le coup n'y est plus": at most 7 cards left or fewer than 62 points (1.3, count rule)."""
    return cards_left < reglement.end_min_cards or points_left < reglement.end_min_points


def next_coup_begins(cards_left: int, points_left: int, reglement: Reglement) -> bool:
    """Does another coup begin from a talon that has ``cards_left`` cards holding ``points_left``
    points? The end rule (RULES.md 1.3) is asked before every coup, coup 1 included:

    - ``count``: not when at most ``end_min_cards`` - 1 cards or fewer than ``end_min_points``
      points are left;
    - ``exhausted``: while any card is left;
    - ``cut_card``: not when the next card is the cut card, which lies before the last
      ``cut_card_from_end`` cards (so only while more than that many are left).

    The coup before a "no" is the last of the talon (a refait there is void when
    ``refait_void_on_last_coup``). The table asks the same question after each settled coup.

    >>> cut_card = Reglement(end_rule="cut_card", cut_card_from_end=5)
    >>> next_coup_begins(6, 40, cut_card), next_coup_begins(5, 40, cut_card)
    (True, False)
    >>> next_coup_begins(8, 62, Reglement()), next_coup_begins(8, 61, Reglement())
    (True, False)
    """
    if reglement.end_rule == "count":
        return not count_rule_ends(cards_left, points_left, reglement)
    if reglement.end_rule == "cut_card":
        assert reglement.cut_card_from_end is not None  # the règlement refuses it otherwise
        return cards_left > reglement.cut_card_from_end
    return cards_left > 0


class CoupRecord(NamedTuple):
    number: int
    outcome: CoupOutcome
    void: bool
    last: bool
    settlements: tuple[Settlement, ...]

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.outcome.noir.cards + self.outcome.rouge.cards


@dataclass(frozen=True)
class TailleEnd:
    reason: EndReason
    cards_left: int
    points_left: int
    prison: tuple[Prisoner, ...]
    settlements: tuple[Settlement, ...]


@dataclass(frozen=True)
class Taille:
    coups: tuple[CoupRecord, ...]
    end: TailleEnd


_END_OF_RULE = {
    "count": EndReason.COUNT,
    "exhausted": EndReason.EXHAUSTED,
    "cut_card": EndReason.CUT_CARD,
}


def _lay_row(cards: Sequence[Card], values: Sequence[int], start: int, stop: int) -> Row:
    """The row laid from ``cards[start]``: until its total exceeds 30 (1.2.3), or the cards stop
    at ``stop`` first (the cut card, or the end of the talon): then it is not closed."""
    total = 0
    end = start
    while total <= 30 and end < stop:
        total += values[end]
        end += 1
    return Row(tuple(cards[start:end]), total)


class DealtCoup(NamedTuple):
    """A coup as the cards decided it, before any stake: ``void`` and ``last`` depend on the
    cards and the règlement alone."""

    number: int
    outcome: CoupOutcome
    void: bool
    last: bool


@dataclass(frozen=True)
class DealtTalon:
    """Every coup a talon deals, and how the taille ended (stakes change neither)."""

    coups: tuple[DealtCoup, ...]
    reason: EndReason
    cards_left: int
    points_left: int


def deal_talon(
    cards: Sequence[Card], reglement: Reglement, *, composition: Composition | None = SIXAIN
) -> DealtTalon:
    """Deal every coup of a talon (after shuffle, cut and burn) until the taille ends (1.2, 1.3).

    Rows are laid as ``CoupDeal`` lays them card by card, from the points of each card worked out
    once; ``composition`` is the sealed pack the cards come from (``ForeignCard`` otherwise).

    >>> talon = [card(c) for c in "KS 7H 9D 2C 5S TH QD AS 4C 3H 9S 8C".split()]
    >>> dealt = deal_talon(talon, Reglement(end_rule="exhausted"), composition=None)
    >>> [(c.number, c.outcome.result.value, c.void) for c in dealt.coups], dealt.reason.value
    ([(1, 'noir', False), (2, 'incomplete', True)], 'exhausted')
    """
    if composition is not None:
        composition.check_contains(cards)
    by_rank = {r: rank_points(r, reglement) for r in RANKS}
    values = [by_rank[c.rank] for c in cards]
    # The cut card lies before the last ``cut_card_from_end`` cards: no card of a coup is dealt
    # from beyond it (1.3).
    stop = len(cards)
    if reglement.end_rule == "cut_card" and reglement.cut_card_from_end is not None:
        stop = max(0, len(cards) - reglement.cut_card_from_end)
    position = 0
    points_left = sum(values)
    dealt: list[tuple[CoupOutcome, bool]] = []
    # Set when a coup is cut short: the cards ran out, or the cut card came out inside it.
    reason: EndReason | None = None
    while reason is None and next_coup_begins(len(cards) - position, points_left, reglement):
        noir = _lay_row(cards, values, position, stop)
        position += len(noir.cards)
        rouge = _lay_row(cards, values, position, stop) if noir.closed else Row()
        position += len(rouge.cards)
        points_left -= noir.total + rouge.total
        if not rouge.closed:
            reason = EndReason.CUT_CARD if stop < len(cards) else EndReason.EXHAUSTED
        last = reason is not None or not next_coup_begins(
            len(cards) - position, points_left, reglement
        )
        dealt.append((decide(noir, rouge), last))
    if reason is None:
        # The end rule stopped play before a coup (even with no card left: the count rule's).
        reason = _END_OF_RULE[reglement.end_rule]
    coups = tuple(
        DealtCoup(
            number,
            outcome,
            outcome.result is Result.INCOMPLETE
            or (outcome.result is Result.REFAIT and last and reglement.refait_void_on_last_coup),
            last,
        )
        for number, (outcome, last) in enumerate(dealt, start=1)
    )
    return DealtTalon(coups, reason, len(cards) - position, points_left)


def settle_talon(
    dealt: DealtTalon,
    stakes_by_coup: Mapping[int, Sequence[Stake]],
    reglement: Reglement,
    *,
    prison: Sequence[Prisoner] = (),
    checked: bool = False,
) -> Taille:
    """Settle the coups of a dealt talon, prisoners carried from coup to coup, then the end of the
    taille (1.4). Stakes for coups that are never dealt are the caller's to refuse; ``checked``
    says the caller has refused those ``check_stake`` refuses (the replay, as it reads them)."""
    current_prison = tuple(prison)
    coups: list[CoupRecord] = []
    for coup in dealt.coups:
        settled = settle(
            coup.outcome,
            void=coup.void,
            stakes=stakes_by_coup.get(coup.number, ()),
            prison=current_prison,
            reglement=reglement,
            checked=checked,
        )
        current_prison = settled.prison
        coups.append(
            CoupRecord(coup.number, coup.outcome, coup.void, coup.last, settled.settlements)
        )
    refunds, carried = refund_at_end(current_prison, reglement)
    end = TailleEnd(dealt.reason, dealt.cards_left, dealt.points_left, carried, refunds)
    return Taille(tuple(coups), end)


def play_talon(
    cards: Sequence[Card],
    stakes_by_coup: Mapping[int, Sequence[Stake]],
    reglement: Reglement,
    *,
    prison: Sequence[Prisoner] = (),
    composition: Composition | None = SIXAIN,
) -> Taille:
    """Deal and settle every coup of a talon (after shuffle, cut and burn) until the taille ends.

    ``composition`` is the sealed pack the cards come from; a sequence it cannot contain is refused
    (``ForeignCard`` naming the card). Stakes for coups that are never dealt are the caller's to
    refuse (the replay does).
    """
    dealt = deal_talon(cards, reglement, composition=composition)
    return settle_talon(dealt, stakes_by_coup, reglement, prison=prison)


def coups_reached(cards: Sequence[Card], reglement: Reglement) -> int:
    """How many coups a talon deals (begun ones included, void or not): stakes do not change it."""
    return len(deal_talon(cards, reglement, composition=None).coups)


def remaining_points(composition: Composition, laid: Iterable[Card], reglement: Reglement) -> int:
    left: Counter[Card] = composition.remaining(laid)
    return sum(points(c, reglement) * n for c, n in left.items() if n > 0)
