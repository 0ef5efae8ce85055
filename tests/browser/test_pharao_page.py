"""The Pharao table page in a real browser (issue 13, item 6): the tailleur and the croupier, each in
their own signed-in tab, play draws of a taille by keyboard with stakes and a paroli; a false
paroli is shown refused and recorded; a reduction asked by the croupier is refused until the chef
de partie approves it in his own session, then made."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from audit.models import Anomaly
from casino.floor.play.pharao.models import PharaoDraw, PharaoStake, PharaoStakeAct
from tests.browser.conftest import screenshot
from tests.conftest import open_seance
from tests.floor.pharao_world import NUMBER, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = f"/admin/pit/table/{NUMBER}/"


def said(page):
    return page.locator("#said")


def stake_on(page, rank):
    return page.locator(f".rank[data-rank='{rank}'] .stake")


def approve_reduction_on_the_5(chef):
    """The banker (the chef de partie) approves, on his own page, a reduction of 5,00 of the
    stake on the 5."""
    chef.goto(PAGE)
    approve = stake_on(chef, "5").locator(".approve")
    approve.locator("summary").click()
    approve.locator("select[name=act]").select_option("reduce")
    approve.locator("input[name=amount]").fill("5")
    approve.locator("button[type=submit]").click()
    expect(said(chef)).to_contain_text("Approuvé par le banquier : réduction de 5,00")


def test_a_taille_played_by_keyboard_with_a_paroli_a_false_one_and_an_approval(cast, pages, posted):
    seance = open_seance(cast, pharao_table(cast))
    single_pack_in_play(cast, seance)
    tailleur = pages(cast.tailleur)
    croupier = pages(cast.croupier)
    tailleur.goto(PAGE)
    croupier.goto(PAGE)

    # The taille opened: the bottom card typed where the keyboard already is.
    expect(tailleur.locator("#bottom-code")).to_be_focused()
    tailleur.keyboard.type("ks")
    tailleur.keyboard.press("Enter")
    expect(said(tailleur)).to_contain_text("Taille n° 1 : la carte du dessous, K♠, est montrée")
    expect(tailleur.locator("#card-code")).to_be_focused()

    # The croupier's page follows; the keyboard goes to the stake, typed field by field.
    expect(croupier.locator("#stake-holder")).to_be_focused()
    croupier.keyboard.type("1")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("7")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("10")
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Mise posée : place 1, sur le 7, 10,00")
    expect(croupier.locator("#stake-holder")).to_be_focused()
    croupier.keyboard.press("Shift+Tab")
    croupier.keyboard.type("c")  # carte de patron
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("1234")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("5")
    croupier.keyboard.press("Tab")
    croupier.keyboard.type("20")
    croupier.keyboard.press("Enter")
    expect(said(croupier)).to_contain_text("Mise posée : patron 1234, sur le 5, 20,00")

    # Draw 1, typed: 3♣ for the bank, 7♥ for the players. The stake on the 7 wins.
    expect(stake_on(tailleur, "5")).to_contain_text("patron 1234")  # by the poll
    for code in ("3C", "7h"):
        tailleur.keyboard.type(code)
        tailleur.keyboard.press("Enter")
    expect(tailleur.locator(".draw[data-draw='1'] .right .card")).to_have_attribute(
        "data-code", "7H"
    )
    expect(tailleur.locator("#next-word")).to_contain_text("Tirage 2 : carte de gauche")

    # The paroli on the stake that just won, then a "paroli" on the 5, which did not win.
    expect(stake_on(croupier, "7")).to_contain_text("vient de gagner")
    stake_on(croupier, "7").locator("button.paroli").click()
    expect(said(croupier)).to_contain_text("Mise place 1, 7 marquée : paroli")
    expect(stake_on(croupier, "7")).to_have_attribute("data-mark", "paroli")
    stake_on(croupier, "5").locator("summary").first.click()
    stake_on(croupier, "5").locator(".stake-acts button.paroli").click()
    expect(said(croupier)).to_contain_text("Refusé et enregistré")
    expect(said(croupier)).to_contain_text("false_paroli")
    # Once the answer has settled the keyboard goes to the next act (the stake form). A field
    # filled before that moment loses the keyboard, and a poll may then swap it out empty.
    expect(croupier.locator("#stake-holder")).to_be_focused()

    # A reduction asked by the croupier: refused until the banker approves it. The stake's acts
    # he opened stay open through the panel's swaps (his own act's, the poll's).
    expect(stake_on(croupier, "5").locator(".stake-acts")).to_have_attribute("open", "")
    stake_on(croupier, "5").locator(".stake-acts input[name=amount]").fill("5")
    stake_on(croupier, "5").locator("button.reduce").click()
    expect(said(croupier)).to_contain_text("not_approved")
    expect(stake_on(croupier, "5").locator(".approve")).to_have_count(0)  # not the croupier's act

    approve_reduction_on_the_5(pages(cast.chef))

    expect(stake_on(croupier, "5").locator(".approval")).to_contain_text("approuvé par")
    stake_on(croupier, "5").locator(".stake-acts input[name=amount]").fill("5")
    stake_on(croupier, "5").locator("button.reduce").click()
    expect(said(croupier)).to_contain_text("Mise patron 1234, 5 réduite de 5,00")
    expect(stake_on(croupier, "5")).to_contain_text("15,00")

    # Draw 2: the first card by the picker, the second typed.
    tailleur.click(".picker button[data-code='2D']")
    expect(tailleur.locator(".draw[data-draw='2'] .left .card")).to_have_attribute(
        "data-code", "2D"
    )
    tailleur.locator("#card-code").focus()
    tailleur.keyboard.type("9S")
    tailleur.keyboard.press("Enter")
    expect(tailleur.locator(".draw[data-draw='2'] .right .card")).to_have_attribute(
        "data-code", "9S"
    )
    expect(stake_on(tailleur, "7")).to_contain_text("20,00")  # the paroli rides: 10 + 10
    screenshot(tailleur, "pharao-table")

    # What was recorded: the stakes as typed, the acts, the draws; the false paroli as evidence.
    stakes = list(PharaoStake.objects.order_by("id"))
    assert [(s.holder.code, s.rank, s.amount, s.placed_by) for s in stakes] == [
        (f"T{NUMBER}:seat:1", "7", 1000, cast.croupier),
        ("patron:1234", "5", 2000, cast.croupier),
    ]
    acts = list(PharaoStakeAct.objects.order_by("id"))
    assert [(a.stake.rank, a.act, a.amount, a.by) for a in acts] == [
        ("7", "paroli", None, cast.croupier),
        ("5", "reduce", 500, cast.croupier),
    ]
    assert acts[1].approval.approved_by == cast.chef
    assert [(d.number, d.bank_card, d.players_card) for d in PharaoDraw.objects.all()] == [
        (1, "3C", "7H"),
        (2, "2D", "9S"),
    ]
    anomaly = Anomaly.objects.get(detector="false_paroli")
    assert (anomaly.evidence["stake"], anomaly.involved) == (stakes[1].pk, [cast.croupier.pk])


def test_an_amount_typed_in_a_stakes_acts_survives_the_polls_swap(cast, pages, posted):
    """The croupier has typed an amount and his pointer is on the button (the keyboard has left
    the field, so the poll no longer waits) when another person's act changes the panel: the
    poll's swap puts back what he typed, and his click sends it."""
    from casino.floor.play.pharao.tailles import pharao_stake_place, taille_lay_card, taille_open
    from tests.floor.pharao_world import A_TAILLE

    seance = open_seance(cast, pharao_table(cast))
    single_pack_in_play(cast, seance)
    taille = taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card=A_TAILLE[-1])
    pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref="a", holder="1", rank="5", amount=2000
    )
    for code in A_TAILLE[:2]:  # draw 1: neither card a 5, the stake stands
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=code)

    croupier = pages(cast.croupier)
    croupier.goto(PAGE)
    stake_on(croupier, "5").locator("summary").first.click()
    amount = stake_on(croupier, "5").locator(".stake-acts input[name=amount]")
    amount.fill("5")
    stake_on(croupier, "5").locator("button.reduce").focus()  # as a press on it moves the keyboard

    approve_reduction_on_the_5(pages(cast.chef))

    expect(stake_on(croupier, "5").locator(".approval")).to_contain_text("approuvé par")  # polled
    expect(amount).to_have_value("5")
    stake_on(croupier, "5").locator("button.reduce").click()
    expect(said(croupier)).to_contain_text("Mise place 1, 5 réduite de 5,00")
    act = PharaoStakeAct.objects.get()
    assert (act.act, act.amount, act.by, act.approval.approved_by) == (
        "reduce",
        500,
        cast.croupier,
        cast.chef,
    )
