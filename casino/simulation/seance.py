"""One séance of Trente-et-Quarante, act by act, through the services, by the people it names.

The croupier counts the float and the director countersigns; the chef de partie opens the séance
with his crew on duty and a sealed sixain from the store (received and verified on the spot when
the store has none); the croupier and the tailleur shuffle, a patron cuts; coups follow with
random stakes (refaits, prisoners and insurance come as the cards fall); the chef asks the cage
for a fill when the bank runs low and returns chips when it overflows, the cashier signing each;
at "les cartes passent" the tailleur counts the undealt cards and the chef counts the sixain
back; at the close the cards pass, the closing count is countersigned and the chef closes (so it
balances: a variance is for real rooms).

``seance()`` is a play for ``timeline.play_together``: it yields the time before each act.
"""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter
from collections.abc import Generator
from dataclasses import dataclass, field

from django.contrib.auth.models import User

from casino.floor import coups
from casino.floor.models import Account, CashTransfer, FloatCount, PostedReglement, Shift, Table
from casino.floor.services import (
    LateStake,
    balance,
    count_countersign,
    count_record,
    rundown,
    shift_close,
    shift_open,
    table_account,
    table_create,
    transfer_countersign,
    transfer_record,
)
from casino.games.cards import card
from casino.games.reglement import Reglement
from casino.games.simulator import cut, random_stakes, shuffled
from casino.games.trente_et_quarante import CoupDeal, Result
from casino.simulation import pace
from casino.simulation.timeline import Play
from shoes import services as packs
from shoes.models import Pack, PackKind, PackState

FLOAT = {"10000": 40, "2500": 40, "500": 100}
FLOAT_TOTAL = sum(int(value) * number for value, number in FLOAT.items())
DENOMINATIONS = (10000, 2500, 500, 100, 50, 10, 5, 1)
RULES = "trente-et-quarante-modern"


def chips_for(total: int) -> dict[str, int]:
    """The chips a counting croupier finds for ``total``, largest denominations first."""
    if total < 0:
        raise ValueError(f"a table cannot hold {total}: the bank needed a fill")
    chips = {}
    for value in DENOMINATIONS:
        chips[str(value)], total = divmod(total, value)
    return {value: number for value, number in chips.items() if number}


@dataclass(frozen=True)
class House:
    """Who acts away from the table: the director countersigns, the cage and the card room."""

    directeur: User
    caissier: User
    commissaire: User


@dataclass(frozen=True)
class Crew:
    """Who is on duty at the table (no tailleur at a cercle: the players deal)."""

    chef: User
    tailleur: User | None
    croupier: User


def table_for(
    house: House,
    number: int,
    *,
    game: str = "trente-et-quarante",
    rules: str = RULES,
    limits: tuple[int, int] = (500, 600_000),
) -> Table:
    """Table ``number``, created by the director for ``game`` under the posted ``rules`` with
    ``limits`` (least, most) if missing; refused if it exists for another game (a simulation
    must not play one game's acts at another's table)."""
    table = Table.objects.filter(number=number).first()
    if table is not None:
        if table.game != game:
            raise LookupError(f"table {number} plays {table.game}, not {game}")
        return table
    posted = PostedReglement.objects.filter(name=rules).order_by("-version").first()
    if posted is None:
        raise LookupError(f"the règlement {rules} is not posted")
    return table_create(
        actor=house.directeur,
        number=number,
        game=game,
        reglement_id=posted.pk,
        min_stake=limits[0],
        max_stake=limits[1],
    )


@dataclass(frozen=True)
class Planted:
    """What a dishonest crew or patron does in a simulated séance, for the detectors to find
    (docs/detectors.md; the demo plants some of each).

    ``lucky_seat``: a seat whose player knows the cards (a confederate of the tailleur): before
    the first card he stakes ``lucky_amount`` on the chance the coming coup will win, in one coup
    of ``lucky_every`` (a seat the honest players, at seats 1 to 9, never take).
    ``misannounce``: the chance the croupier announces a result the cards do not say.
    ``past_post``: the chance, at each card, that the croupier tries a stake after it.
    ``slug``: the tailleur puts back the first ``slug`` cards of the séance's previous sixain in
    the order they were dealt, on top of the next one (a "stacked" sixain whose order a
    confederate knows); the rest of it is shuffled as usual.
    """

    lucky_seat: str | None = None
    lucky_amount: int = 50_000
    lucky_every: int = 2
    misannounce: float = 0.0
    past_post: float = 0.0
    slug: int = 0


HONEST = Planted()


def coming_winner(talon: list[str], rules: Reglement) -> str | None:
    """The chance the coup dealt from the top of ``talon`` will win (what a player who knows the
    cards stakes on), or None when it decides nothing for rouge and noir."""
    deal = CoupDeal(rules)
    for code in talon:
        if deal.complete:
            break
        deal.lay(card(code))
    outcome = deal.outcome()
    if outcome.result not in (Result.NOIR, Result.ROUGE):
        return None
    return outcome.result.value


