"""The cercle table page through Django's test client (issue 15, item 5): the same URL as any table,
an Alliance table's page; the croupier on duty seats the players, opens each deal, enters its
cards, each call and the contract, and each card as played, one request each through the service
the API calls; what the rules refuse is shown with the rule's words and recorded when it is
evidence; nobody but the staff on duty at the table sees it or acts there."""

from __future__ import annotations

import html
import json
import re

import pytest
from django.test import Client

from audit.models import AuditEvent
from casino.floor.cage import patron_buy_in
from casino.floor.models import Account, Game, Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import (
    CercleSeat,
    CercleSeatEnd,
    Deal,
    DealCall,
    DealContract,
    DealPlay,
    DealSettlement,
)
from casino.floor.play.alliance.selectors import deal_document
from casino.floor.services import (
    balance,
    count_countersign,
    count_record,
    shift_open,
    table_create,
)
from casino.games import alliance as engine
from casino.games.replay import replay
from casino.people.roles import Role
from casino.pit.table import PAGES, card_label
from shoes.models import CardLaid
from tests.actors import admin_client, hire
from tests.conftest import FLOAT
from tests.floor.alliance_world import (
    BUY_IN,
    FEE,
    NUMBER,
    cercle_pack,
    cercle_seance,
    cercle_table,
    sheet,
    simulated,
)

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
PAGE = f"/admin/pit/table/{NUMBER}/"


def post(client: Client, act: str, data: dict | None = None, *, number: int = NUMBER):
    return client.post(f"/admin/pit/table/{number}/{act}/", data or {}, headers=HTMX)


def text(response) -> str:
    return html.unescape(response.content.decode())


def panel(client: Client) -> str:
    return text(client.get(f"{PAGE}panel/"))


def recorded() -> tuple[int, ...]:
    """What a refused act must leave as it was (its evidence apart, counted on its own)."""
    return (
        CercleSeat.objects.count(),
        CercleSeatEnd.objects.count(),
        Deal.objects.count(),
        DealCall.objects.count(),
        DealContract.objects.count(),
        DealPlay.objects.count(),
        DealSettlement.objects.count(),
        CardLaid.objects.count(),
        Movement.objects.count(),
    )


@pytest.fixture
def seance(cast):
    shift = cercle_seance(cast, cercle_table(cast))
    cercle_pack(cast, shift)
    return shift


@pytest.fixture
def croupier(cast):
    return admin_client(cast.croupier)


def euros(minor: int) -> str:
    """An amount as the page writes it in French (these stay below a thousand)."""
    return f"{minor / 100:.2f}".replace(".", ",")


def done(answer) -> str:
    said = text(answer)
    assert answer.status_code == 200, said[-3000:]
    return said


def contract_fields(contract: dict) -> dict:
    """The contract's form as the croupier fills it for the declarer's game."""
    fields = {k: v for k, v in contract.items() if k in ("trumps", "called", "turn")}
    if contract.get("take"):
        fields["take"] = "on"
        fields["discard"] = contract["discard"]
    if "resistance" in contract:
        fields["resistance"] = contract["resistance"] or ""
    return fields


def open_and_deal(client: Client, doc: dict) -> tuple[Deal, str]:
    """The deal opened (the cutter the page offers for the dealer) and its cards entered hand by
    hand; and the panel that answered."""
    players = doc["players"]
    page = panel(client)
    assert f'<option value="{players[-1]}" data-left="{players[-2]}"' in page
    done(post(client, "deal", {"dealer": players[-1], "cut_by": players[-2]}))
    deal = Deal.objects.get(phase="dealing")
    hands, table = engine.deal([engine.card(c) for c in doc["cards"]], len(players))
    fields = {f"hand:{p}": " ".join(str(c) for c in h) for p, h in zip(players, hands, strict=True)}
    fields |= {"deal": deal.pk, "table_up": str(table.up)}
    fields["table_down"] = ", ".join(str(c).lower() for c in table.down)  # typed as they come
    return deal, done(post(client, "deal/cards", fields))


def play_through_the_page(client: Client, doc: dict) -> Deal:
    """The deal of ``doc`` (its replay document) played through the page, each act offered by
    the panel (the one the previous act answered) before it is made: the call's button, the
    contract's form, the card clickable in the hand of the player whose turn it is."""
    players = doc["players"]
    deal, page = open_and_deal(client, doc)
    for i, word in enumerate(doc["auction"]):
        offered = re.findall(r'name="call" value="(\w+)"', page)
        assert offered == [c.value for c in deals.deal_of(deal).legal_calls()]
        assert word in offered
        player = players[i % len(players)]
        page = done(post(client, "deal/calls", {"deal": deal.pk, "player": player, "call": word}))
    assert 'id="contract-form"' in page
    page = done(
        post(client, "deal/contract", {"deal": deal.pk, **contract_fields(doc["contract"])})
    )
    for trick in doc["tricks"]:
        for code in trick:
            button = re.search(rf'<button type="submit" name="code" value="{code}"[^>]*>', page)
            assert button is not None, code
            assert "disabled" not in button.group(0), code
            player = re.search(r'id="play-form".*?name="player" value="([^"]+)"', page, re.S)
            assert player is not None
            page = done(
                post(
                    client,
                    "deal/plays",
                    {"deal": deal.pk, "player": player.group(1), "code": code},
                )
            )
    assert "donne réglée" in page
    deal.refresh_from_db()
    return deal


