"""The Pharao table page through Django's test client (issue 13, item 6): the same URL as any
table, its game's page; each act one request through the service the API calls; each refusal
shown with its reason, and recorded when it is evidence (a late stake, a false paroli); the
banker's approval given by the chef de partie on duty in his own session."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from audit.models import Anomaly, AuditEvent
from casino.floor.models import Movement, PostedReglement
from casino.floor.play.pharao.models import PharaoApproval, PharaoStake, PharaoStakeAct, Taille
from casino.floor.play.pharao.tailles import pharao_stake_place, taille_lay_card, taille_open
from casino.floor.services import table_create
from casino.pit.table import PAGES
from shoes.models import CardLaid
from tests.actors import admin_client
from tests.conftest import open_seance
from tests.floor.pharao_world import NUMBER, pack_order, pharao_table, single_pack_in_play

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
BOTTOM = "KS"


def post(client: Client, act: str, data: dict | None = None):
    return client.post(f"/admin/pit/table/{NUMBER}/{act}/", data or {}, headers=HTMX)


def text(response) -> str:
    return html.unescape(response.content.decode())


def recorded() -> tuple[int, ...]:
    """What a refused act must leave as it was (but its evidence)."""
    return (
        Taille.objects.count(),
        PharaoStake.objects.count(),
        PharaoStakeAct.objects.count(),
        PharaoApproval.objects.count(),
        CardLaid.objects.count(),
        Movement.objects.count(),
    )


@pytest.fixture
def seance(cast, posted):
    return open_seance(cast, pharao_table(cast))


@pytest.fixture
def pack(cast, seance):
    return single_pack_in_play(cast, seance)


@pytest.fixture
def taille(cast, seance, pack):
    return taille_open(actor=cast.tailleur, shift_id=seance.pk, bottom_card=BOTTOM)


@pytest.fixture
def tailleur(cast):
    return admin_client(cast.tailleur)


@pytest.fixture
def croupier(cast):
    return admin_client(cast.croupier)


@pytest.fixture
def chef(cast):
    return admin_client(cast.chef)


def place(cast, taille, ref, rank, amount, holder="1"):
    return pharao_stake_place(
        actor=cast.croupier, taille_id=taille.pk, ref=ref, holder=holder, rank=rank, amount=amount
    )


def lay(cast, taille, *codes):
    for code in codes:
        taille_lay_card(actor=cast.tailleur, taille_id=taille.pk, code=code)


def test_a_pharao_table_shows_its_own_page_to_the_staff_on_duty(cast, pack, tailleur):
    page = text(tailleur.get(f"/admin/pit/table/{NUMBER}/"))
    assert "Ouvrir la taille" in page
    assert page.count('class="box rank') == 13  # the layout of the 13 ranks
    assert page.count('class="card ') >= 52  # the card picker, shared with the other page
    assert "Messieurs, faites vos jeux" not in page  # nothing of Trente-et-Quarante's coups
    assert pack.seal_number in page


def test_the_tailleur_opens_a_taille_showing_its_bottom_card(cast, pack, tailleur):
    answer = post(tailleur, "taille", {"bottom_card": "ks"})
    assert answer.status_code == 200, answer.content.decode()
    said = text(answer)
    assert "Taille n° 1 : la carte du dessous, K♠, est montrée" in said
    assert 'id="bottom-card"' in said
    assert 'data-code="KS"' in said
    assert "Tirage 1 : carte de gauche, celle de la banque" in said
    assert Taille.objects.get().opened_by == cast.tailleur


def test_a_croupier_may_not_open_a_taille(cast, pack, croupier):
    before = recorded()
    answer = post(croupier, "taille", {"bottom_card": "KS"})
    assert answer.status_code == 403
    assert "Refusé" in text(answer)
    assert recorded() == before


def test_stakes_draws_and_a_paroli_through_the_page(cast, taille, tailleur, croupier):
    answer = post(
        croupier,
        "ranks/stakes",
        {"taille": taille.pk, "ref": "a", "holder": "1", "rank": "7", "amount": "10"},
    )
    assert answer.status_code == 200, answer.content.decode()
    assert "Mise posée : place 1, sur le 7, 10,00" in text(answer)
    for code, said in (("3C", "à gauche, pour la banque"), ("7H", "à droite, pour les joueurs")):
        answer = post(tailleur, "draws", {"taille": taille.pk, "code": code})
        assert answer.status_code == 200, answer.content.decode()
        assert said in text(answer)
    stake = PharaoStake.objects.get(ref="a")
    page = text(croupier.get(f"/admin/pit/table/{NUMBER}/panel/"))
    assert "vient de gagner" in page
    assert f"/ranks/stakes/{stake.pk}/paroli/" in page
    assert 'data-draw="1"' in page
    assert 'data-code="3C"' in page
    assert 'data-code="7H"' in page

    answer = post(croupier, f"ranks/stakes/{stake.pk}/paroli")
    assert answer.status_code == 200, answer.content.decode()
    assert "Mise place 1, 7 marquée : paroli" in text(answer)
    act = PharaoStakeAct.objects.get(stake=stake)
    assert (act.act, act.mark, act.put, act.by) == ("paroli", "paroli", 1000, cast.croupier)
    assert AuditEvent.objects.filter(action="pharao.stake_paroli").count() == 1
    assert 'data-mark="paroli"' in text(croupier.get(f"/admin/pit/table/{NUMBER}/panel/"))


def test_a_false_paroli_is_shown_refused_and_recorded(cast, taille, croupier):
    place(cast, taille, "b", "5", 1000)
    lay(cast, taille, "3C", "7H")  # the 5 neither won nor lost
    stake = PharaoStake.objects.get(ref="b")
    before = recorded()
    answer = post(croupier, f"ranks/stakes/{stake.pk}/paroli")
    said = text(answer)
    assert answer.status_code == 422
    assert "Refusé et enregistré" in said
    assert "false_paroli" in said
    assert recorded() == before  # no act, no money: only the evidence
    anomaly = Anomaly.objects.get(detector="false_paroli")
    assert anomaly.evidence["stake"] == stake.pk
    assert anomaly.involved == [cast.croupier.pk]


def test_a_late_stake_is_shown_refused_and_recorded(cast, taille, tailleur, croupier):
    post(tailleur, "draws", {"taille": taille.pk, "code": "3C"})
    before = recorded()
    answer = post(
        croupier,
        "ranks/stakes",
        {"taille": taille.pk, "ref": "late", "holder": "2", "rank": "9", "amount": "5"},
    )
    said = text(answer)
    assert "Refusé et enregistré" in said
    assert "late_stake" in said
    assert "le tirage 1 est commencé" in said
    assert recorded() == before
    assert Anomaly.objects.get(detector="late_stake").evidence["rank"] == "9"


def test_a_reduction_needs_the_chefs_approval_in_his_own_session(cast, taille, croupier, chef):
    place(cast, taille, "c", "Q", 3000)
    lay(cast, taille, "3C", "7H")
    stake = PharaoStake.objects.get(ref="c")
    before = recorded()
    answer = post(croupier, f"ranks/stakes/{stake.pk}/reduce", {"amount": "10"})
    assert "not_approved" in text(answer)
    assert recorded() == before

    # The croupier cannot approve for the banker: the approval form is not his, nor the act.
    assert "approuver (banquier)" not in text(croupier.get(f"/admin/pit/table/{NUMBER}/"))
    answer = post(croupier, f"ranks/stakes/{stake.pk}/approve", {"act": "reduce", "amount": "10"})
    assert answer.status_code == 403
    assert "Refusé" in text(answer)
    assert recorded() == before

    assert "approuver (banquier)" in text(chef.get(f"/admin/pit/table/{NUMBER}/"))
    answer = post(chef, f"ranks/stakes/{stake.pk}/approve", {"act": "reduce", "amount": "10"})
    assert answer.status_code == 200, answer.content.decode()
    assert "Approuvé par le banquier : réduction de 10,00" in text(answer)
    assert "approuvé par" in text(croupier.get(f"/admin/pit/table/{NUMBER}/panel/"))

    answer = post(croupier, f"ranks/stakes/{stake.pk}/reduce", {"amount": "10"})
    assert answer.status_code == 200, answer.content.decode()
    assert "Mise place 1, Q réduite de 10,00" in text(answer)
    act = PharaoStakeAct.objects.get(stake=stake)
    assert (act.act, act.amount, act.returned, act.approval.approved_by) == (
        "reduce",
        1000,
        1000,
        cast.chef,
    )


def test_an_amount_the_page_cannot_read_is_refused_with_its_reason(cast, taille, croupier):
    before = recorded()
    answer = post(
        croupier,
        "ranks/stakes",
        {"taille": taille.pk, "ref": "d", "holder": "1", "rank": "7", "amount": "dix"},
    )
    assert answer.status_code == 400
    assert "n'est pas un montant" in text(answer)
    assert recorded() == before


def test_a_trente_et_quarante_act_at_a_pharao_table_is_refused(cast, taille, tailleur):
    before = recorded()
    answer = post(tailleur, "coup")
    assert "wrong_game" in text(answer)
    assert recorded() == before


def test_winnings_collected_and_a_stake_raised_through_the_page(cast, taille, croupier):
    place(cast, taille, "w", "7", 1000)
    place(cast, taille, "r", "9", 500)
    lay(cast, taille, "3C", "7H")
    won, other = PharaoStake.objects.get(ref="w"), PharaoStake.objects.get(ref="r")

    answer = post(croupier, f"ranks/stakes/{won.pk}/collect")
    assert answer.status_code == 200, answer.content.decode()
    assert "Gain de la mise place 1, 7 retiré : 10,00 rendus" in text(answer)
    answer = post(croupier, f"ranks/stakes/{other.pk}/raise", {"amount": "5"})
    assert answer.status_code == 200, answer.content.decode()
    assert "Mise place 1, 9 augmentée de 5,00" in text(answer)
    assert [
        (a.stake.ref, a.act, a.amount, a.put, a.returned) for a in PharaoStakeAct.objects.all()
    ] == [
        ("w", "collect", None, 0, 1000),
        ("r", "raise", 500, 500, 0),
    ]
    page = text(croupier.get(f"/admin/pit/table/{NUMBER}/panel/"))
    assert 'data-ref="w"' not in page  # collected: off the layout
    assert "10,00" in page  # the stake on the 9, raised to 10,00


def test_a_withdrawal_is_made_once_the_chef_approved_it(cast, taille, croupier, chef):
    place(cast, taille, "q", "Q", 3000)
    lay(cast, taille, "3C", "7H")
    stake = PharaoStake.objects.get(ref="q")
    answer = post(chef, f"ranks/stakes/{stake.pk}/approve", {"act": "withdraw"})
    assert answer.status_code == 200, answer.content.decode()
    assert "Approuvé par le banquier : retrait de la mise place 1, Q" in text(answer)
    answer = post(croupier, f"ranks/stakes/{stake.pk}/withdraw")
    assert answer.status_code == 200, answer.content.decode()
    assert "Mise place 1, Q retirée : 30,00 rendus" in text(answer)
    assert PharaoStakeAct.objects.get().approval.approved_by == cast.chef


def test_nobody_off_duty_sees_the_pharao_table_or_acts_there(cast, taille):
    place(cast, taille, "x", "7", 1000)
    stake = PharaoStake.objects.get()
    before = recorded()
    outsider = admin_client(cast.outsider)
    assert outsider.get(f"/admin/pit/table/{NUMBER}/").status_code == 403
    for act, data in (
        ("taille", {"bottom_card": "AS"}),
        ("ranks/stakes", {"taille": taille.pk, "holder": "1", "rank": "7", "amount": "5"}),
        (f"ranks/stakes/{stake.pk}/withdraw", {}),
        (f"ranks/stakes/{stake.pk}/approve", {"act": "withdraw"}),
        ("draws", {"taille": taille.pk, "code": "3C"}),
    ):
        answer = post(outsider, act, data)
        assert answer.status_code == 403, act
        assert "Refusé" in text(answer)
    assert recorded() == before


def test_the_last_draw_ends_the_taille_on_the_page(cast, taille, tailleur):
    order = pack_order([], BOTTOM)
    lay(cast, taille, *order[:51])
    answer = post(tailleur, "draws", {"taille": taille.pk, "code": order[51]})
    assert answer.status_code == 200, answer.content.decode()
    said = text(answer)
    assert "Tirage 26 :" in said
    assert "la taille est finie, les mises restantes sont rendues" in said
    assert "Taille n° 1 finie : les mises restantes ont été rendues." in said
    assert said.count('<li class="draw') == 26
    assert 'id="taille-form"' not in said  # the pack has passed: the next taille needs a cut
    assert Taille.objects.get().phase == "ended"


def test_a_table_whose_game_has_no_page_yet_says_so(cast, posted, tailleur, monkeypatch):
    # Every game of the floor has its page now: a fourth one would come without, at first.
    monkeypatch.delitem(PAGES, "alliance")
    table_create(
        actor=cast.directeur,
        number=4,
        game="alliance",
        reglement_id=PostedReglement.objects.get(name="baden-1854").pk,
        min_stake=100,
        max_stake=50_000,
    )
    answer = tailleur.get("/admin/pit/table/4/")
    assert answer.status_code == 422
    assert "la table 4 joue Alliance, qui n'a pas encore de page de table" in text(answer)


def test_a_plie_is_shown_on_its_draw_and_on_the_stake_it_halved(cast, taille, tailleur):
    place(cast, taille, "p", "3", 2000)
    lay(cast, taille, "3C")
    answer = post(tailleur, "draws", {"taille": taille.pk, "code": "3H"})
    said = text(answer)
    assert "plié : la banque prend sa part des mises sur le 3" in said
    assert '<li class="draw plie" data-draw="1">' in said
    stake = said[said.index('data-ref="p"') :].split("</li>")[0]
    assert "pliée" in stake
    assert "<strong>10,00</strong>" in stake  # half of 20,00 stands on (baden-1854's share)
