"""Alliance's admin pages: a deal as it was dealt (the hands and the table cards as cards), called,
declared and played (each trick with who played each card and who took it) and what it settled;
a séance's seats and deals; read-only, and read only by those whose post reaches the deal."""

from __future__ import annotations

import html as entities
import re
from typing import Any

import pytest

from audit.models import AuditEvent
from casino.floor.models import Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import Deal, DealCall, DealPlay
from casino.floor.selectors import SUIT_GLYPHS
from casino.floor.services import shift_open
from casino.people.roles import Role
from tests.actors import admin_client, hire
from tests.conftest import signed_count
from tests.floor.alliance_world import cercle_ready, cercle_table, play_act_by_act, simulated

pytestmark = pytest.mark.django_db

ALLIANCE, LEVER_TAKE, RESISTANCE = 7, 17, 3  # the simulator's deals of each kind


@pytest.fixture
def seance(cast, posted):
    return cercle_ready(cast)


@pytest.fixture
def played(cast, seance) -> dict[int, Deal]:
    return {seed: play_act_by_act(cast, seance, simulated(seed)) for seed in (ALLIANCE, LEVER_TAKE)}


def shown(code: str) -> str:
    """A card as the page writes it: ``10♥``, ``K♠``."""
    return ("10" if code[0] == "T" else code[0]) + SUIT_GLYPHS[code[1]][0]


def euros(minor: int) -> str:
    """Minor units as the French page writes them (under a thousand)."""
    return f"{'-' if minor < 0 else ''}{abs(minor) // 100},{abs(minor) % 100:02d}"


def plain(fragment: str) -> str:
    text = re.sub(r"<[^>]+>", " ", fragment)
    return re.sub(r"\s+", " ", entities.unescape(text)).strip()


def cells(html: str, header: str) -> list[str]:
    """The rows of the table that follows ``header`` on the page, as text, the head's first."""
    table = html.split(f"<label>{header}", 1)[1].split("</table>", 1)[0]
    return [plain(row) for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)]


def field(html: str, header: str) -> str:
    """The text of a read-only field of the page."""
    after = html.split(f"<label>{header}", 1)[1].split("</label>", 1)[1]
    return plain(after.split("</div>\n", 1)[0])


def page(user: Any, deal: Deal) -> str:
    answer = admin_client(user).get(
        f"/admin/floor/deal/{deal.pk}/change/", HTTP_ACCEPT_LANGUAGE="fr"
    )
    assert answer.status_code == 200
    return answer.content.decode()


@pytest.mark.parametrize("who", ["chef", "auditeur", "inspecteur", "commissaire"])
def test_a_deal_page_shows_the_hands_and_table_cards_as_cards(cast, played, who):
    deal = played[ALLIANCE]
    outcome = deal.settlement.outcome
    html = page(getattr(cast, who), deal)
    players = cells(html, "Joueurs dans l&#x27;ordre de la donne")[1:]
    assert [row.split(" ")[:3] for row in players] == [
        ["1", "1", "patron:ana"],
        ["2", "2", "patron:ben"],
        ["3", "3", "patron:carl"],
        ["4", "4", "patron:dora"],
    ]
    assert "Vorhand" in players[0]
    assert "donneur" in players[3]
    assert "a coupé" in players[2]
    hands = cells(html, "Mains telles que données")[1:]
    assert hands == [
        f"{seat} {player} " + " ".join(shown(c) for c in outcome["hands"][player])
        for seat, player in enumerate(deal.players, start=1)
    ]
    table = field(html, "Cartes de table")
    up, down = outcome["table"]["up"], outcome["table"]["down"]
    assert f"retournée : {shown(up)}" in table
    assert " ".join(shown(c) for c in down) in table
    # Nothing raw: no JSON of the records on the page.
    assert '{"' not in html
    assert "&quot;" not in html
    assert "[&#x27;" not in html


