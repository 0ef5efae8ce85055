"""The cercle's controls, each tried as the attack it stops: nobody acts alone, as someone else,
or away from their post. A croupier records a deal only at the table where he is on duty, and
not once relieved; nobody else records one (the director, a superuser, the commissioner, the
cashier); only the cashier moves a patron's money, never more than he holds and never for one of
the house's people; a patron sits at one table at a time; the player on the dealer's left cuts;
no tailleur at a cercle; nothing moves under a deal in progress (another deal, a seat, the
séance's close, the pack); the database refuses a deal rewritten by raw SQL.

Each test asserts the refusal (its code) and that nothing was recorded. The refusals that are
evidence (a call or a card out of turn, a call, card or deal the rules refuse, a card the pack
cannot hold) are recorded on purpose (``tests/floor/test_alliance.py``); here only the call out
of turn is, and the test says so."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import Anomaly, AuditEvent
from casino.errors import DomainError
from casino.floor.cage import patron_buy_in, patron_cash_out
from casino.floor.models import Account, Duty, DutyEnd, Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import (
    CercleSeat,
    CercleSeatEnd,
    Deal,
    DealCall,
    DealContract,
    DealPlay,
    DealSettlement,
)
from casino.floor.play.alliance.seats import seat_leave, seat_take
from casino.floor.services import (
    count_countersign,
    count_record,
    duty_assign,
    duty_end,
    shift_close,
    shift_open,
)
from casino.people.roles import Role
from casino.people.services import staff_create
from shoes.models import CardLaid, PackEvent
from shoes.services import (
    cards_dealt,
    cards_pass,
    pack_open,
    pack_retire,
    pack_shuffled_and_cut,
    replacement_demand,
)
from tests.conftest import signed_count
from tests.floor.alliance_world import (
    BUY_IN,
    cercle_pack,
    cercle_seance,
    cercle_table,
    play_act_by_act,
    sheet,
    simulated,
)
from tests.floor.test_at_most_one import together

pytestmark = pytest.mark.django_db

RECORDS = (
    Deal,
    DealCall,
    DealContract,
    DealPlay,
    DealSettlement,
    CercleSeat,
    CercleSeatEnd,
    CardLaid,
    PackEvent,
    Movement,
    Account,
    Duty,
    DutyEnd,
    AuditEvent,
    Anomaly,
)


def recorded() -> dict[str, Any]:
    """What a refused act must leave as it was: the rows of every record it could write, and
    the deals' phases and the packs' states (the only things that move)."""
    from shoes.models import Pack

    return {
        **{model.__name__: model.objects.count() for model in RECORDS},
        "phases": dict(Deal.objects.values_list("id", "phase")),
        "packs": dict(Pack.objects.values_list("id", "state")),
    }


def refused(code: str, act: Any, /, **arguments: Any) -> None:
    """The act is refused under ``code`` and records nothing. It runs in a transaction of its
    own, as its callers give it (``cards_dealt`` joins its caller's)."""
    before = recorded()
    with pytest.raises(DomainError) as refusal, transaction.atomic():
        act(**arguments)
    assert refusal.value.code == code, refusal.value.message
    assert recorded() == before


@pytest.fixture
def seance(cast, posted):
    """Table 5 in séance, four patrons seated, its pack opened."""
    shift = cercle_seance(cast, cercle_table(cast))
    cercle_pack(cast, shift)
    return shift


@pytest.fixture
def next_table(cast, posted):
    """Table 6, a second cercle in séance with a chef de partie and a croupier of its own."""
    chef, croupier = (
        staff_create(actor=cast.directeur, username=f"{name}6", full_name=name, roles=[role])
        for name, role in (("chef", Role.CHEF_DE_PARTIE), ("croupier", Role.CROUPIER))
    )
    table = cercle_table(cast, number=6)
    count = count_record(actor=croupier, table_id=table.pk, moment="opening", chips={"100": 0})
    count_countersign(actor=cast.directeur, count_id=count.pk)
    shift = shift_open(
        actor=chef, table=table, count_id=count.pk, tailleur=None, croupiers=[croupier]
    )
    return SimpleNamespace(chef=chef, croupier=croupier, shift=shift)


class Stop(Exception):
    """Where ``deal_up_to`` stops the deal."""


def deal_up_to(cast: Any, shift: Any, service: str, seed: int = 1) -> tuple[Deal, dict[str, Any]]:
    """A simulated deal played through the services up to its first ``service`` act (not done);
    returns the deal and its sheet."""

    def act(called: Any, **arguments: Any) -> Any:
        if called.__name__ == service:
            raise Stop
        return called(**arguments)

    sim = simulated(seed)
    with pytest.raises(Stop):
        play_act_by_act(cast, shift, sim, act=act)
    deal = Deal.objects.exclude(phase="over").get(shift=shift)
    return deal, sheet(sim)


# --- away from one's post ---------------------------------------------------------------------------


def test_a_croupier_on_duty_at_another_table_records_nothing_here(cast, seance, next_table):
    deal, doc = deal_up_to(cast, seance, "deal_cards")
    stranger = next_table.croupier
    for shift in (seance, next_table.shift):  # this séance's pack, under either séance
        refused(
            "not_on_duty",
            cards_dealt,
            actor=stranger,
            pack_id=deal.pack_id,
            codes=doc["cards"],
            shift=shift,
        )
    refused("not_on_duty", deals.deal_cards, actor=stranger, deal_id=deal.pk, cards=doc["cards"])
    state = deals.deal_cards(actor=cast.croupier, deal_id=deal.pk, cards=doc["cards"])
    refused(
        "not_on_duty",
        deals.deal_call,
        actor=stranger,
        deal_id=deal.pk,
        player=state.next_caller,
        call=doc["auction"][0],
    )
    refused("not_on_duty", seat_leave, actor=stranger, shift_id=seance.pk, patron="ana")


def test_the_croupier_on_duty_here_records_the_cards_of_this_seance_only(cast, seance, next_table):
    deal, doc = deal_up_to(cast, seance, "deal_cards")
    refused(
        "conflict",
        cards_dealt,
        actor=cast.croupier,
        pack_id=deal.pack_id,
        codes=doc["cards"],
        shift=next_table.shift,
    )


def test_a_relieved_croupier_plays_no_further_card_and_his_relief_does(cast, seance):
    deal, doc = deal_up_to(cast, seance, "deal_play")
    duty = Duty.objects.get(shift=seance, person=cast.croupier, end__isnull=True)
    duty_end(actor=cast.chef, duty_id=duty.pk, reason="pause")
    first = doc["tricks"][0][0]
    vorhand = doc["players"][0]
    refused(
        "not_on_duty",
        deals.deal_play,
        actor=cast.croupier,
        deal_id=deal.pk,
        player=vorhand,
        code=first,
    )
    refused("not_on_duty", seat_leave, actor=cast.croupier, shift_id=seance.pk, patron="ana")
    relief = staff_create(
        actor=cast.directeur, username="relief", full_name="Relief", roles=[Role.CROUPIER]
    )
    duty_assign(actor=cast.chef, shift_id=seance.pk, person=relief, post="croupier")
    deals.deal_play(actor=relief, deal_id=deal.pk, player=vorhand, code=first)
    assert DealPlay.objects.get(deal=deal).by == relief


@pytest.mark.parametrize("who", ["directeur", "root", "commissaire", "caissier", "tailleur"])
def test_nobody_but_the_cercle_staff_on_duty_records_a_card(cast, seance, who):
    deal, doc = deal_up_to(cast, seance, "deal_play")
    intruder = getattr(cast, who)
    refused(
        "role_required",
        deals.deal_play,
        actor=intruder,
        deal_id=deal.pk,
        player=doc["players"][0],
        code=doc["tricks"][0][0],
    )
    refused(
        "role_required",
        cards_dealt,
        actor=intruder,
        pack_id=deal.pack_id,
        codes=doc["cards"],
        shift=seance,
    )


# --- money: only the cashier, never more than is held, never for the house's people -------------


@pytest.mark.parametrize("who", ["croupier", "chef", "directeur", "root"])
def test_only_the_cashier_buys_in_or_cashes_out_a_patron(cast, seance, who):
    refused("role_required", patron_buy_in, actor=getattr(cast, who), patron="emil", amount=1000)
    refused("role_required", patron_cash_out, actor=getattr(cast, who), patron="ana", amount=10)


@pytest.mark.parametrize("amount", [BUY_IN + 1, -100, 0, True, 10.5, "100"])
def test_a_cashier_pays_a_patron_no_more_than_he_holds(cast, seance, amount):
    refused("invalid_movement", patron_cash_out, actor=cast.caissier, patron="ana", amount=amount)


def test_a_paid_out_balance_is_not_paid_twice(cast, seance):
    patron_buy_in(actor=cast.caissier, patron="emil", amount=1000)
    patron_cash_out(actor=cast.caissier, patron="emil")
    refused("invalid_movement", patron_cash_out, actor=cast.caissier, patron="emil")
    refused("invalid_movement", patron_cash_out, actor=cast.caissier, patron="emil", amount=1)


def test_a_chef_de_partie_does_not_seat_himself_as_a_patron(cast, seance):
    """The house's people do not play: the chef de partie who would sit at his own table (and
    arbitrate his own deals), the cashier who would buy himself in (and pay himself out)."""
    refused("segregation_of_duties", patron_buy_in, actor=cast.caissier, patron="chef", amount=1000)
    refused(
        "segregation_of_duties",
        patron_buy_in,
        actor=cast.caissier,
        patron="patron:Caissier",
        amount=1000,
    )
    refused(
        "segregation_of_duties",
        seat_take,
        actor=cast.chef,
        shift_id=seance.pk,
        seat=5,
        patron="chef",
    )


# --- one seat, one table ---------------------------------------------------------------------------


def test_a_patron_seated_here_is_not_seated_at_another_table(cast, seance, next_table):
    refused(
        "seat_taken",
        seat_take,
        actor=next_table.croupier,
        shift_id=next_table.shift.pk,
        seat=1,
        patron="ana",
    )


def test_two_tables_seating_one_patron_at_once_seat_him_once(
    transactional_db, cast, seance, next_table
):
    """Each act locks its own séance: without a lock on the patron, both would look for his
    seat at the same moment, find none, and both seat him."""
    patron_buy_in(actor=cast.caissier, patron="emil", amount=1000)

    def sit(actor: Any, shift: Any, seat: int) -> str:
        with transaction.atomic():
            seat_take(actor=actor, shift_id=shift.pk, seat=seat, patron="emil")
            time.sleep(0.3)  # the other is inside its transaction too
        return "seated"

    outcomes = together(
        lambda: sit(cast.croupier, seance, 5),
        lambda: sit(next_table.croupier, next_table.shift, 1),
    )
    codes = sorted(o if isinstance(o, str) else getattr(o, "code", repr(o)) for o in outcomes)
    assert codes == ["seat_taken", "seated"]
    assert CercleSeat.objects.filter(patron__code="patron:emil", end__isnull=True).count() == 1


# --- the deal's own order -----------------------------------------------------------------------------


def test_the_player_on_the_dealers_left_cuts_and_nobody_else(cast, seance):
    players = sheet(simulated(1))["players"]  # dealing order: the dealer last, his left before
    for cutter in (players[0], players[-1], "patron:emil", ""):
        refused(
            "wrong_cutter",
            deals.deal_open,
            actor=cast.croupier,
            shift_id=seance.pk,
            dealer=players[-1],
            cut_by=cutter,
        )
    refused(
        "not_seated",
        deals.deal_open,
        actor=cast.croupier,
        shift_id=seance.pk,
        dealer="patron:emil",
        cut_by=players[-2],
    )


def test_players_shuffle_and_cut_only_at_a_cercle(cast, shift, verified):
    """At a banking table the croupiers shuffle, then the tailleur, who presents the cut
    (``pack_cut``): the cercle's act would put the pack in play on the croupier's word alone."""
    pack = verified()
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    refused(
        "wrong_game",
        pack_shuffled_and_cut,
        actor=cast.croupier,
        pack_id=pack.pk,
        shuffled_by="M. Dupont",
        cut_by="Mme Durand",
    )


def test_no_tailleur_at_a_cercle(cast, seance, posted):
    """The players deal at a cercle: no séance opens with a tailleur, none is put on duty later."""
    table = cercle_table(cast, number=7)
    count = signed_count(cast, table, "opening", {"100": 0})
    refused(
        "not_on_duty",
        shift_open,
        actor=cast.chef,
        table=table,
        count_id=count.pk,
        tailleur=cast.tailleur,
        croupiers=[cast.croupier],
    )
    refused(
        "not_on_duty",
        duty_assign,
        actor=cast.chef,
        shift_id=seance.pk,
        person=cast.tailleur,
        post="tailleur",
    )


# --- nothing moves under a deal in progress ----------------------------------------------------------


def test_no_deal_opens_while_one_is_in_progress(cast, seance):
    _deal, doc = deal_up_to(cast, seance, "deal_call")
    players = doc["players"]
    refused(
        "deal_in_progress",
        deals.deal_open,
        actor=cast.croupier,
        shift_id=seance.pk,
        dealer=players[-1],
        cut_by=players[-2],
    )
    refused(
        "deal_in_progress",
        deals.deal_record,
        actor=cast.croupier,
        shift_id=seance.pk,
        sheet=sheet(simulated(2)),
    )


def test_no_seat_taken_or_left_while_a_deal_is_in_progress(cast, seance):
    deal_up_to(cast, seance, "deal_play")
    patron_buy_in(actor=cast.caissier, patron="emil", amount=1000)
    refused(
        "deal_in_progress",
        seat_take,
        actor=cast.croupier,
        shift_id=seance.pk,
        seat=5,
        patron="emil",
    )
    refused("deal_in_progress", seat_leave, actor=cast.croupier, shift_id=seance.pk, patron="ana")


def test_the_seance_does_not_close_mid_deal(cast, seance):
    deal_up_to(cast, seance, "deal_declare")
    count = signed_count(cast, seance.table, "closing", {"100": 0})
    refused("conflict", shift_close, actor=cast.chef, shift=seance, count_id=count.pk)
    seance.refresh_from_db()
    assert seance.closed_at is None


def test_the_pack_is_not_retired_passed_shuffled_or_replaced_mid_deal(cast, seance):
    deal, _doc = deal_up_to(cast, seance, "deal_call")
    pack = deal.pack_id
    refused("illegal_pack_state", pack_retire, actor=cast.chef, pack_id=pack, counted={})
    # The tailleur passes the cards at a banking table; at a cercle none is on duty.
    refused("role_required", cards_pass, actor=cast.croupier, pack_id=pack, undealt=[])
    refused("not_on_duty", cards_pass, actor=cast.tailleur, pack_id=pack, undealt=[])
    refused(
        "illegal_pack_state",
        pack_shuffled_and_cut,
        actor=cast.croupier,
        pack_id=pack,
        shuffled_by="patron:dora",
        cut_by="patron:carl",
    )
    refused(
        "illegal_pack_state",
        replacement_demand,
        actor=cast.chef,
        pack_id=pack,
        demanded_by="patron:ana",
        side="players",
    )


# --- evidence: a call out of turn is refused and recorded --------------------------------------------


def test_a_call_for_a_player_whose_turn_it_is_not_is_refused_and_recorded(cast, seance):
    """Recorded on purpose: the refusal's audit event is the evidence (who tried what)."""
    deal, doc = deal_up_to(cast, seance, "deal_call")
    due = deals.deal_of(deal).next_caller
    other = next(p for p in doc["players"] if p != due)
    before = recorded()
    with pytest.raises(deals.OutOfTurn) as refusal:
        deals.deal_call(actor=cast.croupier, deal_id=deal.pk, player=other, call="solo")
    assert refusal.value.code == "out_of_turn"
    after = recorded()
    assert after.pop("AuditEvent") == before.pop("AuditEvent") + 1
    assert after == before
    event = AuditEvent.objects.order_by("-seq").first()
    assert (event.action, event.actor_id) == ("deal.out_of_turn", cast.croupier.pk)


# --- the database itself --------------------------------------------------------------------------------


def _refused_by_the_database(sql: str, deal: Deal) -> None:
    before = recorded()
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, [deal.pk])
    assert recorded() == before


