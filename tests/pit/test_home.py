"""The home page, "what waits for me", through Django's test client and its sections as data:
who sees what (each section reads through the API's scopes: a croupier never sees the cage's
items), each item's link to where the act is done, and the admin's index being the home."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import transaction
from django.utils import timezone, translation

from audit.models import Severity
from audit.services import anomaly_raise, anomaly_review, chain_verify_and_record
from casino.disputes.services import dispute_appeal, dispute_decide, dispute_raise, dispute_review
from casino.floor.api import TransferList
from casino.floor.services import count_record, transfer_record
from casino.people.roles import Role
from casino.pit.home import sections
from casino.police.services import observation_record
from casino.reports.api import ReportList
from casino.reports.services import register_sign_off, registers_due, report_render
from shoes.api import PackList
from tests.actors import admin_client, hire
from tests.disputes.test_disputes import first_article, played_coup
from tests.pit.test_seance import text
from tests.reports.test_shift_report import closed_seance, rendered


def waiting(user) -> dict[str, dict[str, list[tuple[str, str]]]]:
    """The home as data, in the house's language: section → group → (text, link) of each item."""
    with translation.override("fr"):
        return {
            s.key: {g.key: [(i.text, i.url) for i in g.items] for g in s.groups}
            for s in sections(user)
        }


def links(user) -> set[str]:
    return {
        url for groups in waiting(user).values() for items in groups.values() for _, url in items
    }


# --- the table staff ----------------------------------------------------------------------------


def test_the_staff_on_duty_find_their_table_page_and_the_others_are_told_they_are_off(cast, shift):
    for person, post in ((cast.tailleur, "tailleur"), (cast.croupier, "croupier")):
        assert waiting(person) == {
            "table": {
                "duty": [
                    (f"{shift.table} : vous y êtes de service comme {post}", "/admin/pit/table/1/")
                ]
            }
        }
    off = hire(cast.directeur, "relief", Role.CROUPIER)
    assert waiting(off) == {"table": {"duty": []}}
    page = text(admin_client(off).get("/admin/"))
    assert "Vous n'êtes de service à aucune table." in page


def test_a_croupier_never_sees_the_cage_s_items(cast, shift, receive):
    received = receive(store=False)
    transfer = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=50_000)
    assert set(waiting(cast.croupier)) == {"table"}
    assert links(cast.croupier) == {"/admin/pit/table/1/"}
    page = admin_client(cast.croupier).get("/admin/").content.decode()
    assert received.seal_number not in page
    assert f"#transfer-{transfer.pk}" not in page
    assert "/admin/pit/cage/" not in page
    # What the home read from, the API's scopes: the croupier reads neither the packs in store nor
    # any report, the cashier both.
    assert not PackList.readable_by(cast.croupier).filter(pk=received.pk).exists()
    assert not ReportList.readable_by(cast.croupier).exists()
    assert PackList.readable_by(cast.caissier).filter(pk=received.pk).exists()
    assert TransferList.readable_by(cast.croupier).filter(pk=transfer.pk).exists()  # his séance


# --- the chef de partie and the cashier ---------------------------------------------------------


def test_the_chef_sees_his_seance_the_fills_for_his_table_and_the_disputes_to_decide(
    cast, shift, sixain_in_play
):
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=100_000)
    credit = transfer_record(actor=cast.chef, shift_id=shift.pk, kind="credit", amount=20_000)
    _coup, stake = played_coup(cast, shift)
    dispute = dispute_raise(actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="noir")
    chef = waiting(cast.chef)["chef_de_partie"]
    assert chef["seances"] == [(str(shift.table), f"/admin/pit/seance/{shift.pk}/")]
    # The cage recorded the fill: the table signs it; the chef's own credit waits for the cage.
    assert [url for _, url in chef["table-signatures"]] == [
        f"/admin/pit/seance/{shift.pk}/#transfer-{fill.pk}"
    ]
    assert chef["disputes"] == [
        (
            f"Contestation n° {dispute.pk} : « noir »",
            f"/admin/disputes/dispute/{dispute.pk}/review/",
        )
    ]
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    assert waiting(cast.chef)["chef_de_partie"]["disputes"][0][1].endswith(f"/{dispute.pk}/decide/")

    cashier = waiting(cast.caissier)
    assert set(cashier) == {"caissier"}
    assert [url for _, url in cashier["caissier"]["cage-signatures"]] == [
        f"/admin/pit/cage/#transfer-{credit.pk}"
    ]