def test_a_deal_page_shows_each_trick_in_order_of_play_with_its_winner(cast, played):
    deal = played[ALLIANCE]
    outcome = deal.settlement.outcome
    html = page(cast.inspecteur, deal)
    tricks = cells(html, "Plis")
    assert tricks[0] == "pli entame 2e carte 3e carte 4e carte gagné par"
    by_whom = dict(DealPlay.objects.filter(deal=deal).values_list("card", "player"))
    assert tricks[1:] == [
        f"{t['number']} "
        + " ".join(f"{shown(c)} {by_whom[c]}" for c in t["cards"])
        + f" {t['winner']}"
        for t in outcome["tricks"]
    ]
    assert len(tricks) == 1 + 12
    taken = field(html, "Plis pris")
    assert taken == " · ".join(f"{p} {n}" for p, n in outcome["taken"].items())


def test_a_deal_page_says_the_auction_and_the_contract_in_words(cast, played):
    deal = played[ALLIANCE]
    outcome = deal.settlement.outcome
    html = page(cast.inspecteur, deal)
    calls = cells(html, "Enchères")[1:]
    recorded = DealCall.objects.filter(deal=deal).order_by("index")
    assert [row.split(" ")[:3] for row in calls] == [
        [str(c.index + 1), c.player, {"pass": "passe"}.get(c.call, c.call)] for c in recorded
    ]
    assert all(row.endswith(" croupier") for row in calls)
    contract = field(html, "Contrat")
    assert f"{outcome['declarer']} joue alliance" in contract
    assert "atout : ♦ carreau" in contract
    assert "l'atout est la couleur : tout se paie double" in contract
    assert f"carte appelée : {shown(outcome['called'])}" in contract
    assert f"allié : {outcome['ally']}" in contract
    fahne = field(html, "Fahne")
    assert fahne == f"{shown(outcome['fahne'])} dans les plis de {outcome['fahne_with']}"


def test_a_lever_says_the_card_turned_the_take_and_the_discards(cast, played):
    deal = played[LEVER_TAKE]
    contract = deal.contract.contract
    turned = deal.settlement.outcome["table"]["down"][contract["turn"] - 1]
    words = field(page(cast.inspecteur, deal), "Contrat")
    assert f"carte couverte retournée : la n° {contract['turn']}, {shown(turned)}" in words
    discards = " ".join(shown(c) for c in contract["discard"])
    assert f"prend les cartes de table et écarte : {discards}" in words
    assert "la couleur" not in words.split("atout")[1]  # hearts over clubs: not doubled


def test_a_solo_says_who_resists(cast, seance):
    deal = play_act_by_act(cast, seance, simulated(RESISTANCE))
    words = field(page(cast.inspecteur, deal), "Contrat")
    resister = deal.settlement.outcome["resister"]
    assert f"résistance de {resister}, les autres sont neutres" in words
    assert "carte appelée" not in words


def test_a_deal_page_shows_the_payments_the_fee_and_each_players_result(cast, played):
    deal = played[ALLIANCE]
    outcome = deal.settlement.outcome
    html = page(cast.inspecteur, deal)
    words = {"game": "jeu", "honours": "honneurs", "bonus": "prime"}
    payments = cells(html, "Paiements")[1:]
    assert payments == [
        f"{p['from']} → {p['to']} {p['marks']} {words[p['for']]} {p['marks']},00"
        for p in outcome["payments"]
    ]
    # The money the page says is the ledger's: each payment is a movement of the deal.
    paid = Movement.objects.filter(reference=f"deal:{deal.pk}", kind=Movement.Kind.MARKS_PAID)
    assert sorted(m.amount for m in paid) == sorted(p["marks"] * 100 for p in outcome["payments"])
    results = cells(html, "Résultat de chaque joueur")[1:]
    assert len(results) == 4
    for row, player in zip(results, deal.players, strict=True):
        marks, money = outcome["marks"][player], outcome["money"][player]
        assert row.startswith(f"{player} {outcome['taken'][player]} ")
        assert row.endswith(f" {marks} {marks},00 0,30 {euros(money)}")
    assert "droit du cercle : 0,30 par joueur, 1,20 à la cagnotte" in html
    movements = field(html, "Mouvements")
    assert movements.count("cagnotte de la donne · 0,30") == 4
    link = re.search(r'href="(/admin/floor/movement/\?reference=deal%3A\d+)"', html)
    assert link is not None
    listed = admin_client(cast.inspecteur).get(link.group(1)).content.decode()
    assert listed.count('class="field-reference"') == paid.count() + 4
    assert listed.count(f">deal:{deal.pk}<") == paid.count() + 4


