"""Pharao's admin pages: a taille as its 26 draws in cards, the stakes by rank with their marks and
history, the banker's approvals and the refusals recorded at the table; read-only."""

from __future__ import annotations

import re

import pytest

from casino.floor.play.pharao.models import PharaoApproval, PharaoStake
from tests.actors import admin_client
from tests.conftest import open_seance
from tests.floor.pharao_world import pharao_table, play_a_taille

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(cast, posted):
    return play_a_taille(cast, open_seance(cast, pharao_table(cast)))


def cells(html: str, header: str) -> list[str]:
    """The rows of the table that follows ``header`` on the page, as text."""
    table = html.split(header, 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", row)).strip() for row in rows]


@pytest.mark.parametrize("language", ["fr", "en"])
def test_a_taille_page_shows_its_26_draws_as_cards_with_the_plie_and_the_bottom_card(
    cast, played, language
):
    client = admin_client(cast.inspecteur)
    page = client.get(f"/admin/floor/taille/{played.pk}/change/", HTTP_ACCEPT_LANGUAGE=language)
    assert page.status_code == 200
    html = page.content.decode()
    header = "Les 26 tirages" if language == "fr" else "The 26 draws"
    rows = cells(html, header)[1:]  # the head's row first
    assert len(rows) == 26
    plie = "plié"  # the room's word in both languages
    assert rows[0].startswith("1 3♣ 7♥ ")
    rank = "rang" if language == "fr" else "rank"
    assert re.match(rf"2 2♦ 2♠ {plie} p \({rank} 2\)", rows[1]), rows[1]
    assert [r for r in rows if f" {plie} " in f" {r} "] == [rows[1]]
    assert "K♠" in rows[25]
    assert "carte du dessous" in rows[25] or "bottom card" in rows[25]
    # Nothing raw: no JSON of the records on the page.
    assert '{"' not in html
    assert "&quot;" not in html


def test_a_taille_page_shows_stakes_by_rank_with_marks_history_approvals_and_refusals(cast, played):
    client = admin_client(cast.inspecteur)
    html = client.get(
        f"/admin/floor/taille/{played.pk}/change/", HTTP_ACCEPT_LANGUAGE="fr"
    ).content.decode()
    stakes = cells(html, "Mises par rang")[1:]
    assert [row.split(" ")[:2] for row in stakes] == [
        ["2", "p"],
        ["5", "b"],
        ["7", "a"],
        ["9", "w"],
    ]
    seven = stakes[2]
    # Placed, won, its paroli, and the loss of all that rode on it: in the order of the table.
    assert re.search(
        r"posée pour le tirage 1 .* tirage 1 : gagnée · payé 10,00 · marque simple"
        r".* Paroli · avant le tirage 2, .* mis sur la carte 10,00 · marque paroli",
        seven,
    ), seven
    assert "Mise réduite 2,00 · avant le tirage 2" in stakes[1]
    assert "approuvé par chef" in stakes[1]
    assert "tirage 2 : pliée · à la banque 4,00" in stakes[0]
    approvals = html.split("Approbations du banquier", 1)[1].split("Refus enregistrés", 1)[0]
    assert approvals.count("approuvée par chef avant le tirage 2") == 3
    assert approvals.count("posée par croupier") == 3
    assert approvals.count("faite par croupier") == 2
    assert approvals.count("non utilisée") == 1
    refusals = html.split("Refus enregistrés", 1)[1].split("Mouvements", 1)[0]
    assert "faux paroli" in refusals
    assert "paroli sur la mise b (rang 5) après le tirage 1" in (refusals)
    assert "mise tardive" in refusals
    assert "une mise posée pendant le tirage 3" in refusals


def test_a_stake_and_an_approval_have_pages_and_nothing_is_changed_there(cast, played):
    client = admin_client(cast.inspecteur)
    stake = PharaoStake.objects.get(taille=played, ref="a")
    page = client.get(f"/admin/floor/pharaostake/{stake.pk}/change/").content.decode()
    assert "posée pour le tirage 1 par croupier" in page
    assert "Paroli · avant le tirage 2" in page
    # Its movements: the three wins paid from the bank to the seat (draws 1, 6 and 17).
    assert page.count("→ T3:seat:1") == 3
    assert page.count("T3:seat:1 →") == 2  # the stake placed, the winnings ridden
    approval = PharaoApproval.objects.filter(stake__taille=played).first()
    assert client.get(f"/admin/floor/pharaoapproval/{approval.pk}/change/").status_code == 200
    assert client.get("/admin/floor/pharaoapproval/").status_code == 200
    assert client.get("/admin/floor/taille/").status_code == 200
    shift = client.get(f"/admin/floor/shift/{played.shift_id}/change/").content.decode()
    assert f"/admin/floor/taille/{played.pk}/change/" in shift
    assert "26 tirages · mises 28,00" in shift  # a Pharao séance counts its draws
    assert client.post(f"/admin/floor/taille/{played.pk}/delete/", {"post": "yes"}).status_code == (
        403
    )
    assert client.post(f"/admin/floor/pharaostake/{stake.pk}/change/", {}).status_code == 403
