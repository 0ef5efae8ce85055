"""The séance's pages and the cage's through Django's test client: each act's route, its answer,
and every control tried as the attack it stops (the refusal shown with its reason, and nothing
recorded)."""

from __future__ import annotations

import html
import re

from django.db.models import Model
from django.test import Client

from audit.models import Anomaly, AuditEvent
from casino.floor.cage import patron_buy_in
from casino.floor.coups import coup_open
from casino.floor.models import (
    Account,
    CashTransfer,
    CountSignature,
    Duty,
    DutyEnd,
    FloatCount,
    Movement,
    Shift,
    TransferSignature,
)
from casino.floor.services import (
    balance,
    count_countersign,
    count_record,
    duty_end,
    transfer_countersign,
    transfer_record,
)
from casino.people.roles import Role
from tests.actors import admin_client, hire
from tests.conftest import FLOAT, open_seance, signed_count
from tests.floor.alliance_world import cercle_table

FLOOR = (
    AuditEvent,
    FloatCount,
    CountSignature,
    Shift,
    Duty,
    DutyEnd,
    CashTransfer,
    TransferSignature,
    Movement,
    Anomaly,
)


def recorded(*models: type[Model]) -> tuple[int, ...]:
    """What a refused act must leave as it was."""
    return tuple(model.objects.count() for model in models or FLOOR)


