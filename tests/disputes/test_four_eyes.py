"""Four eyes on money after the fact: nobody reviews, decides or approves a dispute they raised or
about acts they recorded; corrections stay within the contested record's accounts; a decision
departing from the engine, or moving more than the règlement's threshold, waits for a second
approver (the director or the commissioner) and nothing moves until then; only the raiser
withdraws, and not about their own acts. Each control is tried as the attack it stops."""

from __future__ import annotations

import datetime as dt
import functools
import itertools

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import AuditEvent
from casino.disputes.models import Decision, DecisionApproval, Dispute, DisputeState, DisputeStep
from casino.disputes.services import (
    CorrectionAccountRefused,
    InvalidDispute,
    NotTheRaiser,
    decision_approve,
    decision_refuse,
    dispute_appeal,
    dispute_decide,
    dispute_raise,
    dispute_review,
    dispute_withdraw,
)
from casino.errors import Conflict, RoleRequired, SegregationViolation
from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Account, Movement
from casino.floor.services import (
    InvalidReglementPosting,
    house_account,
    reglement_post,
    table_create,
)
from tests.disputes.test_disputes import NOIR, ROUGE, dispute_movements, first_article, played_coup

KEYS = itertools.count()


def coup_with(cast, shift, *stakes):
    """A settled coup (noir wins) with ``(ref, holder, chance, amount)`` stakes."""
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    for ref, holder, chance, amount in stakes:
        stake_place(
            actor=cast.croupier,
            coup_id=coup.pk,
            ref=ref,
            holder=holder,
            chance=chance,
            amount=amount,
        )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    for code in NOIR + ROUGE:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    coup_settle(actor=cast.croupier, coup_id=coup.pk)
    return coup


def traces(dispute):
    """Everything an act on the dispute may record."""
    dispute.refresh_from_db()
    return {
        "state": dispute.state,
        "steps": DisputeStep.objects.filter(dispute=dispute).count(),
        "decisions": Decision.objects.filter(dispute=dispute).count(),
        "approvals": DecisionApproval.objects.filter(decision__dispute=dispute).count(),
        "movements": Movement.objects.filter(reference=dispute.reference).count(),
        "events": AuditEvent.objects.count(),
    }


def refused(error, code, act, dispute, **kwargs):
    """The act is refused with ``code`` and leaves nothing behind."""
    before = traces(dispute)
    with pytest.raises(error) as raised:
        act(dispute_id=dispute.pk, **kwargs)
    assert raised.value.code == code
    assert traces(dispute) == before
    return raised.value


def decide(actor, dispute=None, *, dispute_id=None, **kwargs):
    dispute = dispute or Dispute.objects.get(pk=dispute_id)
    return dispute_decide(
        actor=actor,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning=kwargs.pop("reasoning", "heard both sides"),
        **kwargs,
    )


GESTURE = {"corrections": [["T1:bank", "T1:seat:3", 500]], "override_reason": "a gesture"}


@pytest.fixture
def stake_disputed(cast, shift, sixain_in_play):
    """Stake "a" (1000 on rouge, seat 3, placed and settled by the croupier) lost; the caissier,
    who recorded none of it, raises the patron's claim that it was on noir."""
    _, stake = played_coup(cast, shift)
    return dispute_raise(
        actor=cast.caissier, subject="stake", subject_id=stake.pk, claim="it was on noir"
    )


# --- 1. neither the raiser nor a recorder reviews or decides -----------------------------------


def test_the_raiser_neither_reviews_nor_decides_the_dispute(cast, chef2, shift, sixain_in_play):
    _, stake = played_coup(cast, shift)
    dispute = dispute_raise(
        actor=cast.chef, subject="stake", subject_id=stake.pk, claim="collected in error"
    )
    error = refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(dispute_review, actor=cast.chef, note="mine"),
        dispute,
    )
    assert "raised dispute" in error.message
    dispute_review(actor=chef2, dispute_id=dispute.pk, note="taken up by the other chef")
    noir = [{"stake": stake.pk, "chance": "noir"}]
    refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(decide, cast.chef, findings=noir),
        dispute,
    )
    decide(chef2, dispute, findings=noir)
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 2000)]


# --- 2. corrections stay within the contested record -------------------------------------------


