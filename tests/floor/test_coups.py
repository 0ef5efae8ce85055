"""Trente-et-Quarante played through the services, act by act, against the replay command."""

from __future__ import annotations

import pytest
from django.db.models import Sum

from audit.models import Anomaly
from casino.floor.coups import (
    BettingClosed,
    LateStake,
    StakeRefused,
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
    stake_withdraw,
)
from casino.floor.models import Account, CoupResult, Movement, Settlement, Stake
from casino.floor.services import balance, table_account
from casino.games.reglement import reglement
from casino.games.replay import replay
from casino.games.simulator import simulate_taille
from shoes.models import PackState


def play(cast, shift, talon, stakes_by_coup):
    """Deal the talon coup by coup through the services, as the table terminal would."""
    cards = iter(talon)
    number = 0
    while True:
        number += 1
        coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
        for s in stakes_by_coup.get(number, []):
            on_refait = (
                s.on_refait
                if isinstance(s.on_refait, str) or s.on_refait is None
                else f"move:{s.on_refait[1].value}"
            )
            stake_place(
                actor=cast.croupier,
                coup_id=coup.pk,
                ref=s.id,
                holder=f"{len(s.id) % 7}",
                chance=s.chance.value,
                amount=s.amount,
                insured=s.insured,
                on_refait=on_refait,
            )
        coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        laid = None
        while laid is None or not laid.coup_complete:
            code = next(cards, None)
            if code is None:
                break
            laid = coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=str(code))
        result = coup_settle(actor=cast.croupier, coup_id=coup.pk)
        if result.last:
            return number


@pytest.mark.reglement("trente-et-quarante-modern")
def test_a_full_sixain_through_the_services_equals_the_replay(cast, shift, sixain_in_play):
    spec = {
        "preset": "trente-et-quarante-modern",
        "overrides": {"min_stake": shift.table.min_stake, "max_stake": shift.table.max_stake},
    }
    # Seed 2031 deals two refaits: stakes imprisoned, halved by choice, freed and lost in prison.
    sim = simulate_taille(seed=2031, reglement=reglement(spec), stakes_per_coup=4)
    coups = play(cast, shift, sim.talon, sim.stakes)
    expected = replay(sim.replay_document(spec))
    assert coups == len(expected["coups"])
    outcomes = {s["outcome"] for c in expected["coups"] for s in c["settlements"]}
    assert {"imprisoned", "freed", "prison_lost", "half_lost", "won", "lost"} <= outcomes
    recorded = list(CoupResult.objects.order_by("coup__number"))
    for want, got in zip(expected["coups"], recorded, strict=True):
        assert (got.noir_cards, got.rouge_cards) == (want["noir"]["cards"], want["rouge"]["cards"])
        assert (got.result, got.couleur or None, got.void, got.last) == (
            want["result"],
            want["couleur"],
            want["void"],
            want["last"],
        )
        assert got.announcement == want["announcement"]
        settled = [
            (
                Stake.objects.get(pk=s.stake_id).ref,
                s.outcome,
                s.paid,
                s.returned,
                s.to_bank,
                s.premium,
                s.held,
                s.level,
            )
            for s in Settlement.objects.filter(coup=got.coup).order_by("stake_id", "id")
        ]
        assert settled == [
            (
                s["stake"],
                s["outcome"],
                s["paid"],
                s["returned"],
                s["to_bank"],
                s["premium"],
                s["held"],
                s["level"],
            )
            for s in want["settlements"]
        ]
    # The ledger matches the settlements movement for movement, and sums to zero.
    settlements = Settlement.objects.all()
    moved = Movement.objects.filter(kind=Movement.Kind.WIN_PAID).aggregate(s=Sum("amount"))["s"]
    assert (moved or 0) == sum(s.paid for s in settlements)
    premiums = Movement.objects.filter(kind=Movement.Kind.INSURANCE_PREMIUM).aggregate(
        s=Sum("amount")
    )["s"]
    assert (premiums or 0) == sum(s.premium for s in settlements)
    assert balance(table_account(shift.table, Account.Kind.LAYOUT)) == 0
    assert balance(table_account(shift.table, Account.Kind.PRISON)) == sum(
        p["held"] for p in expected["end"]["prison"]
    )
    assert sum(balance(a) for a in Account.objects.all()) == 0
    sixain_in_play.refresh_from_db()
    assert sixain_in_play.state == PackState.PASSED


def test_a_late_stake_is_refused_and_recorded(cast, shift, sixain_in_play):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake = stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=1000
    )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    with pytest.raises(BettingClosed):
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref="b", holder="3", chance="noir", amount=1000
        )
    assert not Anomaly.objects.filter(detector="late_stake").exists()
    coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code="KS")
    with pytest.raises(LateStake, match="first card"):
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref="c", holder="3", chance="noir", amount=1000
        )
    with pytest.raises(LateStake):
        stake_withdraw(actor=cast.croupier, stake_id=stake.pk)
    assert Anomaly.objects.filter(detector="late_stake").count() == 2
    assert list(coup.stakes.values_list("ref", flat=True)) == ["a"]


@pytest.mark.parametrize(
    ("amount", "says"),
    [(100, "below the table minimum 500"), (600_001, "above the table maximum 600000")],
)
def test_a_stake_outside_the_limits_names_the_limit(cast, shift, sixain_in_play, amount, says):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    with pytest.raises(StakeRefused, match=says):
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="rouge", amount=amount
        )
    assert not Stake.objects.exists()
    assert not Movement.objects.filter(kind="stake_placed").exists()


def test_a_withdrawal_before_the_first_card_returns_the_money(cast, shift, sixain_in_play):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake = stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="rouge", amount=2000
    )
    stake_withdraw(actor=cast.croupier, stake_id=stake.pk)
    assert balance(table_account(shift.table, Account.Kind.LAYOUT)) == 0
    assert balance(stake.holder) == 0


def test_a_wrong_spoken_announcement_raises_an_anomaly(cast, shift, sixain_in_play):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    for code in ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"]:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    result = coup_settle(actor=cast.tailleur, coup_id=coup.pk, spoken="rouge gagne et couleur")
    assert result.announcement["result"] == "rouge perd, couleur gagne"
    anomaly = Anomaly.objects.get(detector="announcement_mismatch")
    assert anomaly.evidence["computed"] == "rouge perd, couleur gagne"


def test_a_reference_already_on_the_coup_is_refused_before_its_holder(cast, shift, sixain_in_play):
    """The reference is asked in the query that reads the stake's accounts, and refused first: a
    second stake under it is a conflict on ``ref``, even for a new seat (whose account is not
    made) or for nobody; a holder who is nobody is refused on ``holder``. Nothing recorded."""
    from casino.errors import Conflict

    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="rouge", amount=1000
    )
    before = (Account.objects.count(), Movement.objects.count())
    for holder in ("7", ""):
        with pytest.raises(Conflict, match="'a' is already on coup") as taken:
            stake_place(
                actor=cast.croupier,
                coup_id=coup.pk,
                ref="a",
                holder=holder,
                chance="noir",
                amount=1000,
            )
        assert taken.value.where == "ref"
    with pytest.raises(StakeRefused) as nobody:
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref="b", holder="", chance="noir", amount=1000
        )
    assert nobody.value.where == "holder"
    assert list(coup.stakes.values_list("ref", flat=True)) == ["a"]
    assert (Account.objects.count(), Movement.objects.count()) == before
