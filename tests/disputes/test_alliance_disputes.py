"""Disputes about a deal of Alliance: the chef de partie states what the records got wrong (a card
misplayed, a call), the engine replays the deal as found, and the difference between what the deal
as found settles and what was posted moves between the players' accounts, under the same controls
as every dispute (whoever recorded never decides; above the threshold, a second approver)."""

from __future__ import annotations

import datetime as dt
import functools
from collections import Counter

import pytest

from casino.disputes.models import Decision, Dispute, DisputeState, about_seances
from casino.disputes.recompute import InvalidFinding, RefusedAsFound
from casino.disputes.services import (
    decision_approve,
    dispute_decide,
    dispute_raise,
    dispute_review,
    recomputation,
    recorders,
)
from casino.errors import Conflict, SegregationViolation
from casino.floor.models import Account, Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import DealPlay, DealSettlement
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import balance, duty_assign, reglement_post, table_create
from casino.games.replay import replay
from casino.people.roles import Role
from tests.actors import hire
from tests.disputes.test_disputes import dispute_movements, first_article
from tests.disputes.test_four_eyes import refused
from tests.floor.alliance_world import (
    MARK,
    cercle_pack,
    cercle_seance,
    cercle_table,
    play_act_by_act,
    simulated,
)

pytestmark = pytest.mark.django_db

# Seed 2: ana's lever; carl played the AD fourth in trick 2 and the 3D first in trick 12, recorded
# the other way round. As found, the deal settles otherwise.
MISPLAYED = 2
SWAPPED = [{"trick": 2, "place": 4, "card": "AD"}, {"trick": 12, "place": 1, "card": "3D"}]
# Seed 7: ben's "alliance" (trumps D, the KC called) was a "solo" without résistance.
MISCALLED = 7


@pytest.fixture
def seance(cast, posted):
    shift = cercle_seance(cast, cercle_table(cast))
    cercle_pack(cast, shift)
    return shift


def cercle_with_threshold(cast, threshold):
    """A cercle table whose posted règlement sends corrections above ``threshold`` to a second
    approver, its séance open and its pack in play."""
    reglement = reglement_post(
        actor=cast.commissaire,
        name="cercle-strict",
        spec={"preset": "baden-1854", "overrides": {"cercle_fee": 30}},
        effective_from=dt.date(2026, 1, 1),
        correction_approval_threshold=threshold,
    )
    table = table_create(
        actor=cast.directeur,
        number=6,
        game="alliance",
        reglement_id=reglement.pk,
        min_stake=MARK,
        max_stake=MARK,
    )
    shift = cercle_seance(cast, table)
    cercle_pack(cast, shift)
    return shift


def posted_for(deal):
    """What was posted for the deal, net per account."""
    net = Counter()
    for m in Movement.objects.filter(reference=f"deal:{deal.pk}").select_related("credit", "debit"):
        net[m.debit.code] += m.amount
        net[m.credit.code] -= m.amount
    return net


def moved(dispute):
    """What the dispute's corrections moved, net per account."""
    net = Counter()
    for source, target, amount in dispute_movements(dispute):
        net[source] -= amount
        net[target] += amount
    return net


def as_found(deal, found):
    """The deal's replay document with the cards of ``found`` at their places."""
    document = deal_document(deal)
    for f in found:
        document["tricks"][f["trick"] - 1][f["place"] - 1] = f["card"]
    return document


def raised(cast, deal, actor=None):
    return dispute_raise(
        actor=actor or cast.caissier,
        subject="deal",
        subject_id=deal.pk,
        claim="carl played the ace of diamonds in the second trick",
        on_behalf_of="patron:ana",
    )


def decide(actor, dispute, **kwargs):
    return dispute_decide(
        actor=actor,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the camera shows the ace",
        **kwargs,
    )


def test_a_misplayed_card_moves_the_difference_between_the_deal_as_found_and_what_was_posted(
    cast, seance
):
    deal = play_act_by_act(cast, seance, simulated(MISPLAYED))
    tricks = deal_document(deal)["tricks"]
    assert (tricks[1][3], tricks[11][0]) == ("3D", "AD")  # as recorded
    before = posted_for(deal)
    records = (DealPlay.objects.filter(deal=deal).count(), deal.settlement.outcome)
    dispute = raised(cast, deal)
    assert (dispute.seance(), dispute.reglement) == (seance, deal.reglement)
    assert list(about_seances([seance.pk])) == [dispute]  # its séance's report lists it
    assert recorders(dispute) == {cast.croupier.pk}
    assert recomputation(dispute).corrections == []  # nothing found, nothing owed

    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decision = decide(cast.chef, dispute, findings=SWAPPED)

    settles = replay(as_found(deal, SWAPPED))
    fee_box = Account.objects.get(table=seance.table, kind=Account.Kind.FEE_BOX).code
    assert moved(dispute) == Counter(
        {
            p: settles["money"][p] - before[p]
            for p in deal.players
            if settles["money"][p] != before[p]
        }
    )
    assert len(moved(dispute)) == 4  # each of the four players, by 2800 one way or the other
    assert fee_box not in moved(dispute)  # still played out: the fee stands
    assert settles["fee"] == deal.settlement.outcome["fee"] == 30
    assert decision.findings == SWAPPED
    assert Dispute.objects.get(pk=dispute.pk).state == DisputeState.DECIDED
    assert {m.kind for m in Movement.objects.filter(reference=dispute.reference)} == {
        Movement.Kind.DISPUTE_CORRECTION
    }
    # The deal's records and what it posted are as they were; the ledger still nets to zero.
    assert posted_for(deal) == before
    assert (DealPlay.objects.filter(deal=deal).count(), DealSettlement.objects.get().outcome) == (
        records
    )
    assert sum(balance(a) for a in Account.objects.all()) == 0