@pytest.fixture
def two_holders(cast, shift, sixain_in_play):
    """One coup, two losing stakes: "a" of seat 3 and "b" of patron Dupont; a second table."""
    coup = coup_with(cast, shift, ("a", "3", "rouge", 1000), ("b", "patron:dupont", "rouge", 2500))
    table_create(
        actor=cast.directeur,
        number=2,
        game="trente-et-quarante",
        reglement_id=shift.table.reglement_id,
        min_stake=500,
        max_stake=600_000,
    )
    house_account(Account.Kind.CAGE)
    house_account(Account.Kind.OUTSIDE)
    return coup


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("cage", "T1:seat:3"),  # the house's cash
        ("T1:bank", "outside"),  # money leaving the house
        ("T2:bank", "T1:seat:3"),  # another table
        ("T1:bank", "patron:dupont"),  # another patron, at the same coup
    ],
)
def test_a_correction_outside_the_contested_record_is_refused(cast, two_holders, source, target):
    stake = two_holders.stakes.get(ref="a")
    dispute = dispute_raise(
        actor=cast.caissier, subject="stake", subject_id=stake.pk, claim="it was on noir"
    )
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    error = refused(
        CorrectionAccountRefused,
        "correction_account_refused",
        functools.partial(
            decide,
            cast.chef,
            corrections=[["T1:bank", "T1:seat:3", 500], [source, target, 500]],
            override_reason="a gesture",
        ),
        dispute,
    )
    assert error.where == "corrections[1]"
    assert error.http_status == 422


def test_the_engine_s_answer_is_held_to_the_contested_record_too(cast, two_holders):
    """A finding about another patron's stake would pay them through this dispute: refused."""
    a, b = two_holders.stakes.get(ref="a"), two_holders.stakes.get(ref="b")
    dispute = dispute_raise(actor=cast.caissier, subject="stake", subject_id=a.pk, claim="noir")
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    b_on_noir = [{"stake": b.pk, "chance": "noir"}]
    error = refused(
        CorrectionAccountRefused,
        "correction_account_refused",
        functools.partial(decide, cast.chef, findings=b_on_noir),
        dispute,
    )
    assert "patron:dupont" in error.message
    # About the coup, both holders' accounts are the record's: the same finding is decided.
    about_coup = dispute_raise(
        actor=cast.caissier, subject="coup", subject_id=two_holders.pk, claim="b was on noir"
    )
    dispute_review(actor=cast.chef, dispute_id=about_coup.pk, note="taken up")
    decide(cast.chef, about_coup, findings=b_on_noir)
    assert dispute_movements(about_coup) == [("T1:bank", "patron:dupont", 5000)]


def test_a_refused_account_over_the_api(api, cast, two_holders):
    stake = two_holders.stakes.get(ref="a")
    dispute = dispute_raise(
        actor=cast.caissier, subject="stake", subject_id=stake.pk, claim="it was on noir"
    )
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    answer = api(cast.chef).post(
        f"/api/v1/disputes/{dispute.pk}/decide",
        {
            "articles": [first_article(dispute)],
            "reasoning": "pay from the cage",
            "corrections": [{"credit": "cage", "debit": "T1:seat:3", "amount": 500}],
            "override_reason": "quicker",
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"fe{next(KEYS)}",
    )
    assert answer.status_code == 422
    assert (answer.json()["code"], answer.json()["where"]) == (
        "correction_account_refused",
        "corrections[0]",
    )
    assert Decision.objects.count() == 0
    assert not Movement.objects.filter(reference=dispute.reference).exists()


# --- 3. a second approver, and nothing moves before -------------------------------------------


def test_an_override_waits_for_a_second_approver_and_nothing_moves(cast, stake_disputed):
    dispute = stake_disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decision = decide(cast.chef, dispute, **GESTURE)
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.AWAITING_APPROVAL
    assert "departs" in decision.approval_grounds
    assert dispute_movements(dispute) == []

    for act in (decision_approve, decision_refuse):
        for who in (cast.chef, cast.croupier, cast.caissier, cast.inspecteur, cast.comite):
            refused(
                RoleRequired,
                "role_required",
                functools.partial(act, actor=who, note="I approve"),
                dispute,
            )
    decision_approve(actor=cast.directeur, dispute_id=dispute.pk, note="a fair gesture")
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 500)]
    moved = Movement.objects.get(reference=dispute.reference)
    assert (moved.actor, moved.shift) == (cast.directeur, None)
    approval = DecisionApproval.objects.get()
    assert (approval.decision, approval.approved, approval.by) == (decision, True, cast.directeur)
    assert AuditEvent.objects.filter(action="dispute.decision_approved").count() == 1
    refused(
        Conflict,
        "conflict",
        functools.partial(decision_approve, actor=cast.commissaire, note="again"),
        dispute,
    )


