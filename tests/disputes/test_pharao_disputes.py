"""Disputes about a Pharao stake or draw: the taille replayed by the engine with the stake or the
draw's cards as found, the difference in money as the correction, the four-eyes rules as for
coups, and the taille's records untouched."""

from __future__ import annotations

import pytest

from casino.disputes.models import Decision, Dispute, about_seances
from casino.disputes.recompute import InvalidFinding
from casino.disputes.services import (
    decision_approve,
    dispute_decide,
    dispute_raise,
    dispute_review,
    recomputation,
    recorders,
)
from casino.errors import Conflict, SegregationViolation
from casino.floor.models import Account
from casino.floor.play.pharao.models import PharaoDraw, PharaoSettlement
from casino.floor.play.pharao.tailles import (
    pharao_approval_give,
    pharao_stake_place,
    pharao_stake_reduce,
    taille_lay_card,
    taille_open,
)
from casino.floor.services import balance
from tests.conftest import open_seance
from tests.disputes.test_disputes import dispute_movements, first_article
from tests.floor.pharao_world import pack_order, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db

# Draw 1: 3C left (the bank's) | 7H right; draw 2: 7C | 2D; draw 3: 3D | 9S.
ORDER = pack_order(["3C", "7H", "7C", "2D", "3D", "9S"], "KS")


@pytest.fixture
def taille(cast, posted):
    seance = open_seance(cast, pharao_table(cast))
    single_pack_in_play(cast, seance)
    return taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card="KS")


def lay(cast, taille, cards):
    for code in cards:
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=code)


def on_three(cast, taille):
    """Seat 4's 1000 on the 3, recorded by the croupier: it loses at draw 1 (3C left)."""
    return pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref="a", holder="4", rank="3", amount=1000
    )


def decide(cast, dispute, findings, decider=None):
    dispute_review(actor=decider or cast.chef, dispute_id=dispute.pk, note="taken up")
    return dispute_decide(
        actor=decider or cast.chef,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the camera shows it",
        findings=findings,
    )


def test_a_stake_recorded_on_the_wrong_rank_is_recomputed_by_the_engine(cast, taille):
    stake = on_three(cast, taille)
    lay(cast, taille, ORDER)  # the whole taille: what stood at the end was returned
    dispute = dispute_raise(
        actor=cast.croupier,
        subject="pharao_stake",
        subject_id=stake.pk,
        claim="the patron's stake was on the 7, not the 3",
        on_behalf_of="seat 4",
    )
    assert dispute.seance() == taille.shift
    assert list(about_seances([taille.shift_id])) == [dispute]  # its séance's report lists it
    assert dispute.reglement == taille.reglement
    found = [{"stake": stake.pk, "rank": "7"}]
    shown = recomputation(dispute, found)
    # As recorded: lost at draw 1. As found: the 7 wins draw 1 (7H right) and, left standing,
    # loses at draw 2 (7C left): the patron is owed the 1000 the bank took.
    assert [(r["draw"], r["outcome"], r["to_bank"]) for r in shown.recorded] == [(1, "lost", 1000)]
    assert [(r["draw"], r["outcome"], r["paid"], r["to_bank"]) for r in shown.computed] == [
        (1, "won", 1000, 0),
        (2, "lost", 0, 1000),
    ]
    assert shown.corrections == [("T3:bank", "T3:seat:4", 1000)]
    assert recorders(dispute) == {cast.croupier.pk}  # kept out of its review and decision
    decision = decide(cast, dispute, found)
    assert decision.corrections == [["T3:bank", "T3:seat:4", 1000]]
    assert dispute_movements(dispute) == [("T3:bank", "T3:seat:4", 1000)]
    assert sum(balance(a) for a in Account.objects.all()) == 0
    # History is not edited: the stake and its settlement stand as recorded.
    stake.refresh_from_db()
    assert stake.rank == "3"
    assert PharaoSettlement.objects.get(stake=stake).outcome == "lost"


def test_a_draw_whose_cards_were_recorded_on_the_wrong_sides_is_recomputed(cast, taille):
    stake = on_three(cast, taille)
    lay(cast, taille, ORDER)
    draw = PharaoDraw.objects.get(taille=taille, number=1)
    dispute = dispute_raise(
        actor=cast.caissier,
        subject="pharao_draw",
        subject_id=draw.pk,
        claim="the 3 came right, for the players",
    )
    found = [{"draw": 1, "bank": "7H", "players": "3C"}]
    # The 3 as found wins draw 1, then loses at draw 3 (3D left): the 1000 lost at draw 1 is owed.
    assert recomputation(dispute, found).corrections == [("T3:bank", "T3:seat:4", 1000)]
    decide(cast, dispute, found)
    assert dispute_movements(dispute) == [("T3:bank", "T3:seat:4", 1000)]
    assert (draw.bank_card, draw.players_card) == ("3C", "7H")
    # Nothing found, nothing owed.
    assert recomputation(dispute, []).corrections == []
    # The bottom card shown at the opening keeps its place.
    with pytest.raises(InvalidFinding, match="KS"):
        recomputation(dispute, [{"draw": 2, "bank": "KS"}])
    with pytest.raises(InvalidFinding):
        recomputation(dispute, [{"draw": 27, "bank": "3C"}])
    assert stake.settlements.count() == 1