def test_a_wrong_call_is_corrected_with_the_auction_and_the_contract_as_found(cast, seance):
    deal = play_act_by_act(cast, seance, simulated(MISCALLED))
    recorded = deal_document(deal)
    assert (recorded["auction"], recorded["contract"]) == (
        ["pass", "alliance", "pass", "pass", "pass"],
        {"trumps": "D", "called": "KC"},
    )
    found = {"auction": ["pass", "solo", "pass", "pass", "pass"], "contract": {"trumps": "D"}}
    dispute = raised(cast, deal)
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    # The auction as found without its contract: an alliance's contract is no solo's.
    with pytest.raises(RefusedAsFound) as wrong:
        decide(cast.chef, dispute, findings=[{"auction": found["auction"]}])
    assert (wrong.value.code, wrong.value.where) == ("bad_contract", "contract")
    decide(cast.chef, dispute, findings=[found])
    settles = replay({**recorded, **found})
    assert (settles["game"], settles["declarer"]) == ("solo", "patron:ben")
    before = posted_for(deal)
    assert moved(dispute) == Counter(
        {
            p: settles["money"][p] - before[p]
            for p in deal.players
            if settles["money"][p] != before[p]
        }
    )
    assert sum(balance(a) for a in Account.objects.all()) == 0


def test_a_card_not_in_the_player_s_hand_is_refused_with_the_engine_s_code(cast, chef2, seance):
    deal = play_act_by_act(cast, seance, simulated(MISPLAYED))
    first = deal_document(deal)["tricks"][0]
    dispute = raised(cast, deal)
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    act = functools.partial(
        dispute_decide, actor=cast.chef, articles=[first_article(dispute)], reasoning="seen"
    )
    # The third player's card found in the second's place: the second never held it.
    error = refused(
        RefusedAsFound,
        "not_in_hand",
        functools.partial(act, findings=[{"trick": 1, "place": 2, "card": first[2]}]),
        dispute,
    )
    assert error.where == "tricks[0][1]"
    assert first[2] in error.message
    # Findings of the wrong shape are refused with their field.
    for findings, where in (
        ([{"trick": 13, "place": 1, "card": "AD"}], "findings[0].trick"),
        ([{"trick": 1, "place": 1, "card": "ZZ"}], "findings[0].card"),
        ([{"trick": 1, "place": 1}], "findings[0]"),
        ([{"stake": 1, "rank": "7"}], "findings[0]"),
        ([{"auction": ["pass", "bid"]}], "findings[0].auction[1]"),
        ([{"auction": ["pass"]}, {"contract": {"trumps": "D"}}], "findings[1]"),
        ([*SWAPPED, SWAPPED[0]], "findings[2].trick"),
    ):
        error = refused(
            InvalidFinding, "invalid_finding", functools.partial(act, findings=findings), dispute
        )
        assert error.where == where, findings
    assert not Decision.objects.exists()
    assert dispute_movements(dispute) == []


def test_the_croupier_who_recorded_the_deal_does_not_decide(cast, seance):
    both = hire(cast.directeur, "croupier_chef", Role.CROUPIER, Role.CHEF_DE_PARTIE)
    duty_assign(actor=cast.chef, shift_id=seance.pk, person=both, post="croupier")
    deal = play_act_by_act(cast, seance, simulated(MISPLAYED), actor=both)
    dispute = raised(cast, deal)
    assert recorders(dispute) == {both.pk}
    refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(dispute_review, actor=both, note="mine"),
        dispute,
    )
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    error = refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(
            dispute_decide,
            actor=both,
            articles=[first_article(dispute)],
            reasoning="my own deal",
            findings=SWAPPED,
        ),
        dispute,
    )
    assert "recorded the contested act" in error.message
    decide(cast.chef, dispute, findings=SWAPPED)
    assert len(dispute_movements(dispute)) == 2