def text(response) -> str:
    """The page as a person reads it: tags out, entities decoded, spaces folded."""
    body = re.sub(r"<script.*?</script>", " ", response.content.decode(), flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def refusal(response) -> str:
    """The refusal the page shows, where it shows it."""
    assert response.status_code == 200, response.status_code
    found = re.search(r'id="refusal">(.*?)</p>', response.content.decode(), flags=re.S)
    assert found, "the page shows no refusal"
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", found.group(1)))).strip()


def done(response, client: Client) -> str:
    """An act done: the page again, saying so."""
    assert response.status_code == 302, text(response)[-1500:]
    return text(client.get(response["Location"]))


def chips(counted: dict[str, int]) -> dict[str, int]:
    return {f"chips_{value}": number for value, number in counted.items()}


OPEN = "/admin/pit/seance/open/"


def seance(shift: Shift, act: str = "") -> str:
    return f"/admin/pit/seance/{shift.pk}/" + (f"{act}/" if act else "")


# --- opening --------------------------------------------------------------------------------------


def test_the_float_is_counted_countersigned_and_the_seance_opened_each_by_their_own_act(
    cast, table
):
    croupier = admin_client(cast.croupier)
    page = text(croupier.get(f"{OPEN}?table=1"))
    assert "Compter le fonds d'ouverture" in page
    assert "Contresigner" not in page
    assert "Ouvrir la séance" not in page.split("Les tables")[1]
    answer = croupier.post(f"{OPEN}count/", {"table": 1, **chips(FLOAT)})
    assert "attend sa contresignature" in done(answer, croupier)
    count = FloatCount.objects.get()
    assert count.chips == FLOAT
    assert count.total == 550_000
    assert count.counted_by == cast.croupier

    director = admin_client(cast.directeur)
    assert "en attente de contresignature" in text(director.get(f"{OPEN}?table=1"))
    answer = director.post(f"{OPEN}countersign/", {"table": 1, "count": count.pk})
    assert f"Comptage n° {count.pk} contresigné" in done(answer, director)

    chef = admin_client(cast.chef)
    answer = chef.post(
        f"{OPEN}open/",
        {
            "table": 1,
            "count": count.pk,
            "tailleur": cast.tailleur.pk,
            "croupiers": [cast.croupier.pk],
        },
    )
    shift = Shift.objects.get()
    assert answer["Location"] == seance(shift)
    page = done(answer, chef)
    assert "Séance ouverte à Table 1" in page
    assert "5 500,00" in page.replace("\u202f", " ").replace("\xa0", " ")
    assert {(d.person, d.post) for d in shift.duties.all()} == {
        (cast.chef, "chef_de_partie"),
        (cast.tailleur, "tailleur"),
        (cast.croupier, "croupier"),
    }


def test_a_cercle_seance_opens_on_its_empty_fee_box_without_a_tailleur(cast):
    """At a cercle the players deal and the house banks nothing: the croupier counts the fee box
    empty, the chef de partie opens with croupiers and no tailleur; a tailleur sent all the
    same is the service's to refuse, in its words."""
    cercle_table(cast, number=5)
    croupier = admin_client(cast.croupier)
    page = text(croupier.get(f"{OPEN}?table=5"))
    assert "Compter la cagnotte" in page
    assert "Compter le fonds d'ouverture" not in page
    answer = croupier.post(f"{OPEN}count/", {"table": 5, "chips_1": "0"})
    assert "Comptage n°" in done(answer, croupier)
    count = FloatCount.objects.get()
    assert (count.total, count.chips) == (0, {"1": 0})
    count_countersign(actor=cast.directeur, count_id=count.pk)

    chef = admin_client(cast.chef)
    form = chef.get(f"{OPEN}?table=5").content.decode().split('id="open"')[1]
    assert 'name="tailleur"' not in form
    assert 'name="croupiers"' in form
    before = recorded()
    said = refusal(
        chef.post(
            f"{OPEN}open/",
            {
                "table": 5,
                "count": count.pk,
                "tailleur": cast.tailleur.pk,
                "croupiers": [cast.croupier.pk],
            },
        )
    )
    assert "au cercle, les joueurs donnent ; pas de tailleur" in said
    assert recorded() == before

    answer = chef.post(
        f"{OPEN}open/", {"table": 5, "count": count.pk, "croupiers": [cast.croupier.pk]}
    )
    shift = Shift.objects.get()
    assert answer["Location"] == seance(shift)
    assert {(d.person, d.post) for d in shift.duties.all()} == {
        (cast.chef, "chef_de_partie"),
        (cast.croupier, "croupier"),
    }
    assert not Movement.objects.exists()  # an empty box: no float moved


def test_a_banking_tables_seance_still_needs_its_tailleur(cast, table):
    count = signed_count(cast, table, "opening", FLOAT)
    before = recorded()
    said = refusal(
        admin_client(cast.chef).post(
            f"{OPEN}open/", {"table": 1, "count": count.pk, "croupiers": [cast.croupier.pk]}
        )
    )
    assert "Rien n'est enregistré : le formulaire est incomplet" in said
    assert recorded() == before


def test_the_seance_opens_only_on_a_countersigned_count(cast, table):
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    before = recorded()
    answer = admin_client(cast.chef).post(
        f"{OPEN}open/",
        {
            "table": 1,
            "count": count.pk,
            "tailleur": cast.tailleur.pk,
            "croupiers": [cast.croupier.pk],
        },
    )
    assert f"le comptage {count.pk} attend sa contresignature" in refusal(answer)
    assert recorded() == before


def test_a_croupier_who_tries_to_countersign_a_count_is_refused_and_nothing_is_recorded(
    cast, table
):
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    before = recorded()
    answer = admin_client(cast.croupier).post(
        f"{OPEN}countersign/", {"table": 1, "count": count.pk}
    )
    said = refusal(answer)
    assert "contresigner un comptage" in said
    assert "il faut le rôle" in said
    assert recorded() == before
    assert not CountSignature.objects.exists()


def test_a_countersigner_who_also_counted_is_refused(cast, table):
    """A director never counts (the role refuses him); a count's two signatures are two people
    even when a comité member is also asked to count: the service says so on the page."""
    count = count_record(actor=cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=cast.comite, count_id=count.pk)
    before = recorded()
    answer = admin_client(cast.directeur).post(
        f"{OPEN}countersign/", {"table": 1, "count": count.pk}
    )
    assert f"le comptage {count.pk} est déjà contresigné" in refusal(answer)
    assert recorded() == before


def test_a_cashier_is_refused_every_act_of_the_seance_and_nothing_is_recorded(cast, table):
    count = signed_count(cast, table, "opening", FLOAT)
    cashier = admin_client(cast.caissier)
    before = recorded()
    said = refusal(cashier.post(f"{OPEN}count/", {"table": 1, **chips(FLOAT)}))
    assert "compter le fonds de table" in said
    assert "il faut le rôle croupier" in said
    said = refusal(
        cashier.post(
            f"{OPEN}open/",
            {
                "table": 1,
                "count": count.pk,
                "tailleur": cast.tailleur.pk,
                "croupiers": [cast.croupier.pk],
            },
        )
    )
    assert "ouvrir une séance" in said
    assert "il faut le rôle chef_de_partie" in said
    assert recorded() == before

    shift = open_seance(cast, table)  # the chef opens it; the cashier tries the séance's acts
    duty = shift.duties.get(post="croupier")
    closing = count_record(actor=cast.croupier, table_id=table.pk, moment="closing", chips=FLOAT)
    before = recorded()
    attempts = {
        "duty": {"person": cast.tailleur.pk, "post": "tailleur"},
        "end": {"duty": duty.pk, "reason": "pause"},
        "count": chips(FLOAT),
        "countersign": {"count": closing.pk},
        "close": {"count": closing.pk},
    }
    for act, data in attempts.items():
        said = refusal(cashier.post(seance(shift, act), data))
        assert "il faut le rôle" in said, (act, said)
    assert recorded() == before


def test_the_seance_is_read_by_the_pit_the_cage_and_its_own_dealers_only(cast, shift):
    other = hire(cast.directeur, "croupier2", Role.CROUPIER)
    assert admin_client(cast.caissier).get(seance(shift)).status_code == 200
    assert admin_client(cast.croupier).get(seance(shift)).status_code == 200
    for person in (other, cast.outsider):
        client = admin_client(person)
        refused = client.get(seance(shift))
        assert refused.status_code == 403
        assert "vos rôles ne donnent pas accès à cette page" in text(refused)
        before = recorded()
        assert client.post(seance(shift, "close"), {"count": 1}).status_code == 403
        assert recorded() == before
    assert admin_client(cast.outsider).get(OPEN).status_code == 403
    assert admin_client(other).get("/admin/pit/cage/").status_code == 403


# --- staff on duty -----------------------------------------------------------------------------


def test_the_chef_puts_staff_on_and_off_duty(cast, shift):
    second = hire(cast.directeur, "croupier2", Role.CROUPIER)
    chef = admin_client(cast.chef)
    page = done(chef.post(seance(shift, "duty"), {"person": second.pk, "post": "croupier"}), chef)
    assert "de service comme croupier" in page
    duty = Duty.objects.get(person=second)
    page = done(chef.post(seance(shift, "end"), {"duty": duty.pk, "reason": "pause"}), chef)
    assert "relevé de son service" in page
    assert "pause" in page
    assert duty.end.reason == "pause"
    assert duty.end.by == cast.chef

    before = recorded()
    said = refusal(chef.post(seance(shift, "end"), {"duty": duty.pk, "reason": ""}))
    assert "dites pourquoi le service prend fin" in said
    said = refusal(chef.post(seance(shift, "duty"), {"person": second.pk, "post": "tailleur"}))
    assert "n'a pas le rôle tailleur" in said
    # The cashier is not even offered: the form says so, the service is not asked.
    answer = chef.post(seance(shift, "duty"), {"person": cast.caissier.pk, "post": "croupier"})
    assert "Rien n'est enregistré" in refusal(answer)
    assert recorded() == before


def test_a_chef_off_duty_is_refused_the_seances_acts_and_nothing_is_recorded(cast, shift):
    other_chef = admin_client(hire(cast.directeur, "chef2", Role.CHEF_DE_PARTIE))
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=10_000)
    closing = signed_count(cast, shift.table, "closing", FLOAT)
    duty = shift.duties.get(post="croupier")
    before = recorded()
    attempts = {
        "duty": {"person": cast.tailleur.pk, "post": "tailleur"},
        "end": {"duty": duty.pk, "reason": "pause"},
        "transfer": {"kind": "credit", "amount": "100"},
        "sign": {"transfer": fill.pk, "decision": "sign"},
        "close": {"count": closing.pk},
    }
    for act, data in attempts.items():
        said = refusal(other_chef.post(seance(shift, act), data))
        assert "chef2 n'y est pas de service comme chef_de_partie" in said, (act, said)
    assert recorded() == before


