"""The card room's pages through Django's test client: the delivery, the register's visa, each
act on a pack by its route, its timeline as sentences, and every control tried as the attack it
stops (the refusal shown with its reason, and nothing recorded, except the refusal that is
itself evidence)."""

from __future__ import annotations

import datetime as dt
import html
import re

from django.utils import timezone

from audit.models import Anomaly, AuditEvent
from casino.floor.services import reglement_post, table_create
from casino.people.roles import Role
from shoes.models import (
    CardLaid,
    Pack,
    PackEvent,
    PackState,
    Reconciliation,
    RegisterVisa,
    SealVerification,
    TalonCount,
)
from shoes.services import cards_pass, pack_open, pack_shuffle, replacement_demand
from tests.actors import admin_client, hire
from tests.conftest import open_seance, talon
from tests.pit.test_seance import done, recorded, refusal, text

CARD_ROOM = (
    AuditEvent,
    Pack,
    PackEvent,
    SealVerification,
    RegisterVisa,
    TalonCount,
    Reconciliation,
    CardLaid,
    Anomaly,
)
ROOM = "/admin/pit/cards/"
CODES = [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"]


def nothing(*models):
    return recorded(*(models or CARD_ROOM))


def pack_url(pack: Pack, act: str = "") -> str:
    return f"{ROOM}{pack.pk}/" + (f"{act}/" if act else "")


def delivery(*rows: tuple[str, str]) -> dict[str, object]:
    data: dict[str, object] = {
        "delivery-kind": "sixain",
        "delivery-maker": "Grimaud",
        "delivery-sealing_authority": "Préfecture de police",
        "delivery-store_location": "coffre A",
        "packs-TOTAL_FORMS": 6,
        "packs-INITIAL_FORMS": 0,
    }
    for index, (seal, numbers) in enumerate(rows):
        data[f"packs-{index}-seal_number"] = seal
        data[f"packs-{index}-maker_pack_numbers"] = numbers
    return data


def text_of(fragment: str) -> str:
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", fragment)))


def grid(counts: dict[str, int], prefix: str = "") -> dict[str, int]:
    return {f"{prefix}n_{code}": n for code, n in counts.items()}


# --- the delivery and the register ---------------------------------------------------------------


def test_a_delivery_of_several_packs_is_received_in_one_form(cast):
    cashier = admin_client(cast.caissier)
    answer = cashier.post(
        f"{ROOM}receive/", delivery(("RF-1", "G-1..6"), ("RF-2", "G-7..12"), ("", ""))
    )
    assert "2 jeux reçus au registre : RF-1, RF-2" in done(answer, cashier)
    assert list(Pack.objects.order_by("seal_number").values_list("seal_number", "state")) == [
        ("RF-1", "received"),
        ("RF-2", "received"),
    ]
    pack = Pack.objects.get(seal_number="RF-1")
    assert "Rangé en magasin" in done(cashier.post(pack_url(pack, "store")), cashier)
    pack.refresh_from_db()
    assert pack.state == PackState.IN_STORE


def test_a_delivery_with_a_seal_already_in_the_register_is_refused_whole(cast, receive):
    known = receive()
    cashier = admin_client(cast.caissier)
    before = nothing()
    said = refusal(
        cashier.post(f"{ROOM}receive/", delivery(("RF-9", "G-1"), (known.seal_number, "G-2")))
    )
    assert said.startswith("Refusé — jeu 2 de la livraison")
    assert f"le numéro de scellé {known.seal_number} est déjà au registre" in said
    assert nothing() == before
    said = refusal(cashier.post(f"{ROOM}receive/", delivery(("RF-9", "G-1"), ("RF-9", "G-2"))))
    assert "jeu 2 de la livraison : le numéro de scellé RF-9 est déjà au registre" in said
    assert nothing() == before
    answer = cashier.post(f"{ROOM}receive/", delivery())
    assert "entrez au moins un jeu" in text(answer)
    assert nothing() == before


def test_the_commissioner_verifies_a_seal_and_signs_the_register_page(cast, receive):
    pack = receive()
    commissioner = admin_client(cast.commissaire)
    page = text(commissioner.get(pack_url(pack)))
    assert "Vérifier le scellé" in page
    answer = commissioner.post(
        pack_url(pack, "verify"), {"seal_number_read": pack.seal_number, "verdict": "intact"}
    )
    assert f"Scellé {pack.seal_number}" in done(answer, commissioner)
    pack.refresh_from_db()
    assert pack.state == PackState.VERIFIED

    today = timezone.localdate()
    answer = commissioner.post(f"{ROOM}visa/", {"day": today.isoformat(), "remarks": "vu"})
    assert "visée (1 jeux)" in done(answer, commissioner)
    visa = RegisterVisa.objects.get()
    assert (visa.day, visa.commissaire, visa.packs_seen) == (today, cast.commissaire, 1)
    before = nothing()
    said = refusal(commissioner.post(f"{ROOM}visa/", {"day": today.isoformat()}))
    assert "porte déjà un visa" in said
    assert nothing() == before


def test_a_seal_read_different_from_the_register_rejects_the_pack(cast, receive):
    pack = receive()
    commissioner = admin_client(cast.commissaire)
    answer = commissioner.post(
        pack_url(pack, "verify"), {"seal_number_read": "RF-0", "verdict": "intact"}
    )
    page = done(answer, commissioner)
    assert "numéro différent" in page.lower()
    pack.refresh_from_db()
    assert pack.state == PackState.REJECTED
    assert Anomaly.objects.filter(detector="seal_mismatch").exists()
    assert "seal_mismatch" in page


def test_a_cashier_cannot_verify_a_seal_sign_the_register_or_witness_a_destruction(cast, receive):
    pack = receive()
    cashier = admin_client(cast.caissier)
    assert "Vérifier le scellé" not in text(cashier.get(pack_url(pack)))
    before = nothing()
    said = refusal(
        cashier.post(
            pack_url(pack, "verify"), {"seal_number_read": pack.seal_number, "verdict": "intact"}
        )
    )
    assert "il faut le rôle commissaire" in said
    day = timezone.localdate().isoformat()
    assert "il faut le rôle commissaire" in refusal(cashier.post(f"{ROOM}visa/", {"day": day}))
    assert "il faut le rôle commissaire" in refusal(cashier.post(pack_url(pack, "destroy")))
    assert nothing() == before


# --- at the table --------------------------------------------------------------------------------


def test_the_pack_is_opened_shuffled_and_cut_through_its_page(cast, shift, verified):
    pack = verified()
    chef = admin_client(cast.chef)
    assert "Ouvert à la table" in done(chef.post(pack_url(pack, "open"), {"shift": shift.pk}), chef)
    tailleur = admin_client(cast.tailleur)
    before = nothing()
    said = refusal(tailleur.post(pack_url(pack, "cut"), {"cut_by": "M. Dupont"}))
    assert "le tailleur mêle en dernier" in said
    assert nothing() == before
    croupier = admin_client(cast.croupier)
    assert "Mélange enregistré" in done(croupier.post(pack_url(pack, "shuffle")), croupier)
    done(tailleur.post(pack_url(pack, "shuffle")), tailleur)
    said = refusal(tailleur.post(pack_url(pack, "cut"), {"cut_by": ""}))
    assert "un membre du public coupe : nommez-le" in said
    page = done(tailleur.post(pack_url(pack, "cut"), {"cut_by": "M. Dupont"}), tailleur)
    assert "Coupé : le jeu est en jeu" in page
    for words in ("ouvert à Table 1", "mêlé par un croupier", "mêlé par le tailleur", "M. Dupont"):
        assert words in page
    pack.refresh_from_db()
    assert pack.state == PackState.IN_PLAY


def test_staff_off_duty_cannot_open_or_shuffle_and_nothing_is_recorded(cast, shift, verified):
    pack = verified()
    other_chef = admin_client(hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE))
    before = nothing()
    said = refusal(other_chef.post(pack_url(pack, "open"), {"shift": shift.pk}))
    assert "chef2 n'y est pas de service" in said
    assert nothing() == before
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    # A croupier who never worked this séance does not even read the pack.
    stranger = admin_client(hire(cast.directeur, "croupier2", Role.CROUPIER))
    before = nothing()
    assert stranger.post(pack_url(pack, "shuffle")).status_code == 403
    assert stranger.get(pack_url(pack)).status_code == 403
    assert nothing() == before


