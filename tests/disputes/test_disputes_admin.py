"""The dispute queue and page in the admin, and the police register's follow-up form."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.test import Client

from casino.disputes.models import Decision, DisputeState
from casino.disputes.services import dispute_raise
from casino.police.services import observation_record
from tests.actors import login_admin
from tests.disputes.test_disputes import played_coup


def logged_in(user) -> Client:
    client = Client()
    login_admin(client, user)
    return client


def decision_rows(
    client: Client,
    url: str,
    *,
    findings: dict[int, dict[str, str]] | None = None,
    corrections: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
) -> dict[str, Any]:
    """The decision form's rows as its page offers them (one per stake of the coup, three for
    corrections), filled in as a person would: a stake's fields as found, a correction's
    accounts and amount as typed."""
    form = client.get(f"{url}/decide/").context["form"]
    data: dict[str, Any] = {}
    for formset in form.formsets:
        data[f"{formset.prefix}-TOTAL_FORMS"] = len(formset.forms)
        data[f"{formset.prefix}-INITIAL_FORMS"] = formset.initial_form_count()
    for i, row in enumerate(form.findings.forms):
        stake = row.initial["stake"]
        data[f"findings-{i}-stake"] = stake
        for name, value in (findings or {}).get(stake, {}).items():
            data[f"findings-{i}-{name}"] = value
    for i, (source, target, amount) in enumerate(corrections):
        data |= {
            f"corrections-{i}-source": source,
            f"corrections-{i}-target": target,
            f"corrections-{i}-amount": amount,
        }
    return data


def refusal(page: Any) -> list[str]:
    """What a form page that recorded nothing says is wrong."""
    import re

    return re.findall(r'class="errorlist[^"]*"[^>]*><li>([^<]*)', page.content.decode())


def test_a_dispute_is_examined_and_decided_in_the_admin(cast, shift, sixain_in_play):
    coup, stake = played_coup(cast, shift)
    dispute = dispute_raise(
        actor=cast.croupier, subject="stake", subject_id=stake.pk, claim="it was on noir"
    )
    queue = logged_in(cast.croupier).get("/admin/disputes/dispute/?state__exact=open&age=day")
    assert queue.status_code == 200
    assert f"contestation {dispute.pk}" in queue.content.decode()

    chef = logged_in(cast.chef)
    page = chef.get(f"/admin/disputes/dispute/{dispute.pk}/change/").content.decode()
    assert "♠" in page  # the coup as cards
    assert "♥" in page
    assert "selon la règle" in page
    url = f"/admin/disputes/dispute/{dispute.pk}"
    assert chef.post(f"{url}/review/", {"note": "heard both"}).status_code == 302

    refused = logged_in(cast.croupier).post(
        f"{url}/decide/", {"articles": ["1"], "reasoning": "mine", **decision_rows(chef, url)}
    )
    assert "il faut le rôle chef_de_partie" in refused.content.decode()
    form = chef.get(f"{url}/decide/").content.decode()
    article = dispute.reglement.articles[0]
    assert article["fr"][:30] in form  # the article picker shows the posted text
    done = chef.post(
        f"{url}/decide/",
        {
            "articles": [article["number"]],
            "reasoning": "the croupier's sheet says noir",
            **decision_rows(chef, url, findings={stake.pk: {"chance": "noir"}}),
        },
    )
    assert done.status_code == 302, done.content.decode()[:2000]
    decision = Decision.objects.get()
    assert decision.corrections == [["T1:bank", "T1:seat:3", 2000]]
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED
    coup_page = chef.get(f"/admin/floor/coup/{coup.pk}/change/").content.decode()
    assert "T1:bank → T1:seat:3 : 20,00" in coup_page


def test_the_director_follows_up_a_police_observation_in_the_admin(cast):
    observation = observation_record(
        actor=cast.commissaire,
        visited_at=dt.datetime(2026, 11, 2, 21, 30, tzinfo=dt.UTC),
        checks="the sixain store",
    )
    director = logged_in(cast.directeur)
    listing = director.get("/admin/police/observation/").content.decode()
    assert "(en retard)" in listing
    url = f"/admin/police/observation/{observation.pk}/follow-up/"
    assert director.post(url, {"action": "store key changed"}).status_code == 302
    assert "store key changed" in director.get("/admin/police/observation/").content.decode()
    refused = logged_in(cast.commissaire).post(url, {"action": "mine"})
    assert "il faut le rôle directeur" in refused.content.decode()


def test_the_decider_orders_corrections_in_rows_of_accounts_and_amounts(
    cast, shift, sixain_in_play
):
    """No JSON to type: the corrections are rows (from, to, amount as money), a half-filled row
    is refused with nothing recorded, and "no correction at all" is a box to tick."""
    _coup, stake = played_coup(cast, shift)
    chef = logged_in(cast.chef)
    rows = {}
    for claim in ("goodwill", "nothing owed"):
        dispute = dispute_raise(
            actor=cast.croupier, subject="stake", subject_id=stake.pk, claim=claim
        )
        url = f"/admin/disputes/dispute/{dispute.pk}"
        assert chef.post(f"{url}/review/", {"note": "heard"}).status_code == 302
        rows[claim] = (dispute, url)
    base = {"articles": [rows["goodwill"][0].reglement.articles[0]["number"]]}

    dispute, url = rows["goodwill"]
    half = chef.post(
        f"{url}/decide/",
        {
            **base,
            "reasoning": "a gesture",
            "override_reason": "goodwill",
            **decision_rows(chef, url, corrections=[("T1:bank", "", "12,50")]),
        },
    )
    assert half.status_code == 200
    assert "un compte de départ, un compte d&#x27;arrivée et un montant" in half.content.decode()
    assert not Decision.objects.exists()
    done = chef.post(
        f"{url}/decide/",
        {
            **base,
            "reasoning": "a gesture",
            "override_reason": "goodwill",
            **decision_rows(chef, url, corrections=[("T1:bank", "T1:seat:3", "12,50")]),
        },
    )
    assert done.status_code == 302, refusal(done)
    assert Decision.objects.get(dispute=dispute).corrections == [["T1:bank", "T1:seat:3", 1250]]

    dispute, url = rows["nothing owed"]
    done = chef.post(
        f"{url}/decide/",
        {
            **base,
            "reasoning": "as recorded",
            "no_correction": "on",
            "override_reason": "the patron withdrew his claim in front of the commissioner",
            **decision_rows(chef, url),
        },
    )
    assert done.status_code == 302, refusal(done)
    assert Decision.objects.get(dispute=dispute).corrections == []