# --- fills and credits ---------------------------------------------------------------------------


def test_a_fill_recorded_by_the_table_is_signed_by_the_cage(cast, shift):
    chef = admin_client(cast.chef)
    page = done(chef.post(seance(shift, "transfer"), {"kind": "fill", "amount": "250.50"}), chef)
    assert "il attend la seconde signature" in page
    assert "attend la signature de la caisse" in page
    fill = CashTransfer.objects.get()
    assert fill.amount == 25_050
    assert fill.recorded_by == cast.chef
    assert not Movement.objects.filter(kind="fill").exists()

    cashier = admin_client(cast.caissier)
    cage = text(cashier.get("/admin/pit/cage/"))
    assert "En attente de la signature de la caisse" in cage
    assert "250,50" in cage
    page = done(
        cashier.post("/admin/pit/cage/sign/", {"transfer": fill.pk, "decision": "sign"}), cashier
    )
    assert "signé : la table le reçoit" in page
    assert Movement.objects.get(kind="fill").amount == 25_050
    assert "signé par caissier" in text(chef.get(seance(shift)))


def test_a_credit_recorded_by_the_cage_is_declined_by_the_table_with_its_reason(cast, shift):
    cashier = admin_client(cast.caissier)
    answer = cashier.post(
        "/admin/pit/cage/transfer/", {"shift": shift.pk, "kind": "credit", "amount": "100"}
    )
    assert "attend la signature de la table" in done(answer, cashier)
    credit = CashTransfer.objects.get()
    chef = admin_client(cast.chef)
    before = recorded()
    said = refusal(chef.post(seance(shift, "sign"), {"transfer": credit.pk, "decision": "decline"}))
    assert "dites pourquoi le transfert est refusé" in said
    assert recorded() == before
    answer = chef.post(
        seance(shift, "sign"),
        {"transfer": credit.pk, "decision": "decline", "remark": "pas de jetons à rendre"},
    )
    assert f"Transfert n° {credit.pk} refusé" in done(answer, chef)
    assert "refusé par chef : pas de jetons à rendre" in text(chef.get(seance(shift)))
    assert not Movement.objects.filter(kind="credit").exists()


