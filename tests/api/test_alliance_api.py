"""Alliance over the API, as a table terminal plays it: a séance of deals played act by act equals
the replay of each deal's recorded document, movement for movement; each refusal a terminal may
meet has its code and status, and is recorded where it is evidence and nowhere else."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from audit.models import Anomaly, AuditEvent
from casino.floor.models import Account
from casino.floor.play.alliance.models import CercleSeat, Deal, DealCall, DealPlay
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import shift_open
from casino.games.replay import ReplayError, replay
from casino.people.roles import Role
from tests.actors import hire
from tests.api.test_role_matrix import snapshot
from tests.conftest import FLOAT, signed_count
from tests.floor.alliance_world import (
    BUY_IN,
    FEE,
    MARK,
    NAMES,
    cercle_ready,
    codes,
    deal_in,
    sheet,
    simulated,
)

pytestmark = pytest.mark.django_db

KEYS = itertools.count()
PLAYERS = codes(NAMES[:4])


def call(client, path: str, body: Any = None, key: str | None = None):  # type: ignore[no-untyped-def]
    return client.post(
        f"/api/v1/{path}",
        {} if body is None else body,
        format="json",
        HTTP_IDEMPOTENCY_KEY=key or f"k{next(KEYS)}",
    )


def post(client, path: str, body: Any = None) -> Any:  # type: ignore[no-untyped-def]
    response = call(client, path, body)
    assert response.status_code == 201, response.json()
    return response.json()


def refused(response, status: int, code: str, where: str | None = None) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code), body
    if where is not None:
        assert body["where"] == where, body
    return body


@pytest.fixture
def empty(cast, posted):  # type: ignore[no-untyped-def]
    """A séance at table 5, a cercle table (the mark is 1.00, the fee 0.30 a player a deal),
    with its pack opened and nobody seated yet."""
    return cercle_ready(cast, players=0)


@pytest.fixture
def seance(cast, posted):  # type: ignore[no-untyped-def]
    """The séance at table 5 with ana, ben, carl and dora bought in and seated in seats 1 to 4."""
    return cercle_ready(cast)


def play_over_the_api(client, shift: Any, seed: int) -> tuple[int, list[dict[str, Any]]]:  # type: ignore[no-untyped-def]
    """The simulated deal ``seed`` played act by act as a terminal does: each call and card by
    the player the deal says is next, and among those it says are legal. Returns the deal's
    reference and every answer."""
    doc = sheet(simulated(seed))
    players = doc["players"]
    opened = post(
        client, "alliance/deals", {"shift": shift.pk, "dealer": players[-1], "cut_by": players[-2]}
    )
    assert (opened["players"], opened["phase"], opened["hands"]) == (players, "dealing", None)
    path = f"alliance/deals/{opened['id']}"
    state = post(client, f"{path}/cards", {"cards": doc["cards"]})
    answers = [opened, state]
    for word in doc["auction"]:
        assert word in state["legal_calls"]
        state = post(client, f"{path}/calls", {"player": state["next_caller"], "call": word})
        answers.append(state)
    state = post(client, f"{path}/contract", {"contract": doc["contract"]})
    answers.append(state)
    for trick in doc["tricks"]:
        for code in trick:
            assert code in state["legal_cards"]
            state = post(client, f"{path}/plays", {"player": state["next_player"], "code": code})
            answers.append(state)
    return opened["id"], answers


def test_a_seance_of_deals_over_the_api_equals_the_replay_of_each_deal(api, cast, empty):
    croupier, cashier, chef = api(cast.croupier), api(cast.caissier), api(cast.chef)
    for seat, name in enumerate(NAMES[:4], start=1):
        bought = post(cashier, "cage/buy-ins", {"patron": name, "amount": BUY_IN})
        assert bought["account"] == {
            "code": f"patron:{name}",
            "kind": "patron",
            "table": None,
            "name": name,
            "balance": BUY_IN,
        }
        post(croupier, "alliance/seats", {"shift": empty.pk, "seat": seat, "patron": name})
    fee_box = Account.objects.get(table=empty.table, kind=Account.Kind.FEE_BOX).code

    money = dict.fromkeys(PLAYERS, 0)
    played = []
    for seed in (1, 2, 3, 7):  # a solo, a forced lever, a solo with résistance, an alliance
        deal_id, answers = play_over_the_api(croupier, empty, seed)
        dealt, last = answers[1], answers[-1]
        record = Deal.objects.get(pk=deal_id)
        replayed = replay(deal_document(record))
        # What the last card answered, what a later read says and what was recorded: the replay.
        assert last["settlement"] == replayed
        assert chef.get(f"/api/v1/alliance/deals/{deal_id}").json() == last
        assert record.settlement.outcome == replayed
        assert last["phase"] == "over"
        assert (last["next_player"], last["legal_cards"]) == (None, [])
        # The terminal read the deal as the replay reads it: hands, table, tricks and winners.
        assert (dealt["hands"], dealt["table_cards"]) == (replayed["hands"], replayed["table"])
        assert [
            {k: t[k] for k in ("number", "leader", "cards", "winner")} for t in last["tricks"]
        ] == (replayed["tricks"])
        # Movement for movement: each payment at the mark value, each player's fee to the box.
        moved = chef.get(f"/api/v1/movements?deal={deal_id}&page_size=100").json()["results"]
        assert [(m["kind"], m["credit"], m["debit"], m["amount"]) for m in moved] == [
            *(
                ("marks_paid", p["from"], p["to"], p["marks"] * MARK)
                for p in replayed["payments"]
                if p["marks"]
            ),
            *(("cercle_fee", player, fee_box, FEE) for player in record.players),
        ]
        assert {m["refers_to"]["deal"] for m in moved} == {deal_id}
        for player, amount in replayed["money"].items():
            money[player] += amount
        played.append(deal_id)

    # A fifth deal from its paper sheet, through the same acts.
    recorded = post(
        croupier, "alliance/deal-sheets", {"shift": empty.pk, "sheet": sheet(simulated(4))}
    )
    assert recorded["settlement"] == replay(deal_document(Deal.objects.get(pk=recorded["id"])))
    for player, amount in recorded["settlement"]["money"].items():
        money[player] += amount
    played.append(recorded["id"])

    listed = chef.get(f"/api/v1/alliance/deals?shift={empty.pk}&phase=over").json()["results"]
    assert [d["id"] for d in listed] == played
    balances = {p: chef.get(f"/api/v1/accounts/{p}").json()["balance"] for p in PLAYERS}
    assert balances == {p: BUY_IN + money[p] for p in PLAYERS}
    box = chef.get(f"/api/v1/accounts/{fee_box}").json()["balance"]
    assert box == len(played) * 4 * FEE
    # The players' accounts net to zero against each other, plus the fees the box took.
    assert sum(money.values()) == -box
    assert chef.get(f"/api/v1/shifts/{empty.pk}").json()["rundown"]["result"] == box


def test_a_terminal_restarted_mid_deal_finds_whose_turn_it_is(api, cast, seance):
    deal, _doc = deal_in(cast, seance, 2, "auction")
    terminal = api(cast.croupier)
    table = terminal.get(f"/api/v1/tables/{seance.table.number}").json()
    assert (table["seance"], table["open_deal"], table["open_coup"]) == (seance.pk, deal.pk, None)
    found = terminal.get(f"/api/v1/alliance/deals/{table['open_deal']}").json()
    assert (found["phase"], found["next_caller"], found["legal_calls"]) == (
        "auction",
        PLAYERS[0],  # the Vorhand calls first
        ["pass", "alliance", "lever", "solo"],
    )
    assert found["calls"] == []
    assert found["couleur"] == found["table_cards"]["up"][1]
    seated = terminal.get(f"/api/v1/alliance/seats?shift={seance.pk}&seated=true").json()
    assert [s["patron"] for s in seated["results"]] == PLAYERS


# --- refusals --------------------------------------------------------------------------------------


def test_a_card_not_in_hand_or_not_following_suit_is_refused_and_recorded(api, cast, seance):
    deal, _doc = deal_in(cast, seance, 5, "play")
    terminal = api(cast.croupier)
    path = f"alliance/deals/{deal.pk}"
    state = terminal.get(f"/api/v1/{path}").json()
    vorhand, second = state["players"][0], state["players"][1]
    assert state["next_player"] == vorhand

    def play(player: str, code: str) -> Any:
        return call(terminal, f"{path}/plays", {"player": player, "code": code})

    # Not in his hand: a card of the next player's.
    refused(play(vorhand, state["in_hand"][second][0]), 422, "not_in_hand", "code")
    assert AuditEvent.objects.filter(action="deal.card_refused").count() == 1
    assert not DealPlay.objects.filter(deal=deal).exists()
    # Not following suit: the lead is of a suit the second player holds beside others.
    hand = state["in_hand"][second]
    lead = next(c for c in state["legal_cards"] if any(h[1] == c[1] for h in hand))
    post(terminal, f"{path}/plays", {"player": vorhand, "code": lead})
    off = next((h for h in hand if h[1] != lead[1]), None)
    assert off is not None, "the second player holds only the suit led: choose another seed"
    refused(play(second, off), 422, "must_follow_suit", "code")
    assert AuditEvent.objects.filter(action="deal.card_refused").count() == 2
    assert list(DealPlay.objects.filter(deal=deal).values_list("card", flat=True)) == [lead]


def test_a_call_out_of_turn_is_refused_and_recorded_once_however_often_it_is_sent(
    api, cast, seance
):
    deal, _doc = deal_in(cast, seance, 2, "auction")
    terminal = api(cast.croupier)
    path = f"alliance/deals/{deal.pk}/calls"
    late = {"player": PLAYERS[1], "call": "solo"}
    first = refused(call(terminal, path, late, key="out"), 422, "out_of_turn", "player")
    again = call(terminal, path, late, key="out")
    assert (again.status_code, again.json(), again["Idempotent-Replay"]) == (422, first, "true")
    assert AuditEvent.objects.filter(action="deal.out_of_turn").count() == 1
    assert not DealCall.objects.filter(deal=deal).exists()
    # A hold by another than the Vorhand: the auction's rule, recorded too.
    refused(call(terminal, path, {"player": PLAYERS[0], "call": "hold"}), 422, "bad_call", "call")
    assert AuditEvent.objects.filter(action="deal.call_refused").count() == 1


def test_a_deal_with_a_foreign_card_is_refused_the_anomaly_recorded_and_the_deal_waits(
    api, cast, seance
):
    deal, doc = deal_in(cast, seance, 6, "dealing")
    terminal = api(cast.croupier)
    cards = list(doc["cards"])
    cards[30] = cards[3]
    path = f"alliance/deals/{deal.pk}/cards"
    first = refused(call(terminal, path, {"cards": cards}, key="twice"), 422, "foreign_card")
    assert call(terminal, path, {"cards": cards}, key="twice").json() == first
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    found = terminal.get(f"/api/v1/alliance/deals/{deal.pk}").json()
    assert (found["phase"], found["cards"], found["hands"]) == ("dealing", [], None)
    # The right cards, as hands and table, deal it.
    dealt = post(
        terminal,
        path,
        {"hands": found_hands(doc), "table": dict(zip(("up", "down"), table_of(doc), strict=True))},
    )
    assert (dealt["phase"], dealt["cards"]) == ("auction", doc["cards"])


def found_hands(doc: dict[str, Any]) -> dict[str, list[str]]:
    return replay({**doc, "reglement": "baden-1854"})["hands"]


def table_of(doc: dict[str, Any]) -> tuple[str, list[str]]:
    table = replay({**doc, "reglement": "baden-1854"})["table"]
    return table["up"], table["down"]


@pytest.fixture
def elsewhere(cast, table):  # type: ignore[no-untyped-def]
    """A croupier on duty at another table: table 1, Trente-et-Quarante, with a second crew."""
    chef2 = hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE)
    croupier2 = hire(cast.directeur, "croupier2", Role.CROUPIER)
    count = signed_count(cast, table, "opening", FLOAT)
    shift_open(
        actor=chef2, table=table, count_id=count.pk, tailleur=cast.tailleur, croupiers=[croupier2]
    )
    return croupier2


def test_an_act_by_someone_not_on_duty_at_the_table_is_refused_and_records_nothing(
    api, cast, seance, elsewhere
):
    deal, doc = deal_in(cast, seance, 2, "auction")
    ana = CercleSeat.objects.get(shift=seance, seat=1)
    path = f"alliance/deals/{deal.pk}"
    acts = [
        ("alliance/seats", {"shift": seance.pk, "seat": 5, "patron": "ana"}),
        (f"alliance/seats/{ana.pk}/leave", {}),
        ("alliance/deals", {"shift": seance.pk, "dealer": PLAYERS[-1], "cut_by": PLAYERS[-2]}),
        (f"{path}/cards", {"cards": doc["cards"]}),
        (f"{path}/calls", {"player": PLAYERS[0], "call": doc["auction"][0]}),
        (f"{path}/contract", {"contract": doc["contract"]}),
        (f"{path}/plays", {"player": PLAYERS[0], "code": doc["tricks"][0][0]}),
        ("alliance/deal-sheets", {"shift": seance.pk, "sheet": doc}),
    ]
    people = {
        elsewhere: "not_on_duty",
        cast.directeur: "role_required",
        cast.root: "role_required",
        cast.tailleur: "role_required",
    }
    clients = {api(person): code for person, code in people.items()}  # tokens before the count
    before = snapshot()
    for client, code in clients.items():
        for act, body in acts:
            refused(call(client, act, body), 403, code)
    assert snapshot() == before


def test_a_seat_taken_twice_is_refused_and_records_nothing(api, cast, seance):
    cashier, terminal = api(cast.caissier), api(cast.croupier)
    post(cashier, "cage/buy-ins", {"patron": "emil", "amount": 1000, "name": "Emil"})
    before = snapshot()
    taken = {"shift": seance.pk, "seat": 1, "patron": "emil"}
    refused(call(terminal, "alliance/seats", taken), 409, "seat_taken", "seat")
    again = {"shift": seance.pk, "seat": 5, "patron": "patron:ana"}
    refused(call(terminal, "alliance/seats", again), 409, "seat_taken", "patron")
    assert snapshot() == before
    seated = post(terminal, "alliance/seats", {"shift": seance.pk, "seat": 5, "patron": "emil"})
    assert (seated["seat"], seated["patron"], seated["left_at"]) == (5, "patron:emil", None)
    left = post(terminal, f"alliance/seats/{seated['id']}/leave", {"reason": "fatigué"})
    assert (left["reason"], left["left_by"]) == ("fatigué", "croupier")
    refused(call(terminal, f"alliance/seats/{seated['id']}/leave"), 409, "not_seated", "patron")
    paid = post(cashier, "cage/cash-outs", {"patron": "emil"})
    assert (paid["movement"]["amount"], paid["account"]["balance"]) == (1000, 0)


def test_a_replayed_request_gets_the_same_answer_and_records_once(api, cast, seance):
    deal, _doc = deal_in(cast, seance, 2, "auction")
    terminal = api(cast.croupier)
    body = {"player": PLAYERS[0], "call": "pass"}
    first = call(terminal, f"alliance/deals/{deal.pk}/calls", body, key="once")
    again = call(terminal, f"alliance/deals/{deal.pk}/calls", body, key="once")
    assert (first.status_code, again.status_code, again["Idempotent-Replay"]) == (201, 201, "true")
    assert again.json() == first.json()
    assert first.json()["next_caller"] == PLAYERS[1]
    assert DealCall.objects.filter(deal=deal).count() == 1
    assert AuditEvent.objects.filter(action="deal.called").count() == 1
    other = call(terminal, f"alliance/deals/{deal.pk}/calls", {**body, "call": "solo"}, key="once")
    refused(other, 409, "idempotency_key_reused", "Idempotency-Key")


def test_an_unknown_field_is_refused_by_its_name(api, cast, seance):
    deal, doc = deal_in(cast, seance, 2, "auction")
    terminal = api(cast.croupier)
    before = snapshot()
    body = {"player": PLAYERS[0], "call": "pass", "bid": "pass"}
    refused(call(terminal, f"alliance/deals/{deal.pk}/calls", body), 400, "unknown_field", "bid")
    sheet_body = {"shift": seance.pk, "sheet": {**doc, "dealer": PLAYERS[-1]}}
    refused(
        call(terminal, "alliance/deal-sheets", sheet_body), 400, "unknown_field", "sheet.dealer"
    )
    assert snapshot() == before


def _auction(doc: dict[str, Any]) -> None:
    doc["auction"][3] = "hold"  # only the Vorhand holds


def _trick(doc: dict[str, Any]) -> None:
    doc["tricks"][4][2] = doc["tricks"][4][1]  # a card already played: not in his hand


def _called(doc: dict[str, Any]) -> None:
    doc["contract"]["called"] = "2C"  # a king is called


@pytest.mark.parametrize(
    ("seed", "fault", "code", "where"),
    [
        (4, _auction, "bad_call", "auction[3]"),
        (4, _trick, "not_in_hand", "tricks[4][2]"),
        (7, _called, "bad_contract", "contract.called"),
    ],
)
def test_a_sheet_with_a_fault_is_refused_where_the_replay_names_it(
    api, cast, seance, seed, fault, code, where
):
    doc = sheet(simulated(seed))
    fault(doc)
    with pytest.raises(ReplayError) as replayed:
        replay({**doc, "reglement": "baden-1854"})
    assert (replayed.value.code, replayed.value.where) == (code, where)
    terminal = api(cast.croupier)
    before = snapshot()
    answer = call(terminal, "alliance/deal-sheets", {"shift": seance.pk, "sheet": doc})
    refused(answer, 422, code, f"sheet.{where}")
    assert snapshot() == before  # the sheet is refused as a whole
