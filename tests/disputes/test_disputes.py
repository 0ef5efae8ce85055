"""Disputes settled under the posted règlement: a mis-collected winning stake, an appeal, who may
decide, and a history that is never edited."""

from __future__ import annotations

import hashlib

import pytest
from django.db import DatabaseError, connection, transaction

from audit.models import AuditEvent
from casino.disputes.models import Decision, Dispute, DisputeState
from casino.disputes.services import (
    InvalidDispute,
    decision_approve,
    dispute_appeal,
    dispute_decide,
    dispute_raise,
    dispute_review,
    evidence_add,
    recomputation,
)
from casino.errors import RoleRequired, SegregationViolation
from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Account, Movement, Settlement, Stake
from casino.floor.services import balance
from casino.people.roles import Role
from tests.actors import hire

NOIR = "2S 3S 4S 5S 7S KS".split()  # 31
ROUGE = "AH 2H 4H 6H 9H KH".split()  # 32: noir wins


def played_coup(cast, shift, *, croupier=None):
    """A settled coup in which stake "a" (1000 on rouge, seat 3) lost: noir won."""
    croupier = croupier or cast.croupier
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake = stake_place(
        actor=croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=1000
    )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    for code in NOIR + ROUGE:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    coup_settle(actor=croupier, coup_id=coup.pk)
    return coup, stake


def first_article(dispute):
    return dispute.reglement.articles[0]["number"]


def dispute_movements(dispute):
    return sorted(
        (m.credit.code, m.debit.code, m.amount)
        for m in Movement.objects.filter(reference=f"dispute:{dispute.pk}")
    )


@pytest.fixture
def disputed(cast, shift, sixain_in_play):
    """The patron says stake "a" was on noir, not rouge: a winner collected by mistake."""
    coup, stake = played_coup(cast, shift)
    dispute = dispute_raise(
        actor=cast.croupier,
        subject="stake",
        subject_id=stake.pk,
        claim="the stake was placed on noir and collected as a loser",
        on_behalf_of="seat 3",
        statement="I put my plaque on the black diamond before the first card.",
    )
    return coup, stake, dispute


def test_a_mis_collected_winning_stake_is_paid_by_a_correction(cast, disputed):
    coup, stake, dispute = disputed
    photo = b"\x89PNG scan of the layout"
    evidence = evidence_add(
        actor=cast.croupier,
        dispute_id=dispute.pk,
        name="layout.png",
        content=photo,
        content_type="image/png",
    )
    assert evidence.sha256 == hashlib.sha256(photo).hexdigest()
    assert evidence.file.read() == photo
    logged = AuditEvent.objects.get(action="dispute.evidence_added")
    assert evidence.sha256 in logged.payload

    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="heard the patron and the croupier")
    # The replay of the coup with the stake as found shows the rule's answer beside the record.
    noir = [{"stake": stake.pk, "chance": "noir"}]
    shown = recomputation(dispute, noir)
    assert [s["outcome"] for s in shown.recorded] == ["lost"]
    assert [(s["outcome"], s["returned"], s["paid"]) for s in shown.computed] == [
        ("won", 1000, 1000)
    ]
    # Each row names its stake and its coup by their references.
    assert [(s["stake"], s["coup"]) for s in shown.recorded + shown.computed] == [
        (stake.pk, coup.pk),
        (stake.pk, coup.pk),
    ]
    assert shown.corrections == [("T1:bank", "T1:seat:3", 2000)]

    with pytest.raises(InvalidDispute, match="has no article 99"):
        dispute_decide(
            actor=cast.chef, dispute_id=dispute.pk, articles=["99"], reasoning="x", findings=[]
        )
    decision = dispute_decide(
        actor=cast.chef,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the croupier's own notes place the plaque on noir",
        findings=noir,
    )
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED
    assert decision.corrections == [["T1:bank", "T1:seat:3", 2000]]
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 2000)]
    # The ledger still balances, and the original records are untouched.
    assert sum(balance(a) for a in Account.objects.all()) == 0
    assert balance(Account.objects.get(code="T1:layout")) == 0
    assert Settlement.objects.get(stake=stake).outcome == "lost"
    assert Stake.objects.get(pk=stake.pk).chance == "rouge"
    assert coup.outcome.result == "noir"