def test_the_database_refuses_a_deals_phase_moved_back_or_leaping(cast, seance):
    deal, doc = deal_up_to(cast, seance, "deal_cards")
    for phase in ("contract", "play", "over"):  # past the cards, the auction, the play
        _refused_by_the_database(f"UPDATE floor_deal SET phase = '{phase}' WHERE id = %s", deal)
    deals.deal_cards(actor=cast.croupier, deal_id=deal.pk, cards=doc["cards"])
    _refused_by_the_database("UPDATE floor_deal SET phase = 'dealing' WHERE id = %s", deal)
    deal.refresh_from_db()
    assert deal.phase == "auction"


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE floor_deal SET players = '[]' WHERE id = %s",
        "UPDATE floor_deal SET mark_value = 1 WHERE id = %s",
        "UPDATE floor_deal SET cut_by = 'patron:ana' WHERE id = %s",
        "DELETE FROM floor_deal WHERE id = %s",
        "UPDATE floor_dealplay SET card = 'AS' WHERE deal_id = %s",
        "UPDATE floor_dealplay SET player = 'patron:ben' WHERE deal_id = %s",
        "DELETE FROM floor_dealplay WHERE deal_id = %s",
        "UPDATE floor_dealcall SET call = 'solo' WHERE deal_id = %s",
        "DELETE FROM floor_dealcall WHERE deal_id = %s",
        "UPDATE floor_dealcontract SET contract = '{}' WHERE deal_id = %s",
        "UPDATE shoes_cardlaid SET card = 'AS'"
        " WHERE pack_id = (SELECT pack_id FROM floor_deal WHERE id = %s)",
    ],
)
def test_the_database_refuses_a_deals_records_rewritten(cast, seance, sql):
    deal, doc = deal_up_to(cast, seance, "deal_play")
    first = (doc["players"][0], doc["tricks"][0][0])
    deals.deal_play(actor=cast.croupier, deal_id=deal.pk, player=first[0], code=first[1])
    _refused_by_the_database(sql, deal)
    assert list(DealPlay.objects.filter(deal=deal).values_list("player", "card")) == [first]