def test_a_deal_page_links_to_its_seance_and_the_seance_shows_its_seats_and_deals(
    cast, seance, played
):
    deal = played[ALLIANCE]
    html = page(cast.chef, deal)
    assert f'href="/admin/floor/shift/{seance.pk}/change/"' in html
    client = admin_client(cast.chef)
    shift = client.get(f"/admin/floor/shift/{seance.pk}/change/", HTTP_ACCEPT_LANGUAGE="fr")
    text = shift.content.decode()
    seats = text.split("Places au cercle", 1)[1].split("Donnes", 1)[0]
    for seat, name in enumerate(("ana", "ben", "carl", "dora"), start=1):
        assert f"place {seat} : {name}" in seats
    assert plain(seats).count("toujours assis") == 4
    assert plain(seats).count(" croupier ") == 4  # who seated each
    for d in played.values():
        assert f"/admin/floor/deal/{d.pk}/change/" in text
    assert "2 donnes" in text  # a cercle séance counts its deals


def in_progress(cast: Any, seance: Any) -> Deal:
    """A deal dealt, called and declared, five cards played: a trick taken, one being played."""
    return play_act_by_act(cast, seance, simulated(ALLIANCE), cards=5)


def test_a_deal_in_progress_is_read_as_it_stands(cast, seance):
    deal = in_progress(cast, seance)
    html = page(cast.croupier, deal)  # on duty at the table
    tricks = cells(html, "Plis")[1:]
    assert tricks[0].endswith(" " + deals.deal_of(deal).tricks[0].winner)
    assert tricks[1].endswith(" en cours")
    assert len(tricks[1].split(" patron:")) == 2  # one card played in the second trick
    assert "allié : pas encore connu" in field(html, "Contrat")
    assert field(html, "Paiements") == "à la fin de la donne"


@pytest.fixture
def other_croupier(cast, posted):
    """A croupier on duty at another cercle table."""
    chef2 = hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE)
    croupier2 = hire(cast.directeur, "croupier2", Role.CROUPIER)
    table = cercle_table(cast, number=6)
    count = signed_count(cast, table, "opening", {"100": 0})
    shift_open(actor=chef2, table=table, count_id=count.pk, tailleur=None, croupiers=[croupier2])
    return croupier2


def recorded() -> tuple[int, ...]:
    return tuple(
        model.objects.count() for model in (Deal, DealCall, DealPlay, Movement, AuditEvent)
    )


@pytest.mark.parametrize("who", ["croupier of another table", "cashier", "outsider"])
def test_a_deal_is_refused_to_whom_it_is_not_for_and_nothing_is_recorded(
    cast, seance, other_croupier, who
):
    deal = in_progress(cast, seance)  # its hands are the players' secret
    person = {
        "croupier of another table": other_croupier,
        "cashier": cast.caissier,
        "outsider": cast.outsider,
    }[who]
    client = admin_client(person)
    before = recorded()
    answer = client.get(f"/admin/floor/deal/{deal.pk}/change/")
    assert answer.status_code == 403
    assert "patron:" not in answer.content.decode()  # nothing of the deal is shown
    assert client.post(f"/admin/floor/deal/{deal.pk}/change/", {}).status_code == 403
    listed = client.get("/admin/floor/deal/")
    assert listed.status_code in (200, 403)
    assert f"/admin/floor/deal/{deal.pk}/change/" not in listed.content.decode()
    shift = client.get(f"/admin/floor/shift/{seance.pk}/change/").content.decode()
    assert f"/admin/floor/deal/{deal.pk}/change/" not in shift
    assert recorded() == before


def test_nothing_is_added_changed_or_deleted_on_a_deal_page(cast, played):
    deal = played[ALLIANCE]
    client = admin_client(cast.inspecteur)
    before = recorded()
    assert client.get("/admin/floor/deal/add/").status_code == 403
    assert client.post(f"/admin/floor/deal/{deal.pk}/change/", {}).status_code == 403
    assert client.post(f"/admin/floor/deal/{deal.pk}/delete/", {"post": "yes"}).status_code == 403
    assert recorded() == before