@dataclass
class _Seance:
    table: Table
    crew: Crew
    house: House
    rng: random.Random
    planted: Planted = HONEST
    shift: Shift | None = None
    pack: Pack | None = None
    talon: list[str] = field(default_factory=list)
    previous: list[str] = field(default_factory=list)  # the last sixain's order, as cut

    @property
    def open_shift(self) -> Shift:
        assert self.shift is not None, "the séance is not open"
        return self.shift


def seance(
    table: Table,
    crew: Crew,
    house: House,
    rng: random.Random,
    *,
    coups: int,
    stakes_per_coup: int = 5,
    close: bool = True,
    count_back_at_close: bool = True,
    planted: Planted = HONEST,
) -> Play:
    """Open a séance at ``table``, make a sixain ready, play ``coups`` coups, and close it
    (``close=False``: leave it open, the cards cut, for someone to play the next coup). At the
    close the cards pass and the sixain is counted back, or (``count_back_at_close=False``) it
    stays at the table in play, its talon uncounted, as a séance closed mid-taille leaves it.
    ``planted``: what a dishonest crew or patron does meanwhile (honest by default)."""
    s = _Seance(table, crew, house, rng, planted=planted)
    yield from _open(s)
    for n in range(coups):
        if not s.talon:
            yield from _new_pack(s)
        yield from _mind_the_bank(s)
        yield from _coup(s, n, stakes_per_coup)
    if not close:
        if not s.talon:
            yield from _new_pack(s)
        return
    if s.talon and count_back_at_close:
        yield from _cards_pass(s)
    yield from _close(s)


def _count(
    s: _Seance, moment: FloatCount.Moment, chips: dict[str, int]
) -> Generator[dt.timedelta, None, FloatCount]:
    """The croupier counts, the director countersigns: two acts of two people."""
    count = count_record(actor=s.crew.croupier, table_id=s.table.pk, moment=moment, chips=chips)
    yield pace.pause(s.rng, pace.COUNTERSIGN)
    count_countersign(actor=s.house.directeur, count_id=count.pk)
    return count


def _open(s: _Seance, chips: dict[str, int] = FLOAT) -> Play:
    """The opening count (the float; at a cercle the fee box, empty), then the séance opened."""
    count = yield from _count(s, FloatCount.Moment.OPENING, chips)
    yield pace.pause(s.rng, pace.OPEN_SEANCE)
    s.shift = shift_open(
        actor=s.crew.chef,
        table=s.table,
        count_id=count.pk,
        tailleur=s.crew.tailleur,
        croupiers=[s.crew.croupier],
    )


def _from_store(s: _Seance, kind: str = PackKind.SIXAIN) -> Play:
    """The oldest verified pack of ``kind`` in the store (a sixain for Trente-et-Quarante, a
    single pack for Pharao); if there is none, the cage receives one and the commissioner
    verifies its seal there and then."""
    pack = Pack.objects.filter(kind=kind, state=PackState.VERIFIED).order_by("id").first()
    if pack is None:
        seal = f"SIM-{s.table.number}-{s.rng.randrange(10**9):09d}"
        pack = packs.pack_receive(
            actor=s.house.caissier,
            kind=kind,
            maker="Grimaud",
            maker_pack_numbers="simulated",
            seal_number=seal,
            sealing_authority="Préfecture de police",
            store_location="coffre S",
        )
        yield pace.pause(s.rng, pace.STORE)
        packs.pack_store(actor=s.house.caissier, pack_id=pack.pk)
        yield pace.pause(s.rng, pace.SEAL)
        packs.seal_verify(
            actor=s.house.commissaire, pack_id=pack.pk, seal_number_read=seal, verdict="intact"
        )
    s.pack = pack


def _new_pack(s: _Seance) -> Play:
    yield pace.pause(s.rng, pace.FETCH_PACK)
    yield from _from_store(s)
    assert s.pack is not None
    packs.pack_open(actor=s.crew.chef, pack_id=s.pack.pk, shift_id=s.open_shift.pk)
    yield pace.pause(s.rng, pace.SHUFFLE)
    packs.pack_shuffle(actor=s.crew.croupier, pack_id=s.pack.pk)
    yield pace.pause(s.rng, pace.SHUFFLE)
    packs.pack_shuffle(actor=s.crew.tailleur, pack_id=s.pack.pk)
    yield pace.pause(s.rng, pace.CUT)
    packs.pack_cut(actor=s.crew.tailleur, pack_id=s.pack.pk, cut_by="un ponte de la galerie")
    cards = shuffled(s.rng)
    s.talon = [str(c) for c in cut(cards, s.rng.randint(1, len(cards) - 1))]
    if s.planted.slug and s.previous:
        slug = s.previous[: s.planted.slug]
        rest = list(s.talon)
        for code in slug:
            rest.remove(code)
        s.talon = slug + rest
    s.previous = list(s.talon)