def test_the_chef_who_approved_an_act_on_the_stake_does_not_decide(cast, chef2, taille):
    stake = pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref="b", holder="5", rank="9", amount=1000
    )
    lay(cast, taille, ORDER[:2])  # the 9 neither wins nor loses
    pharao_approval_give(actor=cast.chef, stake_id=stake.pk, act="reduce", amount=400)
    pharao_stake_reduce(actor=cast.croupier, stake_id=stake.pk, amount=400)
    lay(cast, taille, ORDER[2:])  # 9S right at draw 3: the 600 left wins
    dispute = dispute_raise(
        actor=cast.croupier,
        subject="pharao_stake",
        subject_id=stake.pk,
        claim="the reduction was never asked",
    )
    with pytest.raises(SegregationViolation):
        dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="mine")
    # Findings amend stakes and cards, not the acts the records hold: the decider orders the
    # 400 the void reduction cost himself, with a reason; departing from the engine, it waits
    # for a second approver before anything moves.
    dispute_review(actor=chef2, dispute_id=dispute.pk, note="taken up")
    decision = dispute_decide(
        actor=chef2,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="no approval was asked: the reduction is void",
        corrections=[["T3:bank", "T3:seat:5", 400]],
        override_reason="the approval was given after the fact",
    )
    assert dispute_movements(dispute) == []
    decision_approve(actor=cast.commissaire, dispute_id=dispute.pk, note="checked the camera")
    assert dispute_movements(dispute) == [("T3:bank", "T3:seat:5", 400)]
    assert decision.findings == []


def test_a_dispute_about_a_taille_still_dealt_is_decided_at_its_end(cast, taille):
    on_three(cast, taille)
    lay(cast, taille, ORDER[:4])
    dispute = dispute_raise(
        actor=cast.caissier,
        subject="pharao_draw",
        subject_id=PharaoDraw.objects.get(taille=taille, number=1).pk,
        claim="the 3 came right",
    )
    found = [{"draw": 1, "bank": "7H", "players": "3C"}]
    # As found the 3 would still stand: money on the layout the records do not hold.
    with pytest.raises(Conflict, match="not over"):
        recomputation(dispute, found)
    lay(cast, taille, ORDER[4:])
    assert recomputation(dispute, found).corrections == [("T3:bank", "T3:seat:4", 1000)]


def test_a_pharao_dispute_is_decided_over_the_api_with_the_stake_and_the_draw_as_found(
    api, cast, taille
):
    """The same findings as above, sent by the chef de partie's terminal: a rank as found and a
    draw's cards as found are fields of the decision, and a finding of the wrong shape is refused
    with its field, nothing recorded."""
    from tests.disputes.test_disputes_api import act

    stake = on_three(cast, taille)
    lay(cast, taille, ORDER)
    croupier, chef = api(cast.croupier), api(cast.chef)
    raised = act(
        croupier,
        "/api/v1/disputes",
        {"subject": "pharao_stake", "subject_id": stake.pk, "claim": "on the 7"},
    )
    assert raised.status_code == 201, raised.json()
    url = f"/api/v1/disputes/{raised.json()['id']}"
    assert act(chef, f"{url}/review", {"note": "heard"}).status_code == 201
    body = {"articles": [first_article(Dispute.objects.get())], "reasoning": "the camera"}
    # A draw finding that names no side, then a Trente-et-Quarante field at Pharao: refused.
    for findings, where in (
        ([{"draw": 1}], "findings[0]"),
        ([{"stake": stake.pk, "chance": "rouge"}], "findings[0]"),
    ):
        refused = act(chef, f"{url}/decide", {**body, "findings": findings})
        assert refused.status_code == 422, refused.json()
        assert refused.json()["where"] == where, refused.json()
    assert not Decision.objects.exists()
    found = [{"stake": stake.pk, "rank": "7"}, {"draw": 2, "bank": "7C", "players": "2D"}]
    decided = act(chef, f"{url}/decide", {**body, "findings": found})
    assert decided.status_code == 201, decided.json()
    assert decided.json()["decisions"][0]["findings"] == found
    assert dispute_movements(Dispute.objects.get()) == [("T3:bank", "T3:seat:4", 1000)]


def test_a_pharao_dispute_is_decided_in_the_admin_with_a_rank_and_a_draw_as_found(cast, taille):
    """The decision's page offers a row per stake of the taille (its rank, its amount as found)
    and rows for draws as found, in ordinary fields; a card that is not one is refused on the
    page and nothing is recorded."""
    from tests.disputes.test_disputes_admin import decision_rows, logged_in, refusal

    stake = on_three(cast, taille)
    lay(cast, taille, ORDER)
    dispute = dispute_raise(
        actor=cast.croupier, subject="pharao_stake", subject_id=stake.pk, claim="on the 7"
    )
    chef = logged_in(cast.chef)
    url = f"/admin/disputes/dispute/{dispute.pk}"
    assert chef.post(f"{url}/review/", {"note": "heard"}).status_code == 302
    page = chef.get(f"{url}/decide/").content.decode()
    assert "Rang constaté" in page
    assert "Les tirages tels que constatés" in page
    base = {"articles": [first_article(dispute)], "reasoning": "the camera"}
    rows = decision_rows(chef, url, findings={stake.pk: {"rank": "7"}})
    wrong = chef.post(f"{url}/decide/", {**base, **rows, "draws-0-draw": "1", "draws-0-bank": "ZZ"})
    assert wrong.status_code == 200
    assert "&#x27;ZZ&#x27; n&#x27;est pas une carte" in refusal(wrong)
    assert not Decision.objects.exists()
    done = chef.post(f"{url}/decide/", {**base, **rows})
    assert done.status_code == 302, done.content.decode()[:2000]
    assert Decision.objects.get().findings == [{"stake": stake.pk, "rank": "7"}]
    assert dispute_movements(dispute) == [("T3:bank", "T3:seat:4", 1000)]
