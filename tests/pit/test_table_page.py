"""The table page through Django's test client: each act one request through the service the API
calls, each refusal shown with its reason (and recorded when it is evidence), the settlement
shown before it is confirmed and recorded as shown, and the page kept from everyone not on duty
at the table, each tried as the attack it stops."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from audit.models import Anomaly, AuditEvent
from casino.floor.coups import (
    coup_close_betting,
    coup_lay_card,
    coup_open,
    coup_settle,
    stake_place,
)
from casino.floor.models import Coup, CoupResult, Movement, Settlement, Stake
from casino.floor.selectors import settlement_preview
from casino.games.trente_et_quarante import CoupDeal
from casino.people.roles import Role
from shoes.models import CardLaid, PackEvent, PackState, TalonCount
from tests.actors import admin_client, hire
from tests.conftest import FLOAT, lay_in_coups, talon

pytestmark = pytest.mark.django_db

# noir KS 7H 9D 2C 5S = 33, rouge TH QD AS 4C 3H 9S = 37: noir wins, first card black: couleur.
NOIR_WINS = "KS 7H 9D 2C 5S TH QD AS 4C 3H 9S".split()
# 31 and 31: refait.
REFAIT = "KS QS JS AS KH QH JH AH".split()
HTMX = {"HX-Request": "true"}


def post(client: Client, act: str, data: dict | None = None, *, number: int = 1, htmx=True):
    return client.post(
        f"/admin/pit/table/{number}/{act}/", data or {}, headers=HTMX if htmx else {}
    )


def recorded() -> tuple[int, ...]:
    """What a refused act must leave as it was."""
    return (
        Coup.objects.count(),
        Stake.objects.count(),
        CardLaid.objects.count(),
        Movement.objects.count(),
        CoupResult.objects.count(),
        PackEvent.objects.count(),
        Anomaly.objects.count(),
        AuditEvent.objects.count(),
    )


@pytest.fixture
def tailleur(cast):
    return admin_client(cast.tailleur)


@pytest.fixture
def croupier(cast):
    return admin_client(cast.croupier)


def open_coup(tailleur: Client) -> Coup:
    response = post(tailleur, "coup")
    assert response.status_code == 200, response.content.decode()
    return Coup.objects.exclude(phase__in=["settled", "cancelled"]).get()


def text(response) -> str:
    """The answer as a person reads it (entities unescaped)."""
    return html.unescape(response.content.decode())


# --- who sees the page ------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["tailleur", "croupier", "chef"])
def test_the_staff_on_duty_see_the_table_with_its_limits(cast, sixain_in_play, who):
    response = admin_client(getattr(cast, who)).get("/admin/pit/table/1/")
    assert response.status_code == 200
    page = text(response)
    assert "Mises de 5,00 à 6\u00a0000,00" in page  # the limits, in the casino's language
    assert "Messieurs, faites vos jeux" in page
    assert cast.tailleur.get_full_name() in page
    assert cast.croupier.get_full_name() in page
    assert sixain_in_play.seal_number in page
    assert page.count('class="card ') >= 52  # the card picker
    # The panel is in the page as HTML, not as text.
    assert '<div id="panel-body"' in response.content.decode()


@pytest.fixture
def strangers(cast, posted):
    """A croupier on duty at another table, a tailleur on duty nowhere, the cashier and a person
    with no role: none of them may see or act at table 1."""
    from casino.floor.services import count_countersign, count_record, shift_open, table_create

    other_chef = hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE)
    other_tailleur = hire(cast.directeur, "tailleur2", Role.TAILLEUR)
    other_croupier = hire(cast.directeur, "croupier2", Role.CROUPIER)
    idle_tailleur = hire(cast.directeur, "tailleur3", Role.TAILLEUR)
    table2 = table_create(
        actor=cast.directeur,
        number=2,
        game="trente-et-quarante",
        reglement_id=posted.pk,
        min_stake=500,
        max_stake=600_000,
    )
    count = count_record(actor=other_croupier, table_id=table2.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=cast.directeur, count_id=count.pk)
    shift_open(
        actor=other_chef,
        table=table2,
        count_id=count.pk,
        tailleur=other_tailleur,
        croupiers=[other_croupier],
    )
    return {
        "croupier of another table": other_croupier,
        "tailleur off duty": idle_tailleur,
        "cashier": cast.caissier,
        "outsider": cast.outsider,
    }


def test_nobody_off_duty_at_the_table_sees_it_or_acts_there(
    cast, tailleur, sixain_in_play, strangers
):
    coup = open_coup(tailleur)
    stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=2500
    )
    stake = Stake.objects.get()
    before = recorded()
    for who, person in strangers.items():
        client = admin_client(person)
        page = client.get("/admin/pit/table/1/")
        assert page.status_code == 403, who
        assert "n'y est pas de service" in text(page), who
        assert 'id="panel"' not in text(page)  # nothing of the table is shown
        acts = [
            ("coup", {}),
            ("stakes", {"coup": coup.pk, "holder": "4", "chance": "noir", "amount": "50"}),
            (f"stakes/{stake.pk}/withdraw", {}),
            ("close-betting", {"coup": coup.pk}),
            ("cards", {"coup": coup.pk, "code": "KS"}),
            ("settle", {"coup": coup.pk}),
            ("pass", {"pack": sixain_in_play.pk, "undealt": ""}),
            ("cancel", {"coup": coup.pk, "reason": "not mine"}),
        ]
        for act, data in acts:
            answer = post(client, act, data)
            assert answer.status_code == 403, (who, act)
            assert "n'y est pas de service" in text(answer), (who, act)
        assert client.get("/admin/pit/table/1/panel/", headers=HTMX).status_code == 403
    assert recorded() == before


def test_a_croupier_of_another_table_is_refused_by_the_service_too(
    cast, shift, sixain_in_play, strangers
):
    """Even through his own table's page, a coup of table 1 is not his to touch: the service
    refuses the act on the coup (not on duty at its séance) and nothing is recorded."""
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    client = admin_client(strangers["croupier of another table"])
    before = recorded()
    answer = post(
        client,
        "stakes",
        {"coup": coup.pk, "holder": "4", "chance": "noir", "amount": "50"},
        number=2,
    )
    assert answer.status_code == 403
    assert "not_on_duty" in text(answer)
    assert recorded() == before


def test_an_unknown_table_is_refused_by_name(tailleur, sixain_in_play):
    response = tailleur.get("/admin/pit/table/9/")
    assert response.status_code == 404
    assert "la table 9 n'existe pas" in text(response)


def test_the_page_is_behind_the_admin_login(sixain_in_play):
    response = Client().get("/admin/pit/table/1/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]
    before = recorded()
    assert Client().post("/admin/pit/table/1/coup/").status_code == 302
    assert recorded() == before


# --- a coup, act by act -----------------------------------------------------------------------


def test_a_coup_played_through_the_page_is_the_services_coup(
    cast, tailleur, croupier, sixain_in_play
):
    coup = open_coup(tailleur)
    assert AuditEvent.objects.filter(action="coup.opened", actor=cast.tailleur).count() == 1

    answer = post(
        croupier,
        "stakes",
        {
            "coup": coup.pk,
            "ref": "p-1",
            "holder_kind": "seat",
            "holder": "3",
            "chance": "rouge",
            "amount": "25",
        },
    )
    assert answer.status_code == 200
    assert "Mise posée : place 3, rouge, 25,00" in text(answer)
    assert 'id="stake-ref"' in text(answer)  # a fresh reference for the next stake
    answer = post(
        croupier,
        "stakes",
        {
            "coup": coup.pk,
            "ref": "p-2",
            "holder_kind": "patron",
            "holder": "1234",
            "chance": "couleur",
            "amount": "1 000,50",
        },
    )
    assert "Mise posée : patron 1234, couleur, 1\u00a0000,50" in text(answer)
    assert [
        (s.holder.code, s.chance, s.amount, s.placed_by) for s in Stake.objects.order_by("id")
    ] == [
        ("T1:seat:3", "rouge", 2500, cast.croupier),
        ("patron:1234", "couleur", 100050, cast.croupier),
    ]
    # The same form sent twice is refused the second time: one stake, not two.
    again = post(
        croupier,
        "stakes",
        {
            "coup": coup.pk,
            "ref": "p-2",
            "holder_kind": "patron",
            "holder": "1234",
            "chance": "couleur",
            "amount": "1000,50",
        },
    )
    assert again.status_code == 409
    assert Stake.objects.count() == 2

    answer = post(tailleur, "close-betting", {"coup": coup.pk})
    assert "Le jeu est fait" in text(answer)
    for i, code in enumerate(NOIR_WINS):
        answer = post(
            tailleur, "cards", {"coup": coup.pk, "code": code.lower() if i == 1 else code}
        )
        assert answer.status_code == 200, text(answer)
        if i == 0:
            assert "K♠ en noir : 10" in text(answer)
            assert "Carte suivante : première rangée (noir)" in text(answer)
        if i == 4:  # 33: the first row closes, the engine names the second
            assert "rangée fermée" in text(answer)
            assert "Carte suivante : seconde rangée (rouge)" in text(answer)
    page = text(answer)
    assert "rangées complètes" in page
    assert 'data-total="33"' in page
    assert 'data-total="37"' in page
    assert "trois" in page
    assert "sept" in page
    assert "rouge perd, couleur gagne" in page  # the announcement to speak
    # The settlement shown stake by stake before it is confirmed.
    assert page.count('class="settlement ') == 2
    assert 'data-outcome="lost"' in page
    assert 'data-outcome="won"' in page
    coup.refresh_from_db()
    preview = settlement_preview(coup)
    assert preview is not None
    assert not preview.cut_card

    answer = post(croupier, "settle", {"coup": coup.pk, "spoken": "rouge perd, couleur gagne"})
    assert answer.status_code == 200
    assert "Coup n° 1 réglé : rouge perd, couleur gagne" in text(answer)
    result = CoupResult.objects.get(coup=coup)
    deal = CoupDeal.from_codes(NOIR_WINS, coup.reglement.engine())
    assert (result.noir_total, result.rouge_total, result.result, result.couleur) == (
        deal.outcome().noir.total,
        deal.outcome().rouge.total,
        "noir",
        "couleur",
    )
    assert result.settled_by == cast.croupier
    assert result.spoken == "rouge perd, couleur gagne"
    assert_recorded_as_previewed(coup, preview)
    assert not Anomaly.objects.filter(detector="announcement_mismatch").exists()
    # The panel now offers the next coup and shows the last one.
    assert "Messieurs, faites vos jeux" in text(answer)
    assert 'id="last-coup"' in text(answer)


def assert_recorded_as_previewed(coup, preview) -> None:
    shown = [
        (int(r.stake), r.outcome.value, r.paid, r.returned, r.to_bank, r.premium, r.held, r.level)
        for r in preview.plan.results
    ]
    settled = [
        (s.stake_id, s.outcome, s.paid, s.returned, s.to_bank, s.premium, s.held, s.level)
        for s in Settlement.objects.filter(coup=coup).order_by("id")
    ]
    assert settled == shown
    result = CoupResult.objects.get(coup=coup)
    assert result.prison_after == [
        {"stake": p.stake, "chance": p.chance.value, "held": p.held, "level": p.level}
        for p in preview.plan.prison_after
    ]
    assert (result.void, result.last) == (preview.plan.void, preview.plan.last)


def test_the_prison_is_on_the_layout_and_its_settlement_is_shown_before_it_is_recorded(
    cast, tailleur, croupier, shift, sixain_in_play
):
    coup = open_coup(tailleur)
    for ref, holder, chance in (("a", "1", "rouge"), ("b", "2", "noir"), ("c", "3", "inverse")):
        stake_place(
            actor=cast.croupier, coup_id=coup.pk, ref=ref, holder=holder, chance=chance, amount=1000
        )
    coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
    for code in REFAIT:
        coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code)
    page = text(croupier.get("/admin/pit/table/1/"))
    assert page.count('data-outcome="imprisoned"') == 3
    coup.refresh_from_db()
    preview = settlement_preview(coup)
    post(croupier, "settle", {"coup": coup.pk, "spoken": "refait"})
    assert_recorded_as_previewed(coup, preview)

    # The three stakes wait in prison on their chances.
    panel = text(croupier.get("/admin/pit/table/1/panel/", headers=HTMX))
    assert panel.count('class="prisoner"') == 3
    assert "place 1 · <strong>10,00</strong> · niveau 1" in panel

    # Next coup, noir wins with couleur: the noir and... prisoners are settled first, shown so.
    second = open_coup(tailleur)
    stake_place(
        actor=cast.croupier, coup_id=second.pk, ref="d", holder="4", chance="noir", amount=500
    )
    coup_close_betting(actor=cast.tailleur, coup_id=second.pk)
    for code in NOIR_WINS:
        coup_lay_card(actor=cast.tailleur, coup_id=second.pk, code=code)
    page = text(tailleur.get("/admin/pit/table/1/"))
    assert page.count("(prisonnière)") == 3
    assert 'data-outcome="freed"' in page  # noir won: the prisoner on noir is freed (level 1)
    assert page.count('data-outcome="prison_lost"') == 2  # rouge and inverse lost
    second.refresh_from_db()
    preview = settlement_preview(second)
    answer = post(tailleur, "settle", {"coup": second.pk, "spoken": "rouge perd, couleur gagne"})
    assert answer.status_code == 200
    assert_recorded_as_previewed(second, preview)
    assert 'class="prisoner"' not in text(answer)


# --- refusals, shown with their reason --------------------------------------------------------


def test_a_stake_outside_the_limits_is_refused_with_the_limit_named(
    tailleur, croupier, sixain_in_play
):
    coup = open_coup(tailleur)
    before = recorded()
    answer = post(
        croupier, "stakes", {"coup": coup.pk, "holder": "3", "chance": "rouge", "amount": "6000,01"}
    )
    assert answer.status_code == 422
    assert "Refusé" in text(answer)
    assert "dépasse le maximum de la table 600000" in text(answer)
    answer = post(
        croupier, "stakes", {"coup": coup.pk, "holder": "3", "chance": "rouge", "amount": "vingt"}
    )
    assert answer.status_code == 400
    assert "n'est pas un montant" in text(answer)
    answer = post(
        croupier,
        "stakes",
        {"coup": coup.pk, "holder": "3", "chance": "rouge", "amount": "25", "insured": "on"},
    )
    assert answer.status_code == 422
    assert "n'a pas d'assurance" in text(answer)
    assert recorded() == before


def test_a_late_stake_is_shown_refused_and_recorded(cast, tailleur, croupier, sixain_in_play):
    coup = open_coup(tailleur)
    post(tailleur, "close-betting", {"coup": coup.pk})
    post(tailleur, "cards", {"coup": coup.pk, "code": "KS"})
    stakes = Stake.objects.count()
    answer = post(
        croupier, "stakes", {"coup": coup.pk, "holder": "3", "chance": "rouge", "amount": "25"}
    )
    assert answer.status_code == 422
    page = text(answer)
    assert "Refusé et enregistré" in page
    assert "late_stake" in page
    assert "la première carte du coup 1 est sur la table" in page
    assert Stake.objects.count() == stakes
    anomaly = Anomaly.objects.get(detector="late_stake")
    assert anomaly.involved == [cast.croupier.pk]
    assert AuditEvent.objects.filter(action="coup.late_stake_refused", actor=cast.croupier).exists()


def test_a_foreign_card_is_shown_refused_and_recorded(cast, tailleur, shift, sixain_in_play):
    # Six KS out of the sixain (its six copies), in a coup played before: 40 / 40, après.
    lay_in_coups(cast, shift, ["KS"] * 6 + ["QS", "JS"])
    coup = open_coup(tailleur)
    post(tailleur, "close-betting", {"coup": coup.pk})
    laid = CardLaid.objects.count()
    answer = post(tailleur, "cards", {"coup": coup.pk, "code": "KS"})
    assert answer.status_code == 422
    page = text(answer)
    assert "Refusé et enregistré" in page
    assert "foreign_card" in page
    assert "une carte étrangère" in page
    assert CardLaid.objects.count() == laid
    assert Anomaly.objects.filter(detector="foreign_card").count() == 1
    assert PackEvent.objects.filter(kind=PackEvent.Kind.FOREIGN_CARD).count() == 1


def test_acts_out_of_turn_are_refused_by_the_service_and_nothing_is_recorded(
    cast, tailleur, croupier, sixain_in_play
):
    coup = open_coup(tailleur)
    before = recorded()
    refusals = [
        (tailleur, "cards", {"coup": coup.pk, "code": "KS"}, 409, "illegal_coup_phase"),
        (croupier, "close-betting", {"coup": coup.pk}, 403, "role_required"),
        (croupier, "coup", {}, 403, "role_required"),
        (tailleur, "coup", {}, 409, "a un coup en cours"),
        (tailleur, "settle", {"coup": coup.pk}, 409, "illegal_coup_phase"),
        (tailleur, "cards", {"coup": "x", "code": "KS"}, 400, "n'est pas un numéro"),
        (tailleur, "cancel", {"coup": coup.pk, "reason": "x"}, 403, "role_required"),
    ]
    for client, act, data, status, words in refusals:
        answer = post(client, act, data)
        assert (answer.status_code, words in text(answer)) == (status, True), (act, text(answer))
    post(tailleur, "close-betting", {"coup": coup.pk})
    before = recorded()
    answer = post(tailleur, "cards", {"coup": coup.pk, "code": "ZZ"})
    assert answer.status_code == 400
    assert "n'est pas une carte" in text(answer)
    assert recorded() == before


def test_a_spoken_announcement_unlike_the_cards_is_recorded_with_its_anomaly(
    cast, tailleur, croupier, sixain_in_play
):
    coup = open_coup(tailleur)
    post(tailleur, "close-betting", {"coup": coup.pk})
    for code in NOIR_WINS:
        post(tailleur, "cards", {"coup": coup.pk, "code": code})
    post(croupier, "settle", {"coup": coup.pk, "spoken": "rouge gagne et couleur"})
    assert CoupResult.objects.get().spoken == "rouge gagne et couleur"
    assert Anomaly.objects.filter(detector="announcement_mismatch").count() == 1
    page = text(croupier.get("/admin/pit/table/1/"))
    assert "annoncé : « rouge gagne et couleur »" in page


def test_a_stake_withdrawn_before_the_first_card_goes_back(
    cast, tailleur, croupier, sixain_in_play
):
    coup = open_coup(tailleur)
    post(croupier, "stakes", {"coup": coup.pk, "holder": "5", "chance": "noir", "amount": "40"})
    stake = Stake.objects.get()
    answer = post(croupier, f"stakes/{stake.pk}/withdraw")
    assert answer.status_code == 200
    assert "Mise retirée : 40,00 rendus" in text(answer)
    assert hasattr(Stake.objects.get(), "withdrawal")
    assert 'data-ref="' not in text(answer)  # off the layout


def test_the_chef_de_partie_cancels_a_coup_with_a_reason(cast, tailleur, sixain_in_play):
    coup = open_coup(tailleur)
    chef = admin_client(cast.chef)
    answer = post(chef, "cancel", {"coup": coup.pk, "reason": " "})
    assert answer.status_code == 422
    assert "reason_required" in text(answer)
    answer = post(chef, "cancel", {"coup": coup.pk, "reason": "une carte tombée"})
    assert answer.status_code == 200
    assert "Coup n° 1 annulé" in text(answer)
    assert Coup.objects.get().phase == "cancelled"


# --- the cards pass ---------------------------------------------------------------------------


def test_the_cards_pass_between_coups_with_the_undealt_cards(cast, tailleur, shift, sixain_in_play):
    lay_in_coups(cast, shift, NOIR_WINS)
    page = text(tailleur.get("/admin/pit/table/1/"))
    assert "Les cartes passent…" in page  # offered, not required
    undealt = talon(sixain_in_play)
    answer = post(
        tailleur,
        "pass",
        {"pack": sixain_in_play.pk, "undealt": " ".join(undealt), "method": "scanned"},
    )
    assert answer.status_code == 200
    assert f"Les cartes passent : {len(undealt)} cartes restantes enregistrées" in text(answer)
    count = TalonCount.objects.get()
    assert (count.cards, count.method, count.counted_by) == (undealt, "scanned", cast.tailleur)
    sixain_in_play.refresh_from_db()
    assert sixain_in_play.state == PackState.PASSED
    assert "Pas de jeu en service" in text(answer)


def test_at_the_end_of_the_taille_the_page_asks_for_the_undealt_cards(
    cast, tailleur, croupier, shift, sixain_in_play
):
    """The engine ends the taille at a settlement (count rule): the page says the cards pass and
    asks the tailleur for the undealt cards, a count that does not reconcile is recorded as
    evidence and shown so."""
    from casino.games.cards import SIXAIN

    # An order the pack can hold (every card six times), ending with the aces and twos: the count
    # rule ends the taille with a few cards left (fewer than 62 points).
    cards = [str(c) for c in reversed(SIXAIN.cards)]
    for code in cards:
        coup = Coup.objects.filter(shift=shift).exclude(phase__in=["settled", "cancelled"]).first()
        if coup is None:
            coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
            coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        if coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code).coup_complete:
            coup.refresh_from_db()
            preview = settlement_preview(coup)
            if preview.plan.last:
                break
            coup_settle(actor=cast.croupier, coup_id=coup.pk)
    page = text(croupier.get("/admin/pit/table/1/"))
    assert "dernier coup de la taille : les cartes passent ensuite" in page
    answer = post(croupier, "settle", {"coup": coup.pk})
    assert "les cartes passent : enregistrez les cartes restantes" in text(answer)
    sixain_in_play.refresh_from_db()
    assert sixain_in_play.state == PackState.PASSED
    assert 'class="passing required"' in text(answer)
    undealt = talon(sixain_in_play)
    answer = post(tailleur, "pass", {"pack": sixain_in_play.pk, "undealt": " ".join(undealt[1:])})
    assert answer.status_code == 200
    assert "Refusé et enregistré" not in text(answer)
    assert "le compte ne concorde pas (manquent : " in text(answer)
    assert Anomaly.objects.filter(detector="missing_card").count() == 1
    assert TalonCount.objects.get().cards == undealt[1:]
    assert 'class="passing required"' not in text(answer)


# --- the page itself --------------------------------------------------------------------------


def test_the_poll_gets_nothing_when_nothing_changed(cast, tailleur, shift, sixain_in_play):
    first = tailleur.get("/admin/pit/table/1/panel/", headers=HTMX)
    digest = text(first).split('data-digest="')[1].split('"')[0]
    assert tailleur.get(f"/admin/pit/table/1/panel/?seen={digest}", headers=HTMX).status_code == 204
    coup_open(actor=cast.tailleur, shift_id=shift.pk)
    changed = tailleur.get(f"/admin/pit/table/1/panel/?seen={digest}", headers=HTMX)
    assert changed.status_code == 200
    assert "Coup n° 1" in text(changed)


def test_without_htmx_an_act_goes_back_to_the_page_with_its_words(tailleur, sixain_in_play):
    answer = post(tailleur, "coup", htmx=False)
    assert answer.status_code == 303
    assert answer["Location"] == "/admin/pit/table/1/"
    page = text(tailleur.get("/admin/pit/table/1/"))
    assert "Coup n° 1 : messieurs, faites vos jeux" in page


def test_the_page_speaks_english_when_asked(cast, sixain_in_play):
    client = admin_client(cast.tailleur)
    page = text(client.get("/admin/pit/table/1/", headers={"Accept-Language": "en"}))
    assert "faites vos jeux: place your bets" in page
    assert "Stakes from 5.00 to 6,000.00" in page


def test_times_are_the_casinos(cast, tailleur, sixain_in_play, settings):
    from django.utils import timezone

    coup = open_coup(tailleur)
    page = text(tailleur.get("/admin/pit/table/1/"))
    paris = timezone.localtime(coup.opened_at, timezone.get_default_timezone())
    assert f"ouvert à {paris:%H:%M:%S}" in page
    assert settings.TIME_ZONE == "Europe/Paris"


def test_a_table_without_a_seance_is_refused_by_name(cast, table):
    response = admin_client(cast.tailleur).get("/admin/pit/table/1/")
    assert response.status_code == 403
    assert "aucune séance n'est ouverte à cette table" in text(response)


@pytest.mark.reglement("trente-et-quarante-modern")
def test_insurance_and_the_choice_at_a_refait_are_offered_where_the_reglement_has_them(
    cast, tailleur, croupier, sixain_in_play
):
    page = text(croupier.get("/admin/pit/table/1/"))
    assert 'name="insured"' in page
    assert "Refait : au choix du joueur (à défaut : en prison)" in page
    assert "Assurance contre le refait : 0,05 par tranche de 5,00 commencée" in page
    coup = open_coup(tailleur)
    for holder, chance, extra in (
        ("1", "rouge", {"insured": "on"}),
        ("2", "noir", {"on_refait": "half"}),
        ("3", "couleur", {"on_refait": "move:inverse"}),
        ("4", "inverse", {}),
    ):
        answer = post(
            croupier,
            "stakes",
            {"coup": coup.pk, "holder": holder, "chance": chance, "amount": "10", **extra},
        )
        assert answer.status_code == 200, text(answer)
    assert [(s.insured, s.on_refait) for s in Stake.objects.order_by("id")] == [
        (True, ""),
        (False, "half"),
        (False, "move:inverse"),
        (False, ""),
    ]
    post(tailleur, "close-betting", {"coup": coup.pk})
    for code in REFAIT:
        post(tailleur, "cards", {"coup": coup.pk, "code": code})
    page = text(croupier.get("/admin/pit/table/1/"))
    outcomes = [line.split('data-outcome="')[1].split('"')[0] for line in page.split("<tr")[1:]
                if 'data-outcome="' in line]  # fmt: skip
    # Insured: untouched by the refait; half given up; moved to prison on inverse; the default.
    assert outcomes == ["push", "half_lost", "imprisoned", "imprisoned"]
    assert page.count("0,10") >= 1  # the premium of an insured 10,00
    coup.refresh_from_db()
    preview = settlement_preview(coup)
    post(croupier, "settle", {"coup": coup.pk, "spoken": "refait"})
    assert_recorded_as_previewed(coup, preview)
    panel = text(croupier.get("/admin/pit/table/1/panel/", headers=HTMX))
    assert panel.count('class="prisoner"') == 2
    assert panel.split('data-chance="inverse"')[1].count('class="prisoner"') == 2  # moved there


@pytest.mark.reglement("france-2007")
def test_the_cut_card_voids_the_coup_shown_so_before_it_is_confirmed(
    cast, tailleur, croupier, shift, sixain_in_play
):
    """Under the cut-card rule the red card lies before the last five: when it comes out inside a
    coup, the page shows the coup void (every stake returned) and confirms it as such."""
    from casino.floor.coups import cut_card_is_next, rules_of
    from casino.games.cards import SIXAIN

    coup = None
    for code in [str(c) for c in reversed(SIXAIN.cards)]:
        coup = Coup.objects.filter(shift=shift).exclude(phase__in=["settled", "cancelled"]).first()
        if coup is None:
            coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
            stake_place(
                actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="rouge",
                amount=1000,
            )  # fmt: skip
            coup_close_betting(actor=cast.tailleur, coup_id=coup.pk)
        if cut_card_is_next(coup, rules_of(coup)):
            break
        if coup_lay_card(actor=cast.tailleur, coup_id=coup.pk, code=code).coup_complete:
            assert not coup_settle(actor=cast.croupier, coup_id=coup.pk).last
    page = text(croupier.get("/admin/pit/table/1/"))
    assert "La carte de coupe est sortie : le coup est nul, la taille finit." in page
    assert 'name="cut_card" value="1"' in page
    assert 'data-outcome="void"' in page
    coup.refresh_from_db()
    preview = settlement_preview(coup)
    assert preview.cut_card
    answer = post(croupier, "settle", {"coup": coup.pk, "cut_card": "1"})
    assert answer.status_code == 200
    assert "(coup nul : les mises sont rendues)" in text(answer)
    assert_recorded_as_previewed(coup, preview)
    result = CoupResult.objects.get(coup=coup)
    assert (result.void, result.last) == (True, True)