def test_a_chef_who_tries_to_countersign_a_fill_he_recorded_is_refused_and_nothing_is_recorded(
    cast, shift
):
    fill = transfer_record(actor=cast.chef, shift_id=shift.pk, kind="fill", amount=10_000)
    chef = admin_client(cast.chef)
    page = chef.get(seance(shift)).content.decode()
    assert f'name="transfer" value="{fill.pk}"' not in page  # no button for his own fill
    before = recorded()
    said = refusal(chef.post(seance(shift, "sign"), {"transfer": fill.pk, "decision": "sign"}))
    assert "un apport est signé par la caisse et par la table" in said
    assert recorded() == before
    assert not TransferSignature.objects.exists()


def test_a_cashier_who_tries_to_sign_the_cages_own_fill_is_refused(cast, shift):
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=10_000)
    before = recorded()
    answer = admin_client(cast.caissier).post(
        "/admin/pit/cage/sign/", {"transfer": fill.pk, "decision": "sign"}
    )
    assert "caissier a déjà signé pour la caisse" in refusal(answer)
    assert recorded() == before


def test_an_amount_is_typed_in_the_currency_with_two_decimals_at_most(cast, shift):
    chef = admin_client(cast.chef)
    before = recorded()
    answer = chef.post(seance(shift, "transfer"), {"kind": "fill", "amount": "10.005"})
    assert answer.status_code == 200
    assert "Rien n'est enregistré" in text(answer)
    assert 'value="10.005"' in answer.content.decode()  # the form keeps what was typed
    said = refusal(chef.post(seance(shift, "transfer"), {"kind": "fill", "amount": "0"}))
    assert "n'est pas un montant" in said
    assert recorded() == before


