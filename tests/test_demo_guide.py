"""The guide ``make run`` prints: every demo person is in it, every place it names exists."""

from __future__ import annotations

from django.urls import resolve

from casino import demo_guide
from casino.people.management.commands.demo_seed import DEMO_STAFF


def test_every_place_the_guide_names_is_a_page_of_the_site():
    for job in demo_guide.JOBS:
        resolve(job.path)  # raises Resolver404 for a page that is not there


def test_every_demo_person_is_in_the_guide_with_password_and_second_factor():
    usernames = [username for username, *_ in DEMO_STAFF] + ["admin"]
    logins = {
        name: {"password": f"pw-{name}", "totp_secret": "ABC" if n % 2 else None}
        for n, name in enumerate(usernames)
    }
    lines = demo_guide.render(logins, "127.0.0.1:8000").splitlines()
    rows = {name: line for name in usernames for line in lines if f" pw-{name} " in line}
    [also] = [line for line in lines if line.startswith("also:")]
    for name in usernames:
        if name in rows:
            assert (" yes " in rows[name]) == bool(logins[name]["totp_secret"]), rows[name]
        else:
            assert name in also  # the second crew
    assert len(rows) == len(demo_guide.JOBS)
    assert "http://127.0.0.1:8000/admin/pit/table/1/" in rows["tailleur"]
    assert "python manage.py demo_totp LOGIN" in lines[-1]