def _mind_the_bank(s: _Seance) -> Play:
    """A fill when the bank runs low, a credit when it holds more than twice its float: the chef
    de partie records it, the cashier signs it when the runner has carried the chips."""
    bank = balance(table_account(s.table, Account.Kind.BANK))
    if FLOAT_TOTAL // 2 <= bank <= 2 * FLOAT_TOTAL:
        return
    kind = CashTransfer.Kind.FILL if bank < FLOAT_TOTAL // 2 else CashTransfer.Kind.CREDIT
    transfer = transfer_record(
        actor=s.crew.chef, shift_id=s.open_shift.pk, kind=kind, amount=FLOAT_TOTAL
    )
    yield pace.pause(s.rng, pace.FILL)
    transfer_countersign(actor=s.house.caissier, transfer_id=transfer.pk)


def _coup(s: _Seance, n: int, per_coup: int) -> Play:
    rng, crew = s.rng, s.crew
    yield pace.pause(rng, pace.BETWEEN_COUPS)
    coup = coups.coup_open(actor=crew.tailleur, shift_id=s.open_shift.pk)
    yield pace.pause(rng, pace.FAITES_VOS_JEUX)
    rules = s.open_shift.rules()
    for stake in random_stakes(rng, n, rng.randint(0, per_coup), rules, prefix="p"):
        on_refait = (
            stake.on_refait
            if isinstance(stake.on_refait, str) or stake.on_refait is None
            else f"move:{stake.on_refait[1].value}"
        )
        coups.stake_place(
            actor=crew.croupier,
            coup_id=coup.pk,
            ref=stake.id,
            holder=str(rng.randint(1, 9)),
            chance=stake.chance.value,
            amount=stake.amount,
            insured=stake.insured,
            on_refait=on_refait,
        )
        yield pace.pause(rng, pace.STAKE)
    planted = s.planted
    winner = coming_winner(s.talon, rules) if planted.lucky_seat else None
    if winner is not None and n % planted.lucky_every == 0:
        coups.stake_place(
            actor=crew.croupier,
            coup_id=coup.pk,
            ref=f"lucky-{n}",
            holder=str(planted.lucky_seat),
            chance=winner,
            amount=min(planted.lucky_amount, rules.max_stake or planted.lucky_amount),
        )
    yield pace.pause(rng, pace.LE_JEU_EST_FAIT)
    coups.coup_close_betting(actor=crew.tailleur, coup_id=coup.pk)
    laid, dealt = None, []
    while s.talon and (laid is None or not laid.coup_complete):
        yield pace.pause(rng, pace.CARD)
        dealt.append(s.talon.pop(0))
        laid = coups.coup_lay_card(actor=crew.tailleur, coup_id=coup.pk, code=dealt[-1])
        if planted.past_post and rng.random() < planted.past_post:
            _past_post(s, coup.pk, n)
    yield pace.pause(rng, pace.SETTLEMENT)
    said = CoupDeal.from_codes(dealt, rules).outcome().announcement.result
    result = coups.coup_settle(actor=crew.croupier, coup_id=coup.pk, spoken=_spoken(s, said))
    if result.last:
        yield from _cards_pass(s)


def _past_post(s: _Seance, coup_id: int, n: int) -> None:
    """The croupier tries a stake once the first card is out: refused, and recorded as evidence."""
    try:
        coups.stake_place(
            actor=s.crew.croupier,
            coup_id=coup_id,
            ref=f"late-{n}",
            holder=str(s.rng.randint(1, 9)),
            chance=s.rng.choice(("rouge", "noir")),
            amount=2_000,
        )
    except LateStake:
        return
    raise AssertionError("a stake after the first card was accepted")


def _spoken(s: _Seance, said: str | None) -> str:
    """What the croupier announces: usually nothing typed (the terminal takes the cards' words),
    now and then words typed in; a planted croupier gets them wrong (``said``: the cards')."""
    if s.planted.misannounce and s.rng.random() < s.planted.misannounce:
        return next(w for w in ("rouge gagne et couleur", "rouge perd et couleur") if w != said)
    return "" if s.rng.random() > 0.02 else "rouge gagne"


def _cards_pass(s: _Seance) -> Play:
    """Les cartes passent: the tailleur scans the undealt cards in the order they lie, then the
    chef de partie counts the sixain back and retires it; the next coup takes a new one."""
    assert s.pack is not None
    yield pace.pause(s.rng, pace.TALON_COUNT)
    packs.cards_pass(
        actor=s.crew.tailleur, pack_id=s.pack.pk, undealt=list(s.talon), method="scanned"
    )
    yield pace.pause(s.rng, pace.RETIRE)
    packs.pack_retire(actor=s.crew.chef, pack_id=s.pack.pk, counted=dict(Counter(s.talon)))
    s.talon, s.pack = [], None


def _close(s: _Seance) -> Play:
    # A bank a last coup left short (a seat that knows the cards) gets its fill before the count.
    bank = Account.objects.filter(table=s.table, kind=Account.Kind.BANK).first()  # none at a cercle
    while bank is not None and balance(bank) < 0:
        yield from _mind_the_bank(s)
    yield pace.pause(s.rng, pace.FLOAT_COUNT)
    expected = rundown(s.open_shift).expected
    count = yield from _count(s, FloatCount.Moment.CLOSING, chips_for(expected))
    yield pace.pause(s.rng, pace.OPEN_SEANCE)
    shift_close(actor=s.crew.chef, shift=s.open_shift, count_id=count.pk)