# --- the deal -------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [7, 17, 13], ids=["alliance", "lever-taken", "solo-resisted"])
def test_a_deal_played_through_the_page_is_the_replay_of_its_document(cast, seance, croupier, seed):
    before = {s.patron.code: balance(s.patron) for s in CercleSeat.objects.filter(shift=seance)}
    sim = simulated(seed)
    deal = play_through_the_page(croupier, sheet(sim))
    assert deal.phase == "over"
    result = replay(deal_document(deal))
    assert deal.settlement.outcome == result
    assert result["marks"] == {f"patron:{k}": v for k, v in sim.outcome.marks.items()}
    for player, money in result["money"].items():
        assert balance(Account.objects.get(code=player)) == before[player] + money
    fee_box = Account.objects.get(table=seance.table, kind=Account.Kind.FEE_BOX)
    assert balance(fee_box) == 4 * FEE
    assert {e.by for e in (*DealCall.objects.all(), *DealPlay.objects.all())} == {cast.croupier}

    # Between deals the page shows what the deal settled, and offers the next one.
    page = panel(croupier)
    assert f"Donne n° {deal.number} réglée" in page
    for player, money in result["money"].items():
        row = re.search(rf'data-player="{player[7:]}">(.*?)</tr>', page, re.S)
        assert row is not None
        assert f'<td class="num money">{euros(money)}</td>' in row.group(1)
    assert 'id="deal-form"' in page


def test_the_page_shows_the_deal_as_the_croupier_enters_it(cast, seance, croupier):
    doc = sheet(simulated(7))
    page = text(croupier.get(PAGE))
    assert "Marque à 1,00 ; cagnotte : 0,30 par joueur et par donne" in page
    for name in ("ana", "ben", "carl", "dora"):
        assert re.search(rf'data-patron="patron:{name}"><td>\d</td><td>{name}</td>', page)
    assert page.count(f'<td class="num balance">{euros(BUY_IN)}</td>') == 4
    assert 'id="open-deal"' in page
    assert 'class="picker"' not in page  # no card picker: the cards are entered deal by deal

    deal, _page = open_and_deal(croupier, doc)
    page = panel(croupier)
    assert "Enchères : à ana d'annoncer." in page
    assert page.count('class="card ') >= 52  # every hand and the table cards, as cards
    assert "couleur :" in page
    assert re.findall(r'name="call" value="(\w+)"', page) == ["pass", "alliance", "lever", "solo"]
    for word in doc["auction"]:
        caller = deals.deal_of(deal).next_caller
        said = done(post(croupier, "deal/calls", {"deal": deal.pk, "player": caller, "call": word}))
    assert "enchères finies : ben joue alliance" in said
    page = panel(croupier)
    form = page.split('id="contract-form"')[1].split("</form>")[0]
    assert form.count('name="trumps"') == 4
    assert form.count('name="called" value="K') == 4  # the king he calls: the engine's rank
    assert 'name="turn"' not in form  # an alliance turns nothing

    said = done(
        post(croupier, "deal/contract", {"deal": deal.pk, **contract_fields(doc["contract"])})
    )
    assert "Contrat enregistré ; atout : ♦ carreau ; appelle K♣" in said
    page = panel(croupier)
    assert "Pli n° 1 : à ana de jouer." in page
    assert page.count('name="code" value=') == 12  # ana's hand, as cards to click
    trick = doc["tricks"][0]
    said = done(
        post(croupier, "deal/plays", {"deal": deal.pk, "player": "patron:ana", "code": trick[0]})
    )
    assert f"ana joue {card_label(trick[0])}" in said
    for player, code in zip(("ben", "carl", "dora"), trick[1:], strict=True):
        said = done(
            post(
                croupier,
                "deal/plays",
                {"deal": deal.pk, "player": f"patron:{player}", "code": code},
            )
        )
    winner = deals.deal_of(deal).tricks[0].winner[7:]
    assert f"pli n° 1 à {winner}" in said
    assert re.search(rf'data-trick="1">.*?à {winner}</span>', panel(croupier), re.S)