def test_the_raiser_and_the_recorders_may_not_approve(cast, chef2, shift, sixain_in_play):
    # The director raised this one: he may not be its second approver.
    _, stake = played_coup(cast, shift)
    raised = dispute_raise(
        actor=cast.directeur, subject="stake", subject_id=stake.pk, claim="seen on noir"
    )
    dispute_review(actor=cast.chef, dispute_id=raised.pk, note="taken up")
    decide(cast.chef, raised, **GESTURE)
    for act in (decision_approve, decision_refuse):
        error = refused(
            SegregationViolation,
            "segregation_of_duties",
            functools.partial(act, actor=cast.directeur, note="mine"),
            raised,
        )
        assert "raised dispute" in error.message
    decision_approve(actor=cast.commissaire, dispute_id=raised.pk, note="approved")
    assert dispute_movements(raised) == [("T1:bank", "T1:seat:3", 500)]

    # About the pack: the commissioner verified its seal (a recorded act), the chef opened it.
    about_pack = dispute_raise(
        actor=cast.croupier, subject="pack", subject_id=sixain_in_play.pk, claim="marked cards"
    )
    refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(dispute_review, actor=cast.chef, note="mine"),
        about_pack,
    )
    dispute_review(actor=chef2, dispute_id=about_pack.pk, note="taken up")
    decide(chef2, about_pack, **GESTURE)
    for act in (decision_approve, decision_refuse):
        error = refused(
            SegregationViolation,
            "segregation_of_duties",
            functools.partial(act, actor=cast.commissaire, note="mine"),
            about_pack,
        )
        assert "recorded the contested act" in error.message
    decision_approve(actor=cast.directeur, dispute_id=about_pack.pk, note="approved")
    assert dispute_movements(about_pack) == [("T1:bank", "T1:seat:3", 500)]


def test_on_appeal_the_decider_may_not_approve_and_a_refusal_sends_it_back(cast, stake_disputed):
    dispute = stake_disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    # The engine's, below the threshold.
    decide(cast.chef, dispute, findings=[{"stake": dispute.stake_id, "chance": "noir"}])
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 2000)]
    dispute_appeal(actor=cast.tailleur, dispute_id=dispute.pk, note="the bank contests it")
    decide(
        cast.commissaire,
        dispute,
        corrections=[["T1:bank", "T1:seat:3", 1000]],
        override_reason="half: the camera is unclear",
    )
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.AWAITING_APPROVAL_APPEAL
    error = refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(decision_approve, actor=cast.commissaire, note="mine"),
        dispute,
    )
    assert "decided on dispute" in error.message

    refused(  # a refusal needs its reason
        InvalidDispute,
        "invalid_dispute",
        functools.partial(decision_refuse, actor=cast.directeur, note=" "),
        dispute,
    )
    decision_refuse(actor=cast.directeur, dispute_id=dispute.pk, note="no ground to split it")
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.APPEALED
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 2000)]  # nothing moved
    back = DisputeStep.objects.filter(dispute=dispute).last()
    assert (back.from_state, back.to_state, back.actor) == (
        DisputeState.AWAITING_APPROVAL_APPEAL,
        DisputeState.APPEALED,
        cast.directeur,
    )

    final = decide(cast.commissaire, dispute, findings=[], reasoning="the record was right")
    assert (final.instance, final.attempt, final.approval_grounds) == ("appeal", 2, "")
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED_BY_COMMISSIONER
    assert dispute_movements(dispute) == [
        ("T1:bank", "T1:seat:3", 2000),
        ("T1:seat:3", "T1:bank", 2000),
    ]
    assert [(d.instance, d.attempt) for d in dispute.decisions.order_by("id")] == [
        ("first", 1),
        ("appeal", 1),
        ("appeal", 2),
    ]
    refused_first = DecisionApproval.objects.get()
    assert (refused_first.approved, refused_first.decision.attempt) == (False, 1)


def test_the_engine_s_own_answer_above_the_threshold_waits_for_approval(
    cast, shift, sixain_in_play
):
    coup = coup_with(cast, shift, ("a", "3", "rouge", 60_000))
    dispute = dispute_raise(
        actor=cast.caissier,
        subject="stake",
        subject_id=coup.stakes.get().pk,
        claim="it was on noir",
    )
    threshold = dispute.reglement.correction_approval_threshold
    assert threshold == 100_000
    assert any("1000.00" in a["fr"] and "1000.00" in a["en"] for a in dispute.reglement.articles)
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decision = decide(cast.chef, dispute, findings=[{"stake": dispute.stake_id, "chance": "noir"}])
    assert decision.corrections == [["T1:bank", "T1:seat:3", 120_000]]
    assert "threshold 100000" in decision.approval_grounds
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.AWAITING_APPROVAL
    assert dispute_movements(dispute) == []
    decision_approve(actor=cast.commissaire, dispute_id=dispute.pk, note="checked the camera")
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 120_000)]


