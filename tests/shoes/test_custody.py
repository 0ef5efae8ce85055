"""The custody chain of a sealed pack, from receipt to destruction."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from audit.models import Anomaly, AuditEvent
from casino.errors import RoleRequired
from casino.floor.coups import coup_cancel
from shoes.errors import (
    CardRefused,
    CountInvalid,
    IllegalPackState,
    SealNotVerified,
    ShuffleOrderViolated,
)
from shoes.models import CardLaid, Pack, PackEvent, PackState, Reconciliation
from shoes.services import (
    pack_cut,
    pack_destroy,
    pack_open,
    pack_retire,
    pack_shuffle,
    register_visa,
    replacement_demand,
    seal_verify,
)
from tests.conftest import lay_in_coups, pass_the_cards


def in_play(cast, pack, shift):
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Dupont, galerie")
    pack.refresh_from_db()
    return pack


@pytest.mark.parametrize(
    "who", ["chef", "tailleur", "croupier", "commissaire", "directeur", "inspecteur", "root"]
)
def test_nobody_opens_a_pack_whose_seal_was_not_verified(cast, receive, shift, who):
    pack = receive()
    with pytest.raises((SealNotVerified, RoleRequired)):
        pack_open(actor=getattr(cast, who), pack_id=pack.pk, shift_id=shift.pk)
    pack.refresh_from_db()
    assert pack.state == PackState.IN_STORE


def test_not_even_a_superuser_writing_to_the_database_opens_an_unverified_pack(cast, receive):
    pack = receive()
    for sql in (
        f"UPDATE shoes_pack SET state = 'verified' WHERE id = {pack.pk}",
        f"UPDATE shoes_pack SET state = 'opened' WHERE id = {pack.pk}",
    ):
        with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(sql)
    pack.refresh_from_db()
    assert pack.state == PackState.IN_STORE


@pytest.mark.parametrize("who", ["tailleur", "chef", "directeur", "inspecteur", "root"])
def test_only_a_commissioner_verifies_a_seal(cast, receive, who):
    pack = receive()
    with pytest.raises(RoleRequired):
        seal_verify(
            actor=getattr(cast, who),
            pack_id=pack.pk,
            seal_number_read=pack.seal_number,
            verdict="intact",
        )
    assert not pack.verifications.exists()


@pytest.mark.parametrize(
    ("read", "said", "detector"),
    [
        ("same", "broken", "seal_broken"),
        ("RF-0", "intact", "seal_mismatch"),  # what was read decides, not what was said
    ],
)
def test_a_bad_seal_rejects_the_pack_and_raises_a_critical_anomaly(
    cast, receive, shift, read, said, detector
):
    pack = receive()
    seal_verify(
        actor=cast.commissaire,
        pack_id=pack.pk,
        seal_number_read=pack.seal_number if read == "same" else read,
        verdict=said,
    )
    pack.refresh_from_db()
    assert pack.state == PackState.REJECTED
    anomaly = Anomaly.objects.get(detector=detector)
    assert anomaly.severity == "critical"
    assert anomaly.evidence["seal_number"] == pack.seal_number
    with pytest.raises(SealNotVerified):
        pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE shoes_pack SET state = 'in_play' WHERE id = {pk}",  # skips verified and opened
        "UPDATE shoes_pack SET state = 'destroyed' WHERE id = {pk}",
        "UPDATE shoes_pack SET state = 'received' WHERE id = {pk}",  # backwards
        "UPDATE shoes_pack SET seal_number = 'forged' WHERE id = {pk}",
        "DELETE FROM shoes_pack WHERE id = {pk}",
    ],
)
def test_the_database_refuses_to_skip_states_or_rewrite_a_pack(cast, verified, sql):
    pack = verified()
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql.format(pk=pack.pk))
    pack.refresh_from_db()
    assert pack.state == PackState.VERIFIED


def test_the_tailleur_shuffles_last_and_a_named_member_of_the_public_cuts(cast, verified, shift):
    pack = verified()
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    with pytest.raises(ShuffleOrderViolated, match="tailleur shuffles last"):
        pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="Mme Roy")
    with pytest.raises(ShuffleOrderViolated, match="does not let a player shuffle"):
        pack_shuffle(actor=cast.croupier, pack_id=pack.pk, player="a player")
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    with pytest.raises(ShuffleOrderViolated, match="name them"):
        pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="  ")
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="Mme Roy")
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY
    cut = pack.events.get(kind=PackEvent.Kind.CUT)
    assert (cut.person, cut.shift, cut.table.number) == ("Mme Roy", shift, 1)
    assert [e.details["by"] for e in pack.events.filter(kind="shuffled")] == [
        "tailleur",
        "croupier",
        "tailleur",
    ]


def test_a_foreign_card_is_refused_recorded_and_changes_nothing_else(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    lay_in_coups(cast, shift, ["AS"] * 6)
    before = (CardLaid.objects.count(), AuditEvent.objects.count())
    with pytest.raises(CardRefused, match=r"AS refused: .* holds it 6 time"):
        lay_in_coups(cast, shift, ["AS"])
    assert CardLaid.objects.count() == before[0]  # not laid
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY
    anomaly = Anomaly.objects.get(detector="foreign_card")
    assert anomaly.severity == "critical"
    assert anomaly.evidence["card"] == "AS"
    assert anomaly.involved == [cast.tailleur.pk]
    assert pack.events.filter(kind=PackEvent.Kind.FOREIGN_CARD).count() == 1
    lay_in_coups(cast, shift, ["KH"])  # play goes on
    assert list(pack.cards_laid.values_list("card", flat=True))[-1] == "KH"


def test_a_reconciliation_with_one_card_missing_names_that_card(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    lay_in_coups(cast, shift, ["KS", "7H", "9D", "TC"])  # noir closes at 36
    lay_in_coups(cast, shift, ["TD", "TH", "JS", "KC"])  # rouge at 40: settled
    counted = {f"{rank}{suit}": 6 for rank in "A23456789TJQK" for suit in "SHDC"}
    counted["KS"] -= 1
    counted["7H"] -= 1
    counted["9D"] -= 1
    for code in ("TC", "TD", "TH", "JS", "KC"):
        counted[code] -= 1
    counted["QC"] -= 1  # one queen of clubs is not in the box any more
    reconciliation = pack_retire(actor=cast.chef, pack_id=pack.pk, counted=counted)
    assert reconciliation.missing == {"QC": 1}
    assert reconciliation.extra == {}
    anomaly = Anomaly.objects.get(detector="missing_card")
    assert "QC x1" in anomaly.summary
    assert anomaly.severity == "critical"


def test_an_extra_card_in_the_count_is_named_too(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    counted = {f"{rank}{suit}": 6 for rank in "A23456789TJQK" for suit in "SHDC"}
    counted["10H"] = 7
    with pytest.raises(CountInvalid, match="TH is counted twice"):
        pack_retire(actor=cast.chef, pack_id=pack.pk, counted=counted)
    del counted["TH"]
    reconciliation = pack_retire(actor=cast.chef, pack_id=pack.pk, counted=counted)
    assert reconciliation.extra == {"TH": 1}
    assert Anomaly.objects.get(detector="extra_card").evidence["cards"] == {"TH": 1}


def test_a_replacement_on_demand_withdraws_the_old_pack_with_its_history(cast, verified, shift):
    old = in_play(cast, verified(), shift)
    lay_in_coups(cast, shift, ["5C"])
    coup = old.coups.get()
    with pytest.raises(IllegalPackState, match="a coup is in progress"):
        pass_the_cards(cast, old)
    coup_cancel(actor=cast.chef, coup_id=coup.pk, reason="the cards pass at the players' demand")
    pass_the_cards(cast, old)
    history = list(old.events.values_list("kind", flat=True))
    replacement_demand(
        actor=cast.chef, pack_id=old.pk, demanded_by="M. Weih, ponte", side="players"
    )
    old.refresh_from_db()
    assert old.state == PackState.WITHDRAWN
    assert list(old.events.values_list("kind", flat=True)) == [
        *history,
        "replacement_demanded",
        "withdrawn",
    ]
    demand = old.events.get(kind="replacement_demanded")
    assert (demand.person, demand.details) == ("M. Weih, ponte", {"side": "players"})
    new = in_play(cast, verified(), shift)  # the table plays on with a verified new pack
    assert new.state == PackState.IN_PLAY
    assert old.cards_laid.count() == 1


def test_the_old_pack_may_instead_be_shuffled_and_cut_again(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    pass_the_cards(cast, pack)
    with pytest.raises(Exception, match="no pack in play"):
        lay_in_coups(cast, shift, ["5C"])
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Martin")
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY


def test_a_table_plays_one_pack_at_a_time(cast, verified, shift):
    in_play(cast, verified(), shift)
    second = verified()
    with pytest.raises(Exception, match="already has pack"):
        pack_open(actor=cast.chef, pack_id=second.pk, shift_id=shift.pk)


def test_a_single_pack_does_not_go_to_a_trente_et_quarante_table(cast, verified, shift):
    with pytest.raises(Exception, match="plays with a sixain"):
        pack_open(actor=cast.chef, pack_id=verified("single").pk, shift_id=shift.pk)


def test_destruction_is_witnessed_by_the_commissioner_after_reconciliation(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    with pytest.raises(IllegalPackState):
        pack_destroy(actor=cast.commissaire, pack_id=pack.pk)
    counted = {f"{rank}{suit}": 6 for rank in "A23456789TJQK" for suit in "SHDC"}
    pack_retire(actor=cast.chef, pack_id=pack.pk, counted=counted)
    with pytest.raises(RoleRequired):
        pack_destroy(actor=cast.chef, pack_id=pack.pk)
    pack_destroy(actor=cast.commissaire, pack_id=pack.pk, remarks="incinéré")
    pack.refresh_from_db()
    assert pack.state == PackState.DESTROYED
    assert Reconciliation.objects.get(pack=pack).balanced
    destroyed = pack.events.get(kind="destroyed")
    assert destroyed.actor == cast.commissaire


def test_the_commissioner_signs_the_register_page_of_the_day(cast, receive):
    receive()
    receive()
    # The register's page is the casino's day (its zone), not UTC's: they differ after 23:00 UTC.
    today = timezone.localdate(Pack.objects.first().received_at)
    visa = register_visa(actor=cast.commissaire, day=today, remarks="vu")
    assert visa.packs_seen == 2
    with pytest.raises(RoleRequired):
        register_visa(actor=cast.directeur, day=today + dt.timedelta(days=1))
    assert AuditEvent.objects.filter(action="register.visa").count() == 1


def test_every_act_is_audited(cast, verified, shift):
    pack = in_play(cast, verified(), shift)
    actions = list(
        AuditEvent.objects.filter(subject_type="shoes.pack", subject_id=str(pack.pk)).values_list(
            "action", flat=True
        )
    )
    assert actions == [
        "pack.received",
        "pack.stored",
        "pack.verified",
        "pack.opened",
        "pack.shuffled",
        "pack.shuffled",
        "pack.cut",
    ]


def test_cards_laid_together_stop_at_the_first_foreign_card_and_record_it(
    cast, shift, sixain_in_play
):
    """Several cards at once (a cercle's deal, the cards burned at the cut) are written in one
    statement up to the first card the pack cannot hold; that card's refusal is recorded."""
    from shoes.services import _lay, current_taille

    pack = Pack.objects.get(pk=sixain_in_play.pk)
    before = set(CardLaid.objects.filter(pack=pack).values_list("pk", flat=True))
    codes = ["2C", *["AS"] * 6, "AS", "3D"]  # a sixain holds the ace of spades six times
    refused, laid = _lay(
        pack, cast.tailleur, shift, codes, burned_cards=False, taille=current_taille(pack)
    )
    assert refused is not None
    assert refused.card == "AS"
    assert [c.card for c in laid] == codes[:7]
    written = CardLaid.objects.filter(pack=pack).exclude(pk__in=before).order_by("seq")
    assert [(c.pk, c.card) for c in written] == [(c.pk, c.card) for c in laid]
    seqs = [c.seq for c in written]
    assert seqs == list(range(seqs[0], seqs[0] + 7))
    assert PackEvent.objects.filter(pack=pack, kind="foreign_card").count() == 1
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