def test_a_chef_off_duty_is_offered_to_open_a_seance(cast, table):
    response = admin_client(cast.chef).get("/admin/")
    assert "Aucune séance n'est ouverte à votre nom." in text(response)
    assert 'href="/admin/pit/seance/open/"' in response.content.decode()


def test_the_cashier_sees_the_packs_to_store(cast, receive):
    received, stored = receive(store=False), receive()
    to_store = waiting(cast.caissier)["caissier"]["to-store"]
    assert [url for _, url in to_store] == [f"/admin/pit/cards/{received.pk}/"]
    assert stored.seal_number not in str(to_store)


# --- a person of several roles -------------------------------------------------------------------


def test_a_person_of_several_roles_sees_each_role_s_section(cast):
    both = hire(cast.directeur, "polyvalent", Role.CHEF_DE_PARTIE, Role.TAILLEUR, Role.CROUPIER)
    assert [s.key for s in sections(both)] == ["table", "chef_de_partie"]
    assert sections(cast.outsider) == []
    assert "aucun rôle" in text(admin_client(cast.outsider).get("/admin/"))


# --- the commissioner and internal audit ---------------------------------------------------------


def test_the_commissioner_sees_seals_the_register_page_escalations_and_appeals(
    cast, shift, sixain_in_play, receive
):
    in_store = receive()
    _coup, stake = played_coup(cast, shift)
    dispute = dispute_raise(actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="n")
    dispute_review(actor=cast.chef, dispute_id=dispute.pk, note="taken up")
    dispute_decide(
        actor=cast.chef,
        dispute_id=dispute.pk,
        articles=[first_article(dispute)],
        reasoning="the record stands",
        findings=[],
    )
    dispute_appeal(actor=cast.tailleur, dispute_id=dispute.pk, note="the patron appeals")
    anomaly = anomaly_raise(
        detector="test", severity=Severity.WARNING, summary="a count is short", evidence={}
    )
    anomaly_review(actor=cast.auditeur, anomaly_id=anomaly.pk, to_state="acknowledged", reason="r")
    anomaly_review(actor=cast.auditeur, anomaly_id=anomaly.pk, to_state="escalated", reason="r")

    commissioner = waiting(cast.commissaire)["commissaire"]
    assert [url for _, url in commissioner["seals"]] == [f"/admin/pit/cards/{in_store.pk}/"]
    today = timezone.localdate()
    assert commissioner["register"] == [
        (
            f"Page du {today:%d/%m/%Y} : 2 jeux reçus",  # the sixain in play and the one in store
            f"/admin/pit/cards/#register-{today:%Y-%m-%d}",
        )
    ]
    assert [url for _, url in commissioner["escalated"]] == [
        f"/admin/audit/anomaly/{anomaly.pk}/review/"
    ]
    assert [url for _, url in commissioner["appeals"]] == [
        f"/admin/disputes/dispute/{dispute.pk}/decide/"
    ]
    # None of it is the croupier's or the cashier's to see.
    assert not links(cast.croupier) & links(cast.commissaire)
    assert "commissaire" not in waiting(cast.caissier)


def test_internal_audit_sees_the_open_anomalies_gravest_first(cast):
    info = anomaly_raise(detector="t", severity=Severity.INFO, summary="i", evidence={})
    critical = anomaly_raise(detector="t", severity=Severity.CRITICAL, summary="c", evidence={})
    warning = anomaly_raise(detector="t", severity=Severity.WARNING, summary="w", evidence={})
    taken = anomaly_raise(detector="t", severity=Severity.CRITICAL, summary="t", evidence={})
    anomaly_review(actor=cast.auditeur, anomaly_id=taken.pk, to_state="acknowledged", reason="r")
    audit = waiting(cast.auditeur)["auditeur"]
    assert [url for _, url in audit["anomalies-open"]] == [
        f"/admin/audit/anomaly/{a.pk}/review/" for a in (critical, warning, info)
    ]
    assert [url for _, url in audit["anomalies-acknowledged"]] == [
        f"/admin/audit/anomaly/{taken.pk}/review/"
    ]
    assert [s.key for s in sections(cast.auditeur)] == ["auditeur"]


