"""Pharao over the API: a whole taille played act by act equals the replay of its recorded
document, movement for movement; each refusal a terminal may meet has its code."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from audit.models import Anomaly
from casino.floor.models import Account, Movement
from casino.floor.play.pharao.models import (
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    PharaoStakeAct,
    Taille,
)
from casino.floor.play.pharao.selectors import taille_document
from casino.floor.services import balance
from casino.games.replay import replay
from tests.conftest import open_seance
from tests.floor.pharao_world import pack_order, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db

KEYS = itertools.count()
ACTS = ("collected", "withdrawn", "reduced")
# Draw 1: 3C | 7H, a wins. Draw 2: 2D | 7C, a's paroli wins. Draw 3: 7S | 4D, a's 6 loses what
# rides, e wins. Draw 4: 5H | 5S, a plié on b. Draw 5: 9D | 2C, c loses. The rest in plain order.
ORDER = pack_order(["3C", "7H", "2D", "7C", "7S", "4D", "5H", "5S", "9D", "2C"], "KS")


@pytest.fixture
def seance(cast, posted):
    return open_seance(cast, pharao_table(cast))


@pytest.fixture
def pack(cast, seance):
    return single_pack_in_play(cast, seance)


def post(api, user, path, body=None, status=201):
    response = api(user).post(
        f"/api/v1/{path}", body or {}, format="json", HTTP_IDEMPOTENCY_KEY=f"k{next(KEYS)}"
    )
    assert response.status_code == status, response.json()
    return response.json()


def refused(response, status, code):
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code), body
    return body


def test_a_taille_played_through_the_api_equals_the_replay_of_its_record(api, cast, seance, pack):
    taille = post(api, cast.tailleur, "pharao/tailles", {"shift": seance.pk, "bottom_card": "KS"})
    cards = iter(ORDER)

    def draw(count=1):
        for _ in range(count):
            post(api, cast.tailleur, f"pharao/tailles/{taille['id']}/cards", {"code": next(cards)})

    def stake(ref, holder, rank, amount):
        body = {"taille": taille["id"], "ref": ref, "holder": holder, "rank": rank}
        return post(api, cast.croupier, "pharao/stakes", {**body, "amount": amount})["id"]

    def act(stake_id, what, body=None):
        post(api, cast.croupier, f"pharao/stakes/{stake_id}/{what}", body)

    def approve(stake_id, what, amount=None):
        body = {"stake": stake_id, "act": what} | ({"amount": amount} if amount else {})
        post(api, cast.chef, "pharao/approvals", body)

    a = stake("a", "1", "7", 1000)
    b = stake("b", "2", "5", 500)
    c = stake("c", "patron:42", "9", 800)
    d = stake("d", "4", "Q", 600)
    draw(2)
    act(a, "mark", {"move": "paroli"})
    act(b, "raise", {"amount": 200})
    approve(c, "reduce", 300)
    act(c, "reduce", {"amount": 300})
    e = stake("e", "5", "4", 400)
    draw(2)
    act(a, "mark", {"move": "appe"})  # from paroli: the 6
    approve(d, "withdraw")
    act(d, "withdraw")
    draw(2)
    act(e, "collect")
    draw(46)

    record = Taille.objects.get(pk=taille["id"])
    assert record.phase == "ended"
    document = taille_document(record)
    replayed = replay(document)
    assert replayed["refused"] == []
    assert replayed["bottom_card"] == "KS"
    # The features of the taille, as worked out by hand.
    lines = {(d["number"], int(s["stake"])): s for d in replayed["draws"] for s in d["settlements"]}
    money = ("outcome", "paid", "returned", "to_bank", "mark")
    assert [tuple(lines[key][m] for m in money) for key in [(1, a), (2, a), (3, a)]] == [
        ("won", 1000, 0, 0, "simple"),
        ("won", 2000, 0, 0, "paroli"),
        ("lost", 0, 1000, 3000, "6"),  # the 6 rides 3000, its 1000 protected
    ]
    assert tuple(lines[(2, c)][m] for m in money) == ("reduced", 0, 300, 0, "simple")
    assert tuple(lines[(3, d)][m] for m in money) == ("withdrawn", 0, 600, 0, "simple")
    assert tuple(lines[(4, e)][m] for m in money) == ("collected", 0, 400, 0, "simple")
    assert tuple(lines[(4, b)][m] for m in money) == ("plie", 0, 0, 350, "simple")
    assert tuple(lines[(5, c)][m] for m in money) == ("lost", 0, 0, 500, "simple")

    # Draw by draw, line by line: the cards' lines are the draws' settlements, the acts' lines
    # the acts made before the draw.
    for expected in replayed["draws"]:
        found = PharaoDraw.objects.get(taille=record, number=expected["number"])
        assert (found.bank_card, found.players_card, found.plie) == (
            expected["bank"],
            expected["players"],
            expected["plie"],
        )
        lines = [
            _act_line(s, expected["number"]) if s["outcome"] in ACTS else _draw_line(found, s)
            for s in expected["settlements"]
        ]
        assert lines == expected["settlements"]
    ends = PharaoSettlement.objects.filter(taille=record, draw__isnull=True).order_by("stake_id")
    assert [_line(s) for s in ends] == expected_end(replayed)

    # Movement for movement: what the document and its replay say moved, and nothing else.
    assert _movements(record) == _expected_movements(document, replayed)
    assert balance(Account.objects.get(code="T3:layout")) == 0
    assert PharaoStakeAct.objects.filter(stake__taille=record).count() == 6


def expected_end(replayed):
    return sorted(replayed["end"]["settlements"], key=lambda s: int(s["stake"]))


def _line(s):
    return {
        "stake": str(s.stake_id),
        "outcome": s.outcome,
        "paid": s.paid,
        "returned": s.returned,
        "to_bank": s.to_bank,
        "mark": s.mark,
    }


def _draw_line(draw, expected):
    return _line(PharaoSettlement.objects.get(draw=draw, stake_id=int(expected["stake"])))


def _act_line(expected, number):
    act = PharaoStakeAct.objects.get(stake_id=int(expected["stake"]), draw=number)
    outcome = {"collect": "collected", "withdraw": "withdrawn", "reduce": "reduced"}[act.act]
    return {
        "stake": str(act.stake_id),
        "outcome": outcome,
        "paid": 0,
        "returned": act.returned,
        "to_bank": 0,
        "mark": act.mark,
    }


def _movements(taille):
    return Counter(
        (m.kind, m.amount, m.reference.rsplit(":", 1)[1], m.credit.kind, m.debit.kind)
        for m in Movement.objects.filter(
            reference__startswith=f"taille:{taille.pk}:"
        ).select_related("credit", "debit")
    )


def _expected_movements(document, replayed):
    """Every movement the record implies: each stake placed, each raise, the winnings each mark
    puts back (what the win before it paid), and each line's money."""
    holder = {str(s.pk): s.holder.kind for s in PharaoStake.objects.select_related("holder")}
    moves = Counter()
    for s in document["stakes"]:
        moves[("stake_placed", s["amount"], s["id"], holder[s["id"]], "layout")] += 1
    for a in document["actions"]:
        if a["do"] == "raise":
            moves[("stake_placed", a["amount"], a["stake"], holder[a["stake"]], "layout")] += 1
        if a["do"] in ("paroli", "appe"):
            amount = _win_before(replayed, a["stake"], a["draw"])
            moves[("winnings_ridden", amount, a["stake"], holder[a["stake"]], "layout")] += 1
    lines = [s for d in replayed["draws"] for s in d["settlements"]]
    for s in [*lines, *replayed["end"]["settlements"]]:
        who = holder[s["stake"]]
        if s["to_bank"]:
            kind = "plie_taken" if s["outcome"] == "plie" else "loss_collected"
            moves[(kind, s["to_bank"], s["stake"], "layout", "bank")] += 1
        if s["returned"]:
            moves[("stake_returned", s["returned"], s["stake"], "layout", who)] += 1
        if s["paid"]:
            moves[("win_paid", s["paid"], s["stake"], "bank", who)] += 1
    return moves


