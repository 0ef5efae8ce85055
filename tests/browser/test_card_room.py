"""The card room in a browser, each person in their own tab: a delivery of two sixains received
by the cashier, the seal verified and the register's page signed by the commissioner; a pack
opened, shuffled and cut at the table, the cards passing with the undealt cards, a new sealed
sixain demanded, the old one counted back card by card and its destruction witnessed."""

from __future__ import annotations

import pytest

from shoes.models import Pack, PackState, Reconciliation, RegisterVisa, TalonCount
from tests.browser.conftest import screenshot
from tests.conftest import talon

pytestmark = pytest.mark.django_db(transaction=True)


def done(page, words: str) -> None:
    """Wait for the page the act answered with, saying it was done (the admin's message)."""
    page.locator(".messagelist .success", has_text=words).first.wait_for()


def test_a_cashier_receives_a_sixain_and_the_commissioner_verifies_it_and_signs_the_register(
    pages, cast
):
    cashier = pages(cast.caissier)
    cashier.goto("/admin/pit/cards/")
    cashier.select_option("select[name=delivery-kind]", "sixain")
    cashier.fill("input[name=delivery-maker]", "Grimaud")
    cashier.fill("input[name=delivery-sealing_authority]", "Préfecture de police")
    cashier.fill("input[name=delivery-store_location]", "coffre A")
    cashier.fill("input[name=packs-0-seal_number]", "RF-2001")
    cashier.fill("input[name=packs-0-maker_pack_numbers]", "G-1..6")
    cashier.fill("input[name=packs-1-seal_number]", "RF-2002")
    cashier.fill("input[name=packs-1-maker_pack_numbers]", "G-7..12")
    cashier.click("#delivery button[type=submit]")
    done(cashier, "2 jeux reçus au registre")
    sixain = Pack.objects.get(seal_number="RF-2001")
    assert Pack.objects.filter(state=PackState.RECEIVED, received_by=cast.caissier).count() == 2

    cashier.click(f"#pack-{sixain.pk} a")
    cashier.click("#store-form button[type=submit]")
    done(cashier, "rangé en magasin")
    sixain.refresh_from_db()
    assert sixain.state == PackState.IN_STORE

    commissioner = pages(cast.commissaire)
    commissioner.goto(f"/admin/pit/cards/{sixain.pk}/")
    commissioner.fill("#verify-form input[name=seal_number_read]", "RF-2001")
    commissioner.select_option("#verify-form select[name=verdict]", "intact")
    commissioner.click("#verify-form button[type=submit]")
    done(commissioner, "scellé RF-2001")
    sixain.refresh_from_db()
    assert sixain.state == PackState.VERIFIED
    assert "scellé lu RF-2001 : intact" in commissioner.inner_text("#timeline")

    commissioner.goto("/admin/pit/cards/")
    page_of_today = commissioner.locator(".register-page").first
    assert "RF-2001" in page_of_today.inner_text()
    assert "RF-2002" in page_of_today.inner_text()
    page_of_today.locator("textarea[name=remarks]").fill("deux sixains, scellés d'État")
    page_of_today.locator("button[type=submit]").click()
    done(commissioner, "visée")
    visa = RegisterVisa.objects.get()
    assert visa.commissaire == cast.commissaire
    assert visa.packs_seen == 2

    cashier.goto("/admin/pit/cards/")
    screenshot(cashier, "card-room")


def test_a_pack_plays_its_taille_is_replaced_counted_back_and_destroyed(
    pages, cast, shift, verified
):
    sixain, spare = verified(), verified()
    chef = pages(cast.chef)
    chef.goto(f"/admin/pit/cards/{sixain.pk}/")
    chef.select_option("#open-form select[name=shift]", str(shift.pk))
    chef.click("#open-form button[type=submit]")
    done(chef, "ouvert à la table")

    croupier = pages(cast.croupier)
    croupier.goto(f"/admin/pit/cards/{sixain.pk}/")
    croupier.click("#shuffle-form button[type=submit]")
    done(croupier, "mélange enregistré")

    tailleur = pages(cast.tailleur)
    tailleur.goto(f"/admin/pit/cards/{sixain.pk}/")
    tailleur.click("#shuffle-form button[type=submit]")
    done(tailleur, "mélange enregistré")
    tailleur.fill("#cut-form input[name=cut_by]", "M. Dupont")
    tailleur.click("#cut-form button[type=submit]")
    done(tailleur, "coupé : le jeu est en jeu")
    sixain.refresh_from_db()
    assert sixain.state == PackState.IN_PLAY

    # Les cartes passent: the tailleur's scanner reads the talon, the next card first.
    tailleur.fill("#pass-scanned-form textarea[name=undealt]", " ".join(talon(sixain)))
    tailleur.click("#pass-scanned-form button[type=submit]")
    done(tailleur, "le compte est juste")
    count = TalonCount.objects.get(pack=sixain)
    assert count.method == "scanned"
    assert len(count.cards) == 312
    assert count.balanced

    # The players demand a new sealed sixain: the old one leaves play, the card room is told.
    chef.reload()
    chef.fill("#replace-form input[name=demanded_by]", "M. Martin")
    chef.select_option("#replace-form select[name=side]", "players")
    chef.click("#replace-form button[type=submit]")
    chef.wait_for_selector("#demand")
    assert spare.seal_number in chef.inner_text("#demand")
    sixain.refresh_from_db()
    assert sixain.state == PackState.WITHDRAWN

    # Counted back card by card: one ace of spades is missing.
    for code in [f"{rank}{suit}" for suit in "SHDC" for rank in "A23456789TJQK"]:
        chef.fill(f"#retire-form input[name=retire-n_{code}]", "5" if code == "AS" else "6")
    assert chef.inner_text("#retire-form [data-total]") == "311"
    chef.click("#retire-form button[type=submit]")
    done(chef, "le recomptage n'est pas juste")
    reconciliation = Reconciliation.objects.get(pack=sixain)
    assert reconciliation.missing == {"AS": 1}
    assert "manquent AS ×1" in chef.inner_text("#reconciliation")

    commissioner = pages(cast.commissaire)
    commissioner.goto(f"/admin/pit/cards/{sixain.pk}/")
    commissioner.fill("#destroy-form input[name=remarks]", "brûlé au four du casino")
    commissioner.click("#destroy-form button[type=submit]")
    done(commissioner, "détruit devant le commissaire")
    sixain.refresh_from_db()
    assert sixain.state == PackState.DESTROYED
    timeline = commissioner.inner_text("#timeline")
    for words in ("coupé par M. Dupont", "un jeu neuf demandé par M. Martin", "brûlé au four"):
        assert words in timeline
    assert "{" not in timeline  # sentences, never JSON
    screenshot(commissioner, "pack")