# --- what the rules refuse ------------------------------------------------------------------------


def test_a_call_out_of_turn_and_cards_the_rules_refuse_are_shown_with_the_rule_and_recorded(
    cast, seance, croupier
):
    doc = sheet(simulated(7))
    players = doc["players"]
    deal, _page = open_and_deal(croupier, doc)

    before = recorded()
    answer = post(croupier, "deal/calls", {"deal": deal.pk, "player": players[1], "call": "solo"})
    said = text(answer)
    assert answer.status_code == 422
    assert "Refusé et enregistré" in said
    assert "l'annonce de patron:ben : c'est à patron:ana" in said
    assert "out_of_turn" in said
    assert recorded() == before
    assert AuditEvent.objects.filter(action="deal.out_of_turn").count() == 1

    for i, word in enumerate(doc["auction"]):
        post(croupier, "deal/calls", {"deal": deal.pk, "player": players[i % 4], "call": word})
    post(croupier, "deal/contract", {"deal": deal.pk, **contract_fields(doc["contract"])})
    lead = doc["tricks"][0][0]
    done(post(croupier, "deal/plays", {"deal": deal.pk, "player": players[0], "code": lead}))
    state = deals.deal_of(deal)
    hand = state.hands[1]
    off = next(c for c in hand if c.suit.value != lead[1])
    assert any(c.suit.value == lead[1] for c in hand)  # ben holds the suit led: he must follow
    page = panel(croupier)
    button = re.search(rf'<button type="submit" name="code" value="{off}"[^>]*>', page)
    assert button is not None
    assert "disabled" in button.group(0)

    before = recorded()
    answer = post(croupier, "deal/plays", {"deal": deal.pk, "player": players[1], "code": str(off)})
    said = text(answer)
    assert answer.status_code == 422
    assert "Refusé et enregistré" in said
    assert f"patron:ben doit fournir à {lead[1]} (il en a) : {off} n'est pas permise" in said
    assert "must_follow_suit" in said
    foreign = next(c for c in state.hands[0])  # a card of ana's hand, not ben's
    answer = post(
        croupier, "deal/plays", {"deal": deal.pk, "player": players[1], "code": str(foreign)}
    )
    said = text(answer)
    assert answer.status_code == 422
    assert f"patron:ben n'a pas {foreign} en main" in said
    assert "not_in_hand" in said
    assert recorded() == before
    refused = AuditEvent.objects.filter(action="deal.card_refused").order_by("seq")
    assert [(json.loads(e.payload)["code"], json.loads(e.payload)["card"]) for e in refused] == [
        ("must_follow_suit", str(off)),
        ("not_in_hand", str(foreign)),
    ]


def test_a_contract_the_rules_refuse_is_shown_with_the_rule_and_nothing_recorded(
    cast, seance, croupier
):
    doc = sheet(simulated(7))
    deal, _page = open_and_deal(croupier, doc)
    for i, word in enumerate(doc["auction"]):
        post(
            croupier, "deal/calls", {"deal": deal.pk, "player": doc["players"][i % 4], "call": word}
        )
    hand = deals.deal_of(deal).hands[1]  # ben declares: he holds no king, so calls one
    assert engine.called_rank(hand).value == "K"
    queen = next(f"Q{s}" for s in "SHDC" if engine.card(f"Q{s}") not in hand)
    before = recorded()
    answer = post(croupier, "deal/contract", {"deal": deal.pk, "trumps": "H", "called": queen})
    said = text(answer)
    assert answer.status_code == 422
    assert (
        f"le déclarant doit appeler un K (le premier rang dont il n'a pas les quatre), pas {queen}"
        in said
    )
    assert "bad_contract" in said
    assert recorded() == before


def test_a_hand_of_the_wrong_count_is_refused_and_the_deal_waits_for_its_cards(
    cast, seance, croupier
):
    doc = sheet(simulated(7))
    players = doc["players"]
    done(post(croupier, "deal", {"dealer": players[-1], "cut_by": players[-2]}))
    deal = Deal.objects.get()
    before = recorded()
    answer = post(
        croupier,
        "deal/cards",
        {"deal": deal.pk, f"hand:{players[0]}": "KS QS", "table_up": "2H", "table_down": ""},
    )
    assert answer.status_code == 400
    assert "bad_deal" in text(answer)
    assert recorded() == before
    assert 'id="cards-form"' in text(answer)


def test_the_cutter_is_the_player_on_the_dealers_left_whatever_the_page_sends(
    cast, seance, croupier
):
    before = recorded()
    answer = post(croupier, "deal", {"dealer": "patron:dora", "cut_by": "patron:ana"})
    said = text(answer)
    assert answer.status_code == 422
    assert "le joueur à la gauche du donneur patron:dora coupe : patron:carl" in said
    assert recorded() == before