def test_above_the_threshold_the_correction_waits_for_a_second_approver(cast, posted):
    seance = cercle_with_threshold(cast, 1000)
    deal = play_act_by_act(cast, seance, simulated(MISPLAYED))
    dispute = raised(cast, deal, actor=cast.directeur)  # who raised it is no second approver
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decision = decide(cast.chef, dispute, findings=SWAPPED)
    assert "threshold 1000" in decision.approval_grounds
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.AWAITING_APPROVAL
    assert dispute_movements(dispute) == []  # nothing moves before the second approver
    refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(decision_approve, actor=cast.directeur, note="mine"),
        dispute,
    )
    decision_approve(actor=cast.commissaire, dispute_id=dispute.pk, note="seen the camera")
    assert sum(amount for *_, amount in dispute_movements(dispute)) == 5600
    assert sum(balance(a) for a in Account.objects.all()) == 0


def test_a_deal_still_played_is_contested_once_over(cast, seance):
    deal = play_act_by_act(cast, seance, simulated(MISPLAYED))
    sheet = deal_document(deal)
    players = sheet["players"]
    again = deals.deal_open(
        actor=cast.croupier, shift_id=seance.pk, dealer=players[-1], cut_by=players[-2]
    )
    with pytest.raises(Conflict) as early:
        raised(cast, again)
    assert early.value.where == "subject_id"
    assert not Dispute.objects.exists()


def test_an_alliance_dispute_is_decided_over_the_api_with_the_cards_as_found(api, cast, seance):
    from tests.disputes.test_disputes_api import act

    deal = play_act_by_act(cast, seance, simulated(MISPLAYED))
    croupier, chef = api(cast.croupier), api(cast.chef)
    answer = act(
        croupier, "/api/v1/disputes", {"subject": "deal", "subject_id": deal.pk, "claim": "the AD"}
    )
    assert answer.status_code == 201, answer.json()
    assert answer.json()["recomputation"]["corrections"] == []
    url = f"/api/v1/disputes/{answer.json()['id']}"
    assert act(chef, f"{url}/review", {"note": "heard"}).status_code == 201
    body = {"articles": [first_article(Dispute.objects.get())], "reasoning": "the camera"}
    first = deal_document(deal)["tricks"][0]
    for findings, status, code, where in (
        ([{"trick": 1, "place": 2, "card": first[2]}], 422, "not_in_hand", "tricks[0][1]"),
        ([{"trick": 13, "place": 1, "card": "AD"}], 400, "invalid", "findings[0].trick"),
        ([{"auction": ["pass", "bid"]}], 400, "invalid", "findings[0].auction[1]"),
    ):
        refusal = act(chef, f"{url}/decide", {**body, "findings": findings})
        assert refusal.status_code == status, refusal.json()
        assert (refusal.json()["code"], refusal.json()["where"]) == (code, where)
    assert not Decision.objects.exists()
    decided = act(chef, f"{url}/decide", {**body, "findings": SWAPPED})
    assert decided.status_code == 201, decided.json()
    assert decided.json()["decisions"][0]["findings"] == SWAPPED
    assert len(dispute_movements(Dispute.objects.get())) == 2


def test_an_alliance_dispute_is_decided_in_the_admin_with_ordinary_fields(cast, seance):
    from tests.disputes.test_disputes_admin import logged_in, refusal

    deal = play_act_by_act(cast, seance, simulated(MISCALLED))
    dispute = raised(cast, deal)
    chef = logged_in(cast.chef)
    url = f"/admin/disputes/dispute/{dispute.pk}"
    assert chef.post(f"{url}/review/", {"note": "heard"}).status_code == 302
    page = chef.get(f"{url}/decide/")
    assert "Les cartes jouées telles que constatées" in page.content.decode()
    # The rows as the page offers them: the calls as recorded, the cards' rows blank.
    data = {"articles": [first_article(dispute)], "reasoning": "the camera"}
    for formset in page.context["form"].formsets:
        data[f"{formset.prefix}-TOTAL_FORMS"] = len(formset.forms)
        data[f"{formset.prefix}-INITIAL_FORMS"] = formset.initial_form_count()
        for i, row in enumerate(formset.forms):
            for name, value in row.initial.items():
                data[f"{formset.prefix}-{i}-{name}"] = value
    assert data["calls-0-auction"] == "pass alliance pass pass pass"
    wrong = chef.post(
        f"{url}/decide/", {**data, "plays-0-trick": "1", "plays-0-place": "1", "plays-0-card": "ZZ"}
    )
    assert wrong.status_code == 200
    assert "&#x27;ZZ&#x27; n&#x27;est pas une carte" in refusal(wrong)
    assert not Decision.objects.exists()
    # The call as found: a solo, its called card cleared.
    solo = {**data, "calls-0-auction": "pass solo pass pass pass", "calls-0-called": ""}
    done = chef.post(f"{url}/decide/", solo)
    assert done.status_code == 302, refusal(done)
    assert Decision.objects.get().findings == [
        {"auction": ["pass", "solo", "pass", "pass", "pass"], "contract": {"trumps": "D"}}
    ]
    assert len(dispute_movements(dispute)) > 0
