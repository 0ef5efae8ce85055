"""The table page in a real browser: the tailleur and the croupier, each in their own signed-in
tab, play a coup by keyboard; the coup recorded is the replay of its cards, its settlements the
preview they were shown; a late stake and a foreign card are shown refused and recorded; the
cards pass with the undealt cards; a person off duty is refused."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from audit.models import Anomaly
from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Coup, CoupResult, Settlement, Stake
from casino.games.replay import replay
from casino.people.roles import Role
from shoes.models import CardLaid, PackEvent, TalonCount
from tests.actors import hire
from tests.browser.conftest import screenshot

pytestmark = pytest.mark.django_db(transaction=True)

# Played before the coup on the page, through the services: a refait that sends a stake on noir
# to prison, then an après that brings the sixain's sixth KS out (a seventh is a foreign card).
REFAIT = "KS QS JS AS KH QH JH AH".split()
APRES = "KS KS KS KS KS QC JC KC".split()
# The coup played on the page: 33 / 37, noir wins, its first card black: couleur.
TYPED = ["QS", "7h", "9D", "2C", "5S", "10H", "QD", "AS", "4C", "3H", "9S"]


def play(cast, shift, cards, stakes=()):
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
    for code in cards:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    coup_settle(actor=cast.croupier, coup_id=coup.pk)


def said(page):
    return page.locator("#said")


def test_the_tailleur_and_the_croupier_play_a_coup_by_keyboard(cast, pages, shift, sixain_in_play):
    play(cast, shift, REFAIT, [("seat7", "7", "noir", 1000)])
    play(cast, shift, APRES)
    tailleur = pages(cast.tailleur)
    croupier = pages(cast.croupier)
    tailleur.goto("/admin/pit/table/1/")
    croupier.goto("/admin/pit/table/1/")
    # The prison on the layout: the stake of the refait waits on noir.
    expect(tailleur.locator(".box.noir .prisoner")).to_contain_text("place 7 · 10,00 · niveau 1")

    # "Messieurs, faites vos jeux": the keyboard is on the tailleur's first act.
    expect(tailleur.locator("#open-coup")).to_be_focused()
    tailleur.keyboard.press("Enter")
    expect(tailleur.locator("#panel-body")).to_have_attribute("data-phase", "betting")
    expect(said(tailleur)).to_contain_text("Coup n° 3 : messieurs, faites vos jeux")

    # The croupier's page follows; the keyboard goes to the stake, the limits beside it.
    expect(croupier.locator("#stake-holder")).to_be_focused()
    expect(croupier.locator("#stake-form")).to_contain_text("Mises de 5,00 à 6\u00a0000,00")
    croupier.keyboard.type("3")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("r")  # rouge
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("25")
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Mise posée : place 3, rouge, 25,00")
    expect(croupier.locator("#stake-holder")).to_be_focused()
    croupier.keyboard.press("Shift+Tab")
    croupier.keyboard.type("c")  # carte de patron
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("1234")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("c")  # couleur
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("1000")
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Mise posée : patron 1234, couleur, 1\u00a0000,00")
    expect(croupier.locator(".box.couleur .stake")).to_contain_text("patron 1234")

    # "Le jeu est fait", then the cards, typed.
    expect(tailleur.locator(".box.rouge .stake")).to_contain_text("place 3")  # by the poll
    tailleur.keyboard.press("Escape")
    expect(tailleur.locator("#close-betting")).to_be_focused()
    tailleur.keyboard.press("Enter")
    expect(tailleur.locator("#card-code")).to_be_focused()
    tailleur.keyboard.type(TYPED[0])
    tailleur.keyboard.press("Enter")
    expect(tailleur.locator(".row.noir .card")).to_have_count(1)

    # A stake after the first card: shown refused, and recorded.
    croupier.keyboard.press("Shift+Tab")
    croupier.keyboard.type("p")  # place
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("5")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("n")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("50")
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Refusé et enregistré")
    expect(said(croupier)).to_contain_text("la première carte du coup 3 est sur la table")

    # A seventh KS: a foreign card, shown refused and recorded; the tailleur types on.
    tailleur.keyboard.type("ks")
    tailleur.keyboard.press("Enter")
    expect(said(tailleur)).to_contain_text("Refusé et enregistré")
    expect(said(tailleur)).to_contain_text("une carte étrangère")
    for code in TYPED[1:5]:
        tailleur.keyboard.type(code)
        tailleur.keyboard.press("Enter")
    expect(tailleur.locator(".row.noir .row-total")).to_have_text("33")
    expect(tailleur.locator(".row.noir .row-word")).to_have_text("trois")
    expect(tailleur.locator("#next-word")).to_have_text("Carte suivante : seconde rangée (rouge)")
    for code in TYPED[5:8]:  # one card by the picker
        tailleur.keyboard.type(code)
        tailleur.keyboard.press("Enter")
    tailleur.click(".picker button[data-code='4C']")
    expect(tailleur.locator(".row.rouge .card")).to_have_count(4)
    tailleur.locator("#card-code").focus()
    for code in TYPED[9:]:
        tailleur.keyboard.type(code)
        tailleur.keyboard.press("Enter")
    expect(tailleur.locator(".row.rouge .row-total")).to_have_text("37")
    expect(tailleur.locator("#announcement")).to_contain_text(
        "trois … sept … rouge perd, couleur gagne"
    )

    # The settlement, stake by stake, before it is confirmed: the prisoner on noir freed, the
    # stake on rouge lost, the one on couleur won.
    preview = croupier.locator("#preview tr.settlement")
    expect(preview).to_have_count(3)
    shown = [row.get_attribute("data-outcome") for row in preview.all()]
    assert shown == ["freed", "lost", "won"]
    expect(croupier.locator("#spoken")).to_have_value("rouge perd, couleur gagne")
    screenshot(tailleur, "table-mid-coup")
    croupier.keyboard.press("Escape")
    expect(croupier.locator("#settle-confirm")).to_be_focused()
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Coup n° 3 réglé : rouge perd, couleur gagne")
    expect(tailleur.locator("#last-coup")).to_contain_text("Coup n° 3 réglé")

    # Les cartes passent: the tailleur records the undealt cards (a scanner types them).
    coup = Coup.objects.get(number=3)
    laid = list(CardLaid.objects.filter(pack=sixain_in_play).order_by("seq"))
    from tests.conftest import talon

    undealt = talon(sixain_in_play)
    tailleur.click("#passing summary")
    tailleur.fill("#undealt", " ".join(undealt))
    tailleur.check("input[name=method][value=scanned]")
    tailleur.locator("#pass-confirm").press("Enter")
    expect(said(tailleur)).to_contain_text(
        f"Les cartes passent : {len(undealt)} cartes restantes enregistrées"
    )
    count = TalonCount.objects.get(pack=sixain_in_play)
    assert (count.cards, count.method, count.counted_by) == (undealt, "scanned", cast.tailleur)

    # What was recorded: the stakes as typed, the refusals kept, the coup as its cards say.
    stakes = list(Stake.objects.filter(coup=coup).order_by("id"))
    assert [(s.holder.code, s.chance, s.amount, s.placed_by) for s in stakes] == [
        ("T1:seat:3", "rouge", 2500, cast.croupier),
        ("patron:1234", "couleur", 100000, cast.croupier),
    ]
    assert Anomaly.objects.get(detector="late_stake").involved == [cast.croupier.pk]
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    assert PackEvent.objects.filter(kind="foreign_card", details__card="KS").count() == 1
    assert [c.card for c in laid if c.coup_id == coup.pk] == [
        "QS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"
    ]  # fmt: skip

    # The regulator's replay of the talon (every card laid, then the undealt) and its stakes.
    prisoner = Stake.objects.get(ref="seat7")
    document = {
        "game": "trente-et-quarante",
        "reglement": coup.reglement.name,
        "cards": [c.card for c in laid] + undealt,
        "stakes": [
            {"id": str(s.pk), "coup": s.coup.number, "chance": s.chance, "amount": s.amount}
            for s in [prisoner, *stakes]
        ],
    }
    replayed = replay(document)["coups"][2]
    result = CoupResult.objects.get(coup=coup)
    assert {
        "noir": {"cards": result.noir_cards, "total": result.noir_total},
        "rouge": {"cards": result.rouge_cards, "total": result.rouge_total},
        "result": result.result,
        "couleur": result.couleur,
        "announcement": result.announcement,
    } == {key: replayed[key] for key in ("noir", "rouge", "result", "couleur", "announcement")}
    settled = [
        {
            "stake": str(s.stake_id),
            "outcome": s.outcome,
            "paid": s.paid,
            "returned": s.returned,
            "to_bank": s.to_bank,
            "premium": s.premium,
            "held": s.held,
            "level": s.level,
        }
        for s in Settlement.objects.filter(coup=coup).order_by("id")
    ]
    assert settled == replayed["settlements"]
    # ... and the settlement recorded is the one shown before the confirmation.
    assert [s["outcome"] for s in settled] == shown
    assert result.spoken == "rouge perd, couleur gagne"
    assert result.settled_by == cast.croupier


def test_a_tailleur_off_duty_is_refused_the_table_page(cast, pages, shift, sixain_in_play):
    idle = hire(cast.directeur, "tailleur_idle", Role.TAILLEUR)
    before = (Coup.objects.count(), PackEvent.objects.count(), Anomaly.objects.count())
    page = pages(idle)
    response = page.goto("/admin/pit/table/1/")
    assert response.status == 403
    expect(page.locator(".refused")).to_contain_text("n'y est pas de service")
    expect(page.locator("#open-coup")).to_have_count(0)
    expect(page.locator("#stake-form")).to_have_count(0)
    assert (Coup.objects.count(), PackEvent.objects.count(), Anomaly.objects.count()) == before