# --- the seats ------------------------------------------------------------------------------------


def test_patrons_take_and_leave_seats_between_deals(cast, croupier):
    shift = cercle_seance(cast, cercle_table(cast), players=0)
    cercle_pack(cast, shift)
    patron_buy_in(actor=cast.caissier, patron="emil", amount=20_000)
    patron_buy_in(actor=cast.caissier, patron="ana", amount=20_000)
    said = done(post(croupier, "seats", {"seat": "3", "patron": "emil"}))
    assert "emil s'assied à la place 3" in said
    assert re.search(
        r'data-patron="patron:emil"><td>3</td><td>emil</td><td class="num balance">200,00', said
    )
    seating = CercleSeat.objects.get()
    assert (seating.seat, seating.patron.code, seating.by) == (3, "patron:emil", cast.croupier)

    before = recorded()
    for data, words in (
        ({"seat": "4", "patron": "fritz"}, "patron:fritz n'a pas de compte"),
        ({"seat": "3", "patron": "ana"}, "la place 3 est prise par patron:emil"),
        ({"seat": "4", "patron": "emil"}, "patron:emil est déjà assis à la place 3"),
        ({"seat": "9", "patron": "emil"}, "9 n'est pas une place (1 à 6)"),
        ({"seat": "trois", "patron": "emil"}, "n'est pas un numéro"),
    ):
        answer = post(croupier, "seats", data)
        assert answer.status_code >= 400
        assert words in text(answer), data
    assert recorded() == before

    said = done(post(croupier, "seats/leave", {"patron": "patron:emil"}))
    assert "emil quitte la place 3" in said
    assert CercleSeatEnd.objects.get().seating == seating


def test_nobody_leaves_or_sits_during_a_deal(cast, seance, croupier):
    doc = sheet(simulated(7))
    open_and_deal(croupier, doc)
    page = panel(croupier)
    assert "quitte la table" not in page
    before = recorded()
    answer = post(croupier, "seats/leave", {"patron": "patron:ana"})
    assert answer.status_code == 409
    assert "une donne est en cours" in text(answer)
    assert recorded() == before


# --- who sees the page ----------------------------------------------------------------------------


@pytest.fixture
def strangers(cast, posted):
    """A croupier on duty nowhere, the chef de partie of another table (on duty there), the
    director and the superuser: none of them is on duty at the cercle table."""
    other_chef = hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE)
    other_croupier = hire(cast.directeur, "croupier2", Role.CROUPIER)
    idle_croupier = hire(cast.directeur, "croupier3", Role.CROUPIER)
    other = table_create(
        actor=cast.directeur,
        number=2,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000,
    )
    count = count_record(actor=other_croupier, table_id=other.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=cast.directeur, count_id=count.pk)
    shift_open(
        actor=other_chef,
        table=other,
        count_id=count.pk,
        tailleur=cast.tailleur,
        croupiers=[other_croupier],
    )
    return {
        "croupier off duty": idle_croupier,
        "chef de partie of another table": other_chef,
        "director": cast.directeur,
        "superuser": cast.root,
    }


def test_nobody_off_duty_at_the_cercle_sees_it_or_acts_there(cast, seance, croupier, strangers):
    doc = sheet(simulated(7))
    deal, _page = open_and_deal(croupier, doc)
    patron_buy_in(actor=cast.caissier, patron="emil", amount=1000)
    before = recorded()
    events = AuditEvent.objects.count()
    for who, person in strangers.items():
        client = admin_client(person)
        page = client.get(PAGE)
        assert page.status_code == 403, who
        assert "n'y est pas de service" in text(page), who
        assert 'id="panel"' not in text(page)
        assert client.get(f"{PAGE}panel/", headers=HTMX).status_code == 403, who
        for act, data in (
            ("seats", {"seat": "5", "patron": "emil"}),
            ("seats/leave", {"patron": "patron:ana"}),
            ("deal", {"dealer": "patron:dora", "cut_by": "patron:carl"}),
            ("deal/cards", {"deal": deal.pk, "table_up": "2H"}),
            ("deal/calls", {"deal": deal.pk, "player": "patron:ana", "call": "pass"}),
            ("deal/contract", {"deal": deal.pk, "trumps": "H", "called": "KS"}),
            ("deal/plays", {"deal": deal.pk, "player": "patron:ana", "code": "KS"}),
        ):
            answer = post(client, act, data)
            assert answer.status_code == 403, (who, act)
            assert "n'y est pas de service" in text(answer), (who, act)
    assert recorded() == before
    assert AuditEvent.objects.count() == events  # not even the evidence of a refusal


def test_every_game_of_the_floor_has_its_table_page():
    assert set(PAGES) == {str(g) for g in Game}