# --- the director, the comité and the regulator --------------------------------------------------


def test_the_director_and_the_comite_see_the_register_until_each_has_certified_it(cast, posted):
    closed_seance(hours=0.05)
    day = timezone.localdate()
    (register,) = registers_due(today=day + dt.timedelta(days=1))
    assert (
        waiting(cast.directeur)["direction"]["registers"] == []
    )  # not signed yet: nothing to visa
    with transaction.atomic():
        report_render(version=1, day=day.isoformat())
    sign_off = f"/admin/reports/report/{register.pk}/sign_off/"
    for person in (cast.directeur, cast.comite):
        assert waiting(person)["direction"]["registers"] == [
            (f"Registre de contrôle du {day:%d/%m/%Y}", sign_off)
        ]
    register_sign_off(actor=cast.directeur, day=day)
    assert waiting(cast.directeur)["direction"]["registers"] == []
    assert [url for _, url in waiting(cast.comite)["direction"]["registers"]] == [sign_off]
    register_sign_off(actor=cast.comite, day=day)
    assert waiting(cast.comite)["direction"]["registers"] == []
    assert "registers" not in str(waiting(cast.inspecteur))


def test_the_director_sees_counts_to_countersign_and_police_follow_ups_due(cast, table):
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips={"500": 4})
    late = observation_record(
        actor=cast.commissaire,
        visited_at=timezone.now() - dt.timedelta(days=9),
        checks="the store",
        injunctions="change the store's key",
    )
    director = waiting(cast.directeur)["direction"]
    assert [url for _, url in director["counts"]] == [
        f"/admin/pit/seance/open/?table=1#count-{count.pk}"
    ]
    assert director["follow-ups"] == [
        (
            f"Visite du {timezone.localtime(late.visited_at):%d/%m/%Y} : change the store's key",
            f"/admin/police/observation/{late.pk}/follow-up/",
        )
    ]
    [item] = next(g for g in sections(cast.directeur)[0].groups if g.key == "follow-ups").items
    assert item.urgent
    comite = waiting(cast.comite)["direction"]
    assert [url for _, url in comite["counts"]] == [url for _, url in director["counts"]]
    assert "follow-ups" not in comite  # the director follows up, not the comité


def test_the_regulator_sees_the_latest_signed_reports_and_the_chain_s_state(cast, posted):
    report = rendered(closed_seance(hours=0.05))
    regulator = waiting(cast.inspecteur)["inspecteur"]
    assert regulator["reports"] == [
        (
            f"Rapport de la séance n° {report.shift_id}, {report.shift.table}",
            f"/admin/reports/report/{report.pk}/change/",
        )
    ]
    assert regulator["chain"] == []
    page = text(admin_client(cast.inspecteur).get("/admin/"))
    assert "La chaîne n'a jamais été vérifiée." in page
    verification = chain_verify_and_record()
    assert verification.ok
    [(words, url)] = waiting(cast.inspecteur)["inspecteur"]["chain"]
    assert words.startswith(f"Intacte : {verification.events} événements vérifiés")
    assert url.startswith("/admin/audit/chainverification/")


# --- the admin's index --------------------------------------------------------------------------


def test_the_admin_s_index_is_the_home_and_the_registers_stay_reachable(cast, shift):
    client = admin_client(cast.chef)
    home = client.get("/admin/")
    assert home.status_code == 200
    assert "Ce qui vous attend" in text(home)
    assert 'href="/admin/registers/"' in home.content.decode()
    registers = client.get("/admin/registers/")
    assert registers.status_code == 200
    assert 'href="/admin/floor/shift/"' in registers.content.decode()
    assert "Ce qui vous attend" in text(client.get("/admin/pit/"))


@pytest.mark.parametrize("role", list(Role))
def test_every_role_s_home_answers(cast, role):
    assert admin_client(cast.by_role(role)).get("/admin/").status_code == 200
