"""The host's address leads to the back-office, and no page links to a public site that does not
exist (the admin's "Voir le site" went to a 404)."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_the_hosts_address_leads_to_the_admin(client):
    answer = client.get("/")
    assert answer.status_code == 302
    assert answer["Location"] == "/admin/"


@pytest.mark.django_db
def test_the_admin_links_to_no_public_site(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("sans-role", is_staff=True))
    answer = client.get("/admin/")
    assert answer.status_code == 200
    assert 'href="/"' not in answer.content.decode()