# --- the close -----------------------------------------------------------------------------------


def test_the_rundown_and_its_variance_show_before_the_close_and_the_anomaly_after(cast, shift):
    fill = transfer_record(actor=cast.chef, shift_id=shift.pk, kind="fill", amount=100_000)
    transfer_countersign(actor=cast.caissier, transfer_id=fill.pk)
    exact = {"10000": 50, "2500": 40, "500": 100}  # 6 500,00: the float and the fill
    count = count_record(
        actor=cast.croupier, table_id=shift.table_id, moment="closing", chips=exact
    )
    chef = admin_client(cast.chef)
    page = text(chef.get(seance(shift))).replace("\u202f", " ").replace("\xa0", " ")
    assert "Rapprochement, avant la fermeture" in page
    assert "= fonds attendu 6 500,00" in page
    assert f"Fonds compté (comptage n° {count.pk}) en attente de contresignature 6 500,00" in page
    assert "Écart 0,00" in page

    before = recorded()
    said = refusal(chef.post(seance(shift, "close"), {"count": count.pk}))
    assert f"le comptage {count.pk} attend sa contresignature" in said
    assert recorded() == before

    recount = {"10000": 50, "2500": 40, "500": 90}  # 50,00 short
    croupier = admin_client(cast.croupier)
    done(croupier.post(seance(shift, "count"), chips(recount)), croupier)
    recount_id = FloatCount.objects.filter(moment="closing").latest("id").pk
    count_countersign(actor=cast.directeur, count_id=recount_id)
    page = text(chef.get(seance(shift))).replace("\u202f", " ").replace("\xa0", " ")
    assert "Écart −50,00" in page
    assert "signale l'écart" in page
    assert not Anomaly.objects.filter(detector="cash_variance").exists()

    page = done(chef.post(seance(shift, "close"), {"count": recount_id}), chef)
    assert "écart de caisse de −50,00 signalé" in page.replace("\u202f", " ")
    assert "Rapprochement certifié" in page
    assert "cash_variance" in page
    anomaly = Anomaly.objects.get(detector="cash_variance")
    assert anomaly.evidence["variance"] == -5000
    shift.refresh_from_db()
    assert shift.closed_at is not None
    assert not Duty.objects.filter(end__isnull=True).exists()


def test_the_close_is_refused_with_its_reason_while_a_transfer_waits_or_a_coup_is_open(
    cast, shift, sixain_in_play
):
    closing = signed_count(cast, shift.table, "closing", FLOAT)
    fill = transfer_record(actor=cast.caissier, shift_id=shift.pk, kind="fill", amount=10_000)
    chef = admin_client(cast.chef)
    before = recorded()
    said = refusal(chef.post(seance(shift, "close"), {"count": closing.pk}))
    assert "un apport ou un retour en attente de sa seconde signature" in said
    assert recorded() == before

    transfer_countersign(actor=cast.chef, transfer_id=fill.pk)
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    closing = signed_count(cast, shift.table, "closing", {"10000": 41, "2500": 40, "500": 100})
    page = text(chef.get(seance(shift)))
    assert f"Le coup n° {coup.number} est en cours" in page
    before = recorded()
    said = refusal(chef.post(seance(shift, "close"), {"count": closing.pk}))
    assert "a un coup en cours : réglez-le ou annulez-le d'abord" in said
    assert recorded() == before
    shift.refresh_from_db()
    assert shift.closed_at is None