def test_a_foreign_card_burned_at_the_cut_is_refused_and_its_refusal_recorded(
    cast, posted, verified
):
    burning = reglement_post(
        actor=cast.commissaire,
        name="burn-seven",
        spec={"preset": "baden-1854", "overrides": {"burn": 7}},
        effective_from=dt.date(2026, 1, 1),
    )
    table = table_create(
        actor=cast.directeur,
        number=7,
        game="trente-et-quarante",
        reglement_id=burning.pk,
        min_stake=500,
        max_stake=600_000,
    )
    shift = open_seance(cast, table)
    pack = verified()
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    tailleur = admin_client(cast.tailleur)
    assert "cartes à brûler selon le règlement : 7" in text(tailleur.get(pack_url(pack)))
    answer = tailleur.post(pack_url(pack, "cut"), {"cut_by": "M. Dupont", "burn": "AS " * 7})
    page = answer.content.decode()
    assert 'class="recorded"' in page
    assert "Ce refus est lui-même enregistré" in refusal(answer)
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    assert PackEvent.objects.filter(pack=pack, kind="foreign_card").count() == 1
    pack.refresh_from_db()
    assert pack.state == PackState.OPENED


def test_the_cards_pass_with_the_undealt_cards_scanned_or_counted(cast, shift, sixain_in_play):
    tailleur = admin_client(cast.tailleur)
    before = nothing()
    said = refusal(
        tailleur.post(pack_url(sixain_in_play, "pass"), {"method": "scanned", "undealt": "KS ZZ"})
    )
    assert "'ZZ' n'est pas une carte" in said
    assert nothing() == before
    counted = {code: 6 for code in CODES}
    counted["7H"] = 5  # one seven of hearts short in the talon
    answer = tailleur.post(pack_url(sixain_in_play, "pass"), {"method": "counted", **grid(counted)})
    page = done(answer, tailleur)
    assert "le compte n'est pas juste, signalé" in page
    assert "manquent 7H ×1" in page
    count = TalonCount.objects.get()
    assert count.method == "counted"
    assert len(count.cards) == 311
    assert count.missing == {"7H": 1}
    assert Anomaly.objects.filter(detector="missing_card").exists()
    said = refusal(tailleur.post(pack_url(sixain_in_play, "pass"), {"method": "scanned"}))
    assert "ont été enregistrées par tailleur" in said