def _win_before(replayed, stake, draw):
    """The win a mark made before ``draw`` follows: the stake's line on draw ``draw - 1``."""
    # A stake reduced or raised before that draw has its act's line there too: the win is the
    # draw's own line.
    lines = replayed["draws"][draw - 2]["settlements"]
    (line,) = [s for s in lines if s["stake"] == stake and s["outcome"] not in ACTS]
    assert line["outcome"] == "won"
    return line["paid"]


# --- refusals --------------------------------------------------------------------------------------


@pytest.fixture
def taille(api, cast, seance, pack):
    return post(api, cast.tailleur, "pharao/tailles", {"shift": seance.pk, "bottom_card": "KS"})


def test_the_refusals_a_terminal_meets_each_have_their_code(api, cast, taille):
    def stake(ref, rank, amount=500):
        body = {"taille": taille["id"], "ref": ref, "holder": "1", "rank": rank, "amount": amount}
        return post(api, cast.croupier, "pharao/stakes", body)["id"]

    def call(user, path, body=None, key=None):
        return api(user).post(
            f"/api/v1/{path}",
            body or {},
            format="json",
            HTTP_IDEMPOTENCY_KEY=key or f"k{next(KEYS)}",
        )

    loser = stake("l", "5")
    cards = f"pharao/tailles/{taille['id']}/cards"
    post(api, cast.tailleur, cards, {"code": "3C"})
    post(api, cast.tailleur, cards, {"code": "7H"})

    # A false paroli: refused, recorded once, and a retry of the same request records nothing more.
    body = refused(
        call(cast.croupier, f"pharao/stakes/{loser}/mark", {"move": "paroli"}, "fp"),
        422,
        "false_paroli",
    )
    assert body["where"] == "stake"
    call(cast.croupier, f"pharao/stakes/{loser}/mark", {"move": "paroli"}, "fp")
    assert Anomaly.objects.filter(detector="false_paroli").count() == 1

    # A reduction nobody approved; an approval asked of the croupier who recorded the stake.
    refused(
        call(cast.croupier, f"pharao/stakes/{loser}/reduce", {"amount": 100}), 403, "not_approved"
    )
    refused(
        call(cast.croupier, "pharao/approvals", {"stake": loser, "act": "reduce", "amount": 100}),
        403,
        "role_required",
    )
    assert not PharaoStakeAct.objects.exists()

    # A stake while a draw is being dealt; a card the pack cannot hold.
    post(api, cast.tailleur, cards, {"code": "2D"})
    late = {"taille": taille["id"], "ref": "late", "holder": "1", "rank": "9", "amount": 500}
    refused(call(cast.croupier, "pharao/stakes", late), 422, "late_stake")
    refused(call(cast.tailleur, cards, {"code": "3C"}), 422, "foreign_card")
    refused(call(cast.tailleur, cards, {"code": "2H", "side": "bank"}), 409, "wrong_side")
    assert {a.detector for a in Anomaly.objects.all()} == {
        "false_paroli",
        "late_stake",
        "foreign_card",
    }


def test_a_pharao_act_at_a_trente_et_quarante_table_is_refused(api, cast, shift, sixain_in_play):
    body = refused(
        api(cast.tailleur).post(
            "/api/v1/pharao/tailles",
            {"shift": shift.pk, "bottom_card": "KS"},
            format="json",
            HTTP_IDEMPOTENCY_KEY="wrong-game",
        ),
        422,
        "wrong_game",
    )
    assert body["where"] == "table"
    assert not Taille.objects.exists()