def test_a_croupier_taken_off_duty_cannot_count_the_closing_float(cast, shift):
    duty = shift.duties.get(person=cast.croupier)
    duty_end(actor=cast.chef, duty_id=duty.pk, reason="fin de service")
    croupier = admin_client(cast.croupier)  # he worked the séance: he still reads it
    before = recorded()
    said = refusal(croupier.post(seance(shift, "count"), chips(FLOAT)))
    assert "croupier n'y est pas de service comme croupier" in said
    assert recorded() == before


def test_the_seance_speaks_english_when_asked(cast, shift):
    chef = admin_client(cast.chef)
    page = text(chef.get(seance(shift), HTTP_ACCEPT_LANGUAGE="en"))
    assert "Staff on duty" in page
    assert "Rundown, before the close" in page
    said = refusal(chef.post(seance(shift, "close"), {"count": 99999}, HTTP_ACCEPT_LANGUAGE="en"))
    assert said == "Refused — count 99999 does not exist"


# --- the cage: the cercle's patrons ---------------------------------------------------------------

CAGE = "/admin/pit/cage/"


def test_the_cashier_changes_a_patrons_money_and_pays_him_out(cast):
    cashier = admin_client(cast.caissier)
    answer = cashier.post(f"{CAGE}buy-in/", {"patron": "ana", "amount": "250.50", "name": "Ana B."})
    assert "Ana a changé 250,50 : ils sont sur son compte." in done(answer, cashier)
    ana = Account.objects.get(code="patron:ana")
    assert (balance(ana), ana.name) == (25_050, "Ana B.")
    page = text(cashier.get(CAGE)).split("Les joueurs du cercle")[1]
    assert "ana Ana B. 250,50" in page

    answer = cashier.post(f"{CAGE}cash-out/", {"patron": "patron:ana", "amount": "50"})
    assert "Ana est payé 50,00." in done(answer, cashier)
    answer = cashier.post(f"{CAGE}cash-out/", {"patron": "ana", "amount": ""})  # all of it
    assert "Ana est payé 200,50." in done(answer, cashier)
    assert balance(ana) == 0
    assert list(Movement.objects.order_by("id").values_list("kind", "amount", "actor")) == [
        ("buy_in", 25_050, cast.caissier.pk),
        ("cash_out", 5_000, cast.caissier.pk),
        ("cash_out", 20_050, cast.caissier.pk),
    ]


def test_only_the_cashier_changes_or_pays_a_patron_and_nothing_else_is_recorded(cast):
    patron_buy_in(actor=cast.caissier, patron="ana", amount=5000)
    chef = admin_client(cast.chef)
    assert 'id="buy-in-form"' not in chef.get(CAGE).content.decode()
    before = recorded()
    said = refusal(chef.post(f"{CAGE}buy-in/", {"patron": "ben", "amount": "100"}))
    assert "il faut le rôle caissier" in said
    said = refusal(chef.post(f"{CAGE}cash-out/", {"patron": "ana", "amount": "10"}))
    assert "il faut le rôle caissier" in said
    assert recorded() == before
    assert not Account.objects.filter(code="patron:ben").exists()

    cashier = admin_client(cast.caissier)
    said = refusal(cashier.post(f"{CAGE}cash-out/", {"patron": "ana", "amount": "100.00"}))
    assert "on ne lui paie pas 100,00" in said
    said = refusal(cashier.post(f"{CAGE}buy-in/", {"patron": "a b", "amount": "10"}))
    assert "n'est pas un joueur" in said
    assert recorded() == before