def test_a_new_sixain_is_demanded_and_the_card_room_is_told(cast, shift, sixain_in_play, verified):
    spare = verified()
    cards_pass(actor=cast.tailleur, pack_id=sixain_in_play.pk, undealt=talon(sixain_in_play))
    chef = admin_client(cast.chef)
    before = nothing()
    said = refusal(
        chef.post(pack_url(sixain_in_play, "replace"), {"demanded_by": "", "side": "players"})
    )
    assert "nommez qui a demandé le nouveau jeu" in said
    assert nothing() == before
    answer = chef.post(
        pack_url(sixain_in_play, "replace"), {"demanded_by": "M. Martin", "side": "players"}
    )
    page = done(answer, chef)
    assert "Un jeu neuf est demandé" in page
    assert f"ouvrez-y l'un de ces jeux dont le scellé est vérifié. {spare.seal_number}" in page
    room = text(chef.get(ROOM))
    assert "Un jeu scellé neuf est demandé à Table 1" in room
    pack_open(actor=cast.chef, pack_id=spare.pk, shift_id=shift.pk)
    assert "Un jeu scellé neuf est demandé" not in text(chef.get(ROOM))


def test_a_pack_is_retired_with_its_count_card_by_card_and_its_destruction_witnessed(
    cast, shift, sixain_in_play
):
    cards_pass(actor=cast.tailleur, pack_id=sixain_in_play.pk, undealt=talon(sixain_in_play))
    replacement_demand(
        actor=cast.chef, pack_id=sixain_in_play.pk, demanded_by="M. Martin", side="players"
    )
    tailleur = admin_client(cast.tailleur)
    before = nothing()
    said = refusal(
        tailleur.post(pack_url(sixain_in_play, "retire"), grid(dict.fromkeys(CODES, 6), "retire-"))
    )
    assert "il faut le rôle chef_de_partie" in said
    assert nothing() == before

    chef = admin_client(cast.chef)
    page = done(
        chef.post(pack_url(sixain_in_play, "retire"), grid(dict.fromkeys(CODES, 6), "retire-")),
        chef,
    )
    assert "Jeu retiré : le recomptage est juste" in page
    assert Reconciliation.objects.get().balanced
    before = nothing()
    said = refusal(chef.post(pack_url(sixain_in_play, "destroy"), {"remarks": "mine"}))
    assert "il faut le rôle commissaire" in said
    assert nothing() == before

    commissioner = admin_client(cast.commissaire)
    answer = commissioner.post(pack_url(sixain_in_play, "destroy"), {"remarks": "au broyeur"})
    page = done(answer, commissioner)
    assert "Détruit devant le commissaire" in page
    sixain_in_play.refresh_from_db()
    assert sixain_in_play.state == PackState.DESTROYED


def test_a_count_at_retirement_that_does_not_reconcile_names_the_cards(cast, shift, sixain_in_play):
    counted = dict.fromkeys(CODES, 6) | {"QD": 7, "2C": 4}
    chef = admin_client(cast.chef)
    page = done(chef.post(pack_url(sixain_in_play, "retire"), grid(counted, "retire-")), chef)
    assert "Jeu retiré : le recomptage n'est pas juste, signalé" in page
    assert "manquent 2C ×2 ; en trop QD ×1" in page
    assert {a.detector for a in Anomaly.objects.all()} == {"missing_card", "extra_card"}


def test_the_timeline_is_sentences_in_the_casinos_time_never_json(cast, shift, sixain_in_play):
    cards_pass(actor=cast.tailleur, pack_id=sixain_in_play.pk, undealt=talon(sixain_in_play))
    page = admin_client(cast.chef).get(pack_url(sixain_in_play)).content.decode()
    timeline = page.split('id="timeline"')[1].split("</section>")[0]
    assert "{" not in timeline
    assert '"' not in text_of(timeline)
    received = PackEvent.objects.get(pack=sixain_in_play, kind="received").at
    assert timezone.localtime(received).strftime("%d/%m/%Y %H:%M:%S") in timeline
    assert "312 cartes restantes comptées à la main sur 312 attendues ; le compte est juste" in (
        text_of(timeline)
    )


def test_the_card_room_is_not_for_those_without_a_floor_role(cast):
    outsider = admin_client(cast.outsider)
    assert outsider.get(ROOM).status_code == 403
    before = nothing()
    assert outsider.post(f"{ROOM}receive/", delivery(("RF-1", "G"))).status_code == 403
    assert nothing() == before
