"""The dispute queue and page in the admin, and the police register's follow-up form."""

from __future__ import annotations

import datetime as dt
import json

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
    assert "the rule&#x27;s answer" in page or "the rule's answer" in page
    url = f"/admin/disputes/dispute/{dispute.pk}"
    assert chef.post(f"{url}/review/", {"note": "heard both"}).status_code == 302

    refused = logged_in(cast.croupier).post(
        f"{url}/decide/", {"articles": ["1"], "reasoning": "mine", "findings": "[]"}
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
            "findings": json.dumps([{"stake": stake.pk, "chance": "noir"}]),
            "corrections": "",
        },
    )
    assert done.status_code == 302, done.content.decode()[:2000]
    decision = Decision.objects.get()
    assert decision.corrections == [["T1:bank", "T1:seat:3", 2000]]
    dispute.refresh_from_db()
    assert dispute.state == DisputeState.DECIDED
    coup_page = chef.get(f"/admin/floor/coup/{coup.pk}/change/").content.decode()
    assert "T1:bank → T1:seat:3: 2000" in coup_page


def test_the_director_follows_up_a_police_observation_in_the_admin(cast):
    observation = observation_record(
        actor=cast.commissaire,
        visited_at=dt.datetime(2026, 11, 2, 21, 30, tzinfo=dt.UTC),
        checks="the sixain store",
    )
    director = logged_in(cast.directeur)
    listing = director.get("/admin/police/observation/").content.decode()
    assert "en retard / overdue" in listing
    url = f"/admin/police/observation/{observation.pk}/follow-up/"
    assert director.post(url, {"action": "store key changed"}).status_code == 302
    assert "store key changed" in director.get("/admin/police/observation/").content.decode()
    refused = logged_in(cast.commissaire).post(url, {"action": "mine"})
    assert "il faut le rôle directeur" in refused.content.decode()