def test_the_threshold_is_posted_with_the_reglement(api, cast):
    posted = reglement_post(
        actor=cast.commissaire,
        name="maison",
        spec="baden-1854",
        effective_from=dt.date(2026, 1, 1),
        correction_approval_threshold=250_000,
    )
    assert posted.correction_approval_threshold == 250_000
    last = posted.articles[-1]
    assert "2500.00" in last["fr"]
    assert "second approver" in last["en"]
    with pytest.raises(InvalidReglementPosting) as raised:
        reglement_post(
            actor=cast.commissaire,
            name="maison",
            spec="baden-1854",
            effective_from=dt.date(2026, 1, 1),
            correction_approval_threshold=0,
        )
    assert raised.value.where == "correction_approval_threshold"
    answer = api(cast.commissaire).post(
        "/api/v1/reglements",
        {
            "name": "maison",
            "spec": "baden-1854",
            "effective_from": "2026-02-01",
            "correction_approval_threshold": 50_000,
        },
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"fe{next(KEYS)}",
    )
    assert answer.status_code == 201, answer.json()
    versions = type(posted).objects.filter(name="maison")
    assert [r.correction_approval_threshold for r in versions] == [50_000, 250_000]


# --- 5. withdrawal -----------------------------------------------------------------------------


def test_only_the_raiser_withdraws_and_not_about_their_own_acts(api, cast, shift, sixain_in_play):
    _, stake = played_coup(cast, shift)
    # The croupier placed and settled the stake: he may not drop a claim against his own record.
    own = dispute_raise(actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="noir")
    error = refused(
        SegregationViolation,
        "segregation_of_duties",
        functools.partial(dispute_withdraw, actor=cast.croupier, note="never mind"),
        own,
    )
    assert "recorded the contested act" in error.message
    answer = api(cast.croupier).post(
        f"/api/v1/disputes/{own.pk}/withdraw",
        {"note": "never mind"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"fe{next(KEYS)}",
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "segregation_of_duties")

    theirs = dispute_raise(actor=cast.caissier, subject="stake", subject_id=stake.pk, claim="noir")
    for who in (cast.chef, cast.directeur, cast.tailleur):
        refused(
            NotTheRaiser,
            "not_the_raiser",
            functools.partial(dispute_withdraw, actor=who, note="dropped"),
            theirs,
        )
    answer = api(cast.chef).post(
        f"/api/v1/disputes/{theirs.pk}/withdraw",
        {"note": "dropped"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=f"fe{next(KEYS)}",
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "not_the_raiser")
    dispute_review(actor=cast.chef, dispute_id=theirs.pk, note="taken up")
    dispute_withdraw(actor=cast.caissier, dispute_id=theirs.pk, note="the patron is satisfied")
    theirs.refresh_from_db()
    assert theirs.state == DisputeState.WITHDRAWN


# --- the history stays as it was ----------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE disputes_decisionapproval SET approved = true",
        "DELETE FROM disputes_decisionapproval",
        "UPDATE disputes_dispute SET state = 'decided_by_commissioner'",
        "UPDATE disputes_dispute SET state = 'withdrawn'",
        # Straight to decided, as if approved: the database wants the approver's record.
        "UPDATE disputes_dispute SET state = 'decided'",
        "UPDATE disputes_dispute SET state = 'under_review'",
    ],
)
def test_the_database_keeps_the_approval_history(cast, stake_disputed, sql):
    dispute = stake_disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decide(cast.chef, dispute, **GESTURE)
    decision_refuse(actor=cast.directeur, dispute_id=dispute.pk, note="no")
    decide(cast.chef, dispute, **GESTURE)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert Dispute.objects.get().state == DisputeState.AWAITING_APPROVAL
    assert DecisionApproval.objects.get().approved is False


# --- API and admin ------------------------------------------------------------------------------


def test_approval_over_the_api_and_in_the_admin(api, cast, stake_disputed):
    from tests.actors import admin_client

    dispute = stake_disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    decide(cast.chef, dispute, **GESTURE)
    url = f"/api/v1/disputes/{dispute.pk}"
    answer = api(cast.chef).post(
        f"{url}/approve", {"note": "mine"}, format="json", HTTP_IDEMPOTENCY_KEY="fe-a1"
    )
    assert (answer.status_code, answer.json()["code"]) == (403, "role_required")
    answer = api(cast.directeur).post(
        f"{url}/refuse", {"note": "not a gesture we make"}, format="json", HTTP_IDEMPOTENCY_KEY="r1"
    )
    assert answer.status_code == 201, answer.json()
    shown = answer.json()
    assert shown["state"] == "under_review"
    assert shown["decisions"][0]["approval"]["approved"] is False
    assert shown["decisions"][0]["approval"]["by"] == "directeur"

    decide(cast.chef, dispute, **GESTURE)
    director = admin_client(cast.directeur)
    page = director.get(f"/admin/disputes/dispute/{dispute.pk}/change/").content.decode()
    assert "Approuver la décision" in page
    assert "refusée par directeur" in page
    done = director.post(f"/admin/disputes/dispute/{dispute.pk}/approve/", {"note": "fine"})
    assert done.status_code == 302, done.content.decode()[:2000]
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 500)]
