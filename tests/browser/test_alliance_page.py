"""The cercle table page in a real browser (issue 15, item 5): the croupier on duty seats four
patrons who bought in at the cage, opens a deal (the cutter offered as the dealer changes), types
the hands and the table cards, clicks the auction call by call, fills the declarer's contract (a
lever with its take and discards) and clicks each card as it is played, to the settlement; a card
typed that does not follow suit is shown refused with its rule, and recorded. The deal recorded is
the replay of its document."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from audit.models import AuditEvent
from casino.floor.cage import patron_buy_in
from casino.floor.models import Account
from casino.floor.play.alliance.models import Deal
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import balance
from casino.games import alliance as engine
from casino.games.cards import card
from casino.games.replay import replay
from casino.pit.table import card_label
from tests.browser.conftest import screenshot
from tests.floor.alliance_world import (
    BUY_IN,
    NUMBER,
    cercle_pack,
    cercle_seance,
    cercle_table,
    sheet,
    simulated,
)

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = f"/admin/pit/table/{NUMBER}/"
SEED = 17  # a voluntary lever by the Vorhand, who takes the table cards and discards four


def said(page):
    return page.locator("#said")


def name(code: str) -> str:
    return code.removeprefix("patron:")


def test_the_croupier_records_a_deal_of_alliance_to_its_settlement(cast, pages):
    shift = cercle_seance(cast, cercle_table(cast), players=0)
    cercle_pack(cast, shift)
    doc = sheet(simulated(SEED))
    players = doc["players"]
    assert doc["contract"]["take"]
    for code in players:
        patron_buy_in(actor=cast.caissier, patron=code, amount=BUY_IN)

    croupier = pages(cast.croupier)
    croupier.goto(PAGE)

    # The players seated, by keyboard, seats 1 to 4 in their order round the table.
    for seat, code in enumerate(players, start=1):
        croupier.locator("#seat-number").fill(str(seat))
        croupier.locator("#seat-patron").fill(name(code))
        croupier.locator("#seat-patron").press("Enter")
        expect(said(croupier)).to_contain_text(f"{name(code)} s'assied à la place {seat}")
    expect(croupier.locator("#seats tr.seat")).to_have_count(4)

    # The dealer chosen: the player on his left is offered as the cutter.
    croupier.locator("#deal-dealer").select_option(players[-1])
    expect(croupier.locator("#deal-cutter")).to_have_value(players[-2])
    croupier.click("#open-deal")
    expect(said(croupier)).to_contain_text(
        f"Donne n° 1 : {name(players[-1])} a mêlé, {name(players[-2])} a coupé"
    )

    # The hands as each player holds them, then the table cards; the count follows the typing.
    # A card left out is refused with its reason, and what was typed stays to be corrected.
    hands, table = engine.deal([card(c) for c in doc["cards"]], 4)
    expect(croupier.locator("#hand-0")).to_be_focused()
    for i, hand in enumerate(hands):
        croupier.locator(f"#hand-{i}").fill(" ".join(str(c).lower() for c in hand))
    expect(croupier.locator("#hand-3 ~ .codes-count")).to_have_text("12/12")
    croupier.locator("#table-up").fill(str(table.up))
    croupier.locator("#table-down").fill(" ".join(str(c) for c in table.down[:-1]))
    expect(croupier.locator("#table-down ~ .codes-count")).to_have_text("2/3")
    croupier.click("#cards-confirm")
    expect(said(croupier)).to_contain_text("3 cartes, pas 4")  # the table's: 1 up, 3 down
    expect(croupier.locator("#table-down")).to_have_class(re.compile("at-fault"))
    expect(croupier.locator("#table-down")).to_be_focused()
    expect(croupier.locator("#hand-3")).to_have_value(" ".join(str(c).lower() for c in hands[3]))
    croupier.keyboard.press("End")
    croupier.keyboard.type(f" {table.down[-1]}")
    croupier.click("#cards-confirm")
    expect(said(croupier)).to_contain_text(f"à {name(players[0])} d'annoncer")

    # The auction: the buttons of the calls the engine allows the player whose turn it is.
    for i, word in enumerate(doc["auction"]):
        croupier.locator(f"#call-form button[value='{word}']").click()
        expect(croupier.locator("#calls li")).to_have_count(i + 1)
    expect(said(croupier)).to_contain_text(f"enchères finies : {name(players[0])} joue lever")

    # The contract of a lever: the card turned, the take, the discards, the king called.
    contract = doc["contract"]
    form = croupier.locator("#contract-form")
    form.locator(f"input[name=turn][value='{contract['turn']}']").check()
    form.locator("#contract-take").check()
    for code in contract["discard"]:
        form.locator(f"input[name=discard][value='{code}']").check()
    form.locator(f"input[name=called][value='{contract['called']}']").check()
    croupier.click("#contract-confirm")
    expect(said(croupier)).to_contain_text("Contrat enregistré")
    expect(croupier.locator("#next-word")).to_contain_text(f"Pli n° 1 : à {name(players[0])}")

    # Each card clicked in the hand of the player whose turn it is; once, a card that does not
    # follow suit, typed: refused with the rule, and recorded.
    state = engine.AllianceDeal(players)
    for code in doc["cards"]:
        state.receive(card(code))
    for word in doc["auction"]:
        state.call(engine.Call(word))
    state.declare(engine.contract_from_dict(contract))
    refused = None
    for trick in doc["tricks"]:
        for code in trick:
            player = state.next_player
            assert player is not None
            hand = state.hands[players.index(player)]
            off = [c for c in hand if c not in state.legal_cards()]
            if refused is None and off and len(state.tricks) >= 4:  # tricks in sight
                refused = str(off[0])
                # The panel of this player's turn, not the last card's being swapped out.
                typed = croupier.locator("#play-typed-form input[name=player]")
                expect(typed).to_have_value(player)
                croupier.locator("#play-code").fill(refused.lower())
                croupier.locator("#play-code").press("Enter")
                expect(said(croupier)).to_contain_text("Refusé et enregistré")
                expect(said(croupier)).to_contain_text(f"doit fournir à {trick[0][1]}")
                expect(said(croupier)).to_contain_text("must_follow_suit")
                button = croupier.locator(f"#play-form button[value='{refused}']")
                expect(button).to_be_disabled()  # shown, not to be clicked
                screenshot(croupier, "cercle-table")
            croupier.locator(f"#play-form button[value='{code}']").click()
            expect(said(croupier)).to_contain_text(f"{name(player)} joue {card_label(code)}")
            state.play(card(code))
    assert refused is not None
    expect(said(croupier)).to_contain_text("donne réglée")
    expect(croupier.locator("#settled")).to_contain_text("Donne n° 1 réglée")

    # What was recorded is the replay of the deal's document, and the page says what it paid.
    deal = Deal.objects.get()
    result = replay(deal_document(deal))
    assert deal.settlement.outcome == result
    for player, money in result["money"].items():
        assert balance(Account.objects.get(code=player)) == BUY_IN + money
        row = croupier.locator(f"#settled tr[data-player='{name(player)}'] .money")
        expect(row).to_have_text(f"{money / 100:.2f}".replace(".", ","))
    events = AuditEvent.objects.filter(action="deal.card_refused")
    assert [json.loads(e.payload)["card"] for e in events] == [refused]