def test_an_appeal_overrides_the_first_decision_with_corrections_netting_it(cast, disputed):
    _, stake, dispute = disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    dispute_decide(
        actor=cast.chef,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the patron is believed",
        findings=[{"stake": stake.pk, "chance": "noir"}],
    )
    with pytest.raises(RoleRequired):  # the chef de partie does not rule on appeal
        dispute_appeal(actor=cast.inspecteur, dispute_id=dispute.pk, note="x")
    dispute_appeal(actor=cast.tailleur, dispute_id=dispute.pk, note="the bank contests it")
    with pytest.raises(RoleRequired):
        dispute_decide(actor=cast.chef, dispute_id=dispute.pk, articles=["1"], reasoning="again")
    final = dispute_decide(
        actor=cast.commissaire,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the camera shows the plaque on rouge: the record was right",
        findings=[],
    )
    assert final.instance == Decision.Instance.APPEAL
    assert final.computed["corrections"] == []
    # The appeal's movement reverses the first one: together they net to nothing.
    assert dispute_movements(dispute) == [
        ("T1:bank", "T1:seat:3", 2000),
        ("T1:seat:3", "T1:bank", 2000),
    ]
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED_BY_COMMISSIONER


def test_an_override_needs_a_reason(cast, disputed):
    _, _, dispute = disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    with pytest.raises(InvalidDispute, match="reason to depart"):
        dispute_decide(
            actor=cast.chef,
            dispute_id=dispute.pk,
            articles=[first_article(dispute)],
            reasoning="a gesture",
            corrections=[["T1:bank", "T1:seat:3", 500]],
        )
    decision = dispute_decide(
        actor=cast.chef,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="a gesture",
        corrections=[["T1:bank", "T1:seat:3", 500]],
        override_reason="commercial gesture",
    )
    assert decision.override_reason
    # Departing from the rule's computation waits for a second approver: nothing moves yet.
    assert dispute_movements(dispute) == []
    decision_approve(actor=cast.directeur, dispute_id=dispute.pk, note="gesture approved")
    assert dispute_movements(dispute) == [("T1:bank", "T1:seat:3", 500)]


def test_who_may_decide(cast, shift, sixain_in_play):
    # A chef de partie who also deals as croupier placed and settled the contested stake.
    both = hire(cast.directeur, "chefcroupier", Role.CHEF_DE_PARTIE, Role.CROUPIER)
    from casino.floor.services import duty_assign

    duty_assign(actor=cast.chef, shift_id=shift.pk, person=both, post="croupier")
    _, stake = played_coup(cast, shift, croupier=both)
    dispute = dispute_raise(
        actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="collected in error"
    )
    with pytest.raises(SegregationViolation, match="recorded the contested act"):
        dispute_review(actor=both, dispute_id=dispute.pk, note="mine to examine")
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    with pytest.raises(SegregationViolation, match="recorded the contested act"):
        dispute_decide(actor=both, dispute_id=dispute.pk, articles=["1"], reasoning="mine")
    with pytest.raises(RoleRequired):
        dispute_decide(actor=cast.croupier, dispute_id=dispute.pk, articles=["1"], reasoning="x")
    with pytest.raises(RoleRequired):
        dispute_raise(actor=cast.inspecteur, subject="stake", subject_id=stake.pk, claim="x")
    with pytest.raises(RoleRequired):
        dispute_review(actor=cast.inspecteur, dispute_id=dispute.pk, note="x")
    assert Decision.objects.count() == 0
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.UNDER_REVIEW


def test_a_dispute_is_about_a_real_record(cast, shift):
    from casino.errors import NotFound

    with pytest.raises(NotFound):
        dispute_raise(actor=cast.croupier, subject="stake", subject_id=999_999, claim="x")
    with pytest.raises(InvalidDispute):
        dispute_raise(actor=cast.croupier, subject="weather", subject_id=1, claim="x")


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE disputes_dispute SET state = 'open'",
        "UPDATE disputes_dispute SET claim = 'something else'",
        "DELETE FROM disputes_dispute",
        "UPDATE disputes_disputestep SET note = 'rewritten'",
        "DELETE FROM disputes_evidence",
    ],
)
def test_the_database_keeps_the_disputes_history(cast, disputed, sql):
    _, _, dispute = disputed
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    evidence_add(
        actor=cast.chef, dispute_id=dispute.pk, name="a.jpg", content=b"jpeg", content_type=""
    )
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)
    assert Dispute.objects.get().state == DisputeState.UNDER_REVIEW
