"""Every page people read, in French and in English: the admin's lists and records (one record of
each model, made by a séance played through the API and the services), its forms, the pit's
pages, the login, the password and setup pages, 403 and 404. On each: the casino's name in the
title and never Django's, no JSON, every time in the casino's zone and one format, and the zone
said in the footer (README, "Words")."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.utils import timezone

from audit.models import Anomaly
from audit.services import chain_verify_and_record
from casino import clock
from casino.disputes.models import Dispute
from casino.floor.coups import coup_open, stake_place
from casino.floor.models import Shift, Table
from casino.police.models import Observation
from casino.reports.models import Report
from casino.reports.services import register_sign_off, registers_due, report_render
from shoes.models import Pack
from shoes.services import pack_cut, pack_open, pack_shuffle
from tests.actors import Cast, admin_client
from tests.api.tour import play
from tests.conftest import open_seance
from tests.floor.alliance_world import cercle_ready, close_cercle, play_act_by_act, simulated

NAME = "Casino de la Plage-sur-Mer"
FOOTER = {"fr": "Heures affichées : Europe/Paris", "en": "Times shown: Europe/Paris"}


class Page(HTMLParser):
    """A page's title and the text a person sees (scripts, styles and attributes left out)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.title, self.text, self.language = "", [], ""
        self._in: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.language = dict(attrs).get("lang") or ""
        if tag not in ("br", "img", "input", "link", "meta", "hr"):
            self._in.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag in self._in:
            while self._in.pop() != tag:
                pass

    def handle_data(self, data: str) -> None:
        if "title" in self._in:
            self.title += data
        elif not {"script", "style", "template"} & set(self._in):
            self.text.append(data)

    @property
    def words(self) -> str:
        return " ".join(" ".join(self.text).split())


def problems(html: str, utc: set[str], *, whole: bool, language: str) -> list[str]:
    """What is wrong with a page. ``utc``: the hours:minutes the world was made at, as UTC
    writes them (the casino's zone writes them an hour or two later); ``whole``: a full page
    (a fragment swapped in by htmx has no title nor footer)."""
    page = Page(html)
    text = page.words
    found = []
    if whole:
        if NAME not in page.title:
            found.append(f"title without the casino's name: {page.title!r}")
        if FOOTER[language] not in text:
            found.append("no footer naming the zone in the page's language")
        if page.language != language:
            found.append(f"the page speaks {page.language!r}")
    if "Django" in page.title or "Django" in text:
        found.append("Django's name")
    for marker in ('{"', "[{", '["', "{'", "['"):
        if marker in text:
            at = text.index(marker)
            found.append(f"JSON: …{text[max(0, at - 40) : at + 40]}…")
    for pattern, what in (
        (r"\d{4}-\d{2}-\d{2}", "an ISO date"),
        (r"\d{2}:\d{2}:\d{2}\.\d", "an ISO time"),
        (r"[+-]\d{2}:\d{2}\b", "a UTC offset"),
        (r"\b[ap]\.m\.|\b[AP]M\b", "a 12-hour time"),
        (r"\bUTC\b", "UTC"),
        (r"(?<![\d/])\d{1,2}/\d{1,2}/\d{2}(?!\d)", "a short year"),
        (r"(?<![\d:])\d:\d{2}\b", "an hour of one digit"),
    ):
        if match := re.search(pattern, text):
            at = match.start()
            found.append(f"{what}: …{text[max(0, at - 40) : at + 40]}…")
    found += [f"a time in UTC: {hm}" for hm in sorted(utc) if re.search(rf"\b{hm}\b", text)]
    return found


@dataclass
class World:
    cast: Cast
    utc: set[str]  # every hh:mm (UTC) the records were made at
    open_shift: Shift
    closed_shift: Shift


def _minutes(start: dt.datetime, end: dt.datetime) -> set[str]:
    minutes, at = set(), start.replace(second=0, microsecond=0)
    while at <= end:
        minutes.add(f"{at:%H:%M}")
        at += dt.timedelta(minutes=1)
    return minutes


@pytest.fixture
def started() -> dt.datetime:
    return clock.now() - dt.timedelta(minutes=1)


@pytest.fixture
def world(started, cast, posted, table, verified, settings) -> World:
    """A séance played through the API (tests/api/tour.py), then what it leaves out: the
    register's sign-off, a chain verification, a cercle séance of one deal, and a séance open at
    table 1 with a pack in play and a coup taking stakes (for the pit's pages)."""
    settings.CASINO_NAME = NAME
    play(cast)
    closed = Shift.objects.filter(closed_at__isnull=False).order_by("pk").first()
    today = timezone.localdate()
    (register,) = registers_due(today=today + dt.timedelta(days=1))
    report_render(version=register.version, day=today.isoformat())
    register_sign_off(actor=cast.directeur, day=today)
    chain_verify_and_record()
    # A cercle séance of one deal, closed on its fee box, for the pages of deals and seats.
    cercle = cercle_ready(cast)
    play_act_by_act(cast, cercle, simulated(17))
    close_cercle(cast, cercle)

    shift = open_seance(cast, Table.objects.get(number=1))
    pack = verified()
    pack_open(actor=cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    pack_shuffle(actor=cast.croupier, pack_id=pack.pk)
    pack_shuffle(actor=cast.tailleur, pack_id=pack.pk)
    pack_cut(actor=cast.tailleur, pack_id=pack.pk, cut_by="M. Dupont")
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="3", chance="rouge", amount=2500
    )
    utc = _minutes(started, clock.now() + dt.timedelta(minutes=1))
    local = {f"{timezone.localtime(clock.now()):%H:%M}"}
    assert not utc & local, "the casino's zone must differ from UTC for this test to mean anything"
    return World(cast=cast, utc=utc, open_shift=shift, closed_shift=closed)


def admin_pages(w: World) -> list[str]:
    """Every admin list, one record of each model, and the forms of its acts."""
    urls = ["/admin/", "/admin/password_change/"]
    for model in admin.site._registry:
        opts = model._meta
        first = model.objects.order_by("pk").first()
        assert first is not None, f"no {opts.label} made: the page of one is not seen"
        base = f"/admin/{opts.app_label}/{opts.model_name}/"
        urls += [base, f"{base}{first.pk}/change/"]
    dispute = Dispute.objects.order_by("pk").first()
    report = Report.objects.filter(day__isnull=False).first()
    assert dispute is not None
    assert report is not None
    urls += [
        "/admin/floor/table/create/",
        f"/admin/floor/table/{Table.objects.get(number=1).pk}/configure/",
        "/admin/disputes/dispute/raise/",
        *(f"/admin/disputes/dispute/{d.pk}/decide/" for d in Dispute.objects.all()),
        f"/admin/disputes/dispute/{dispute.pk}/approve/",
        "/admin/auth/user/create/",
        f"/admin/auth/user/{w.cast.croupier.pk}/act/roles/",
        "/admin/police/observation/write/",
        f"/admin/police/observation/{Observation.objects.first().pk}/follow-up/",  # type: ignore[union-attr]
        f"/admin/reports/report/{report.pk}/regenerate/",
        f"/admin/reports/report/{report.pk}/sign_off/",
        f"/admin/shoes/pack/{Pack.objects.first().pk}/verify/",  # type: ignore[union-attr]
        "/admin/shoes/registervisa/sign/",
        f"/admin/audit/anomaly/{Anomaly.objects.first().pk}/review/",  # type: ignore[union-attr]
    ]
    return urls


def pit_pages(w: World) -> list[tuple[Any, str, bool]]:
    """(who, url, a whole page?): each pit page seen by someone it is for."""
    c, number = w.cast, w.open_shift.table.number
    return [
        (c.chef, "/admin/pit/", True),
        (c.chef, f"/admin/pit/seance/open/?table={number}", True),
        (c.chef, "/admin/pit/seance/open/?table=2", True),
        (c.chef, f"/admin/pit/seance/{w.open_shift.pk}/", True),
        (c.chef, f"/admin/pit/seance/{w.closed_shift.pk}/", True),
        (c.tailleur, f"/admin/pit/table/{number}/", True),
        (c.croupier, f"/admin/pit/table/{number}/panel/", False),
        (c.caissier, "/admin/pit/cage/", True),
        (c.commissaire, "/admin/pit/cards/", True),
        *((c.chef, f"/admin/pit/cards/{p.pk}/", True) for p in Pack.objects.all()),
        (c.commissaire, f"/admin/pit/table/{number}/", True),  # refused: said in the frame
    ]


def seen(client: Client, url: str, language: str) -> str:
    response = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code in (200, 403, 404), (url, response.status_code)
    return response.content.decode()


@pytest.mark.parametrize("language", ["fr", "en"])
def test_every_page_is_the_casinos_in_one_language_zone_and_format(world, language):
    clients: dict[int, Client] = {}

    def client(user: Any) -> Client:
        if user.pk not in clients:
            clients[user.pk] = admin_client(user)
        return clients[user.pk]

    visits = [(world.cast.root, url, True) for url in admin_pages(world)]
    visits += pit_pages(world)
    wrong = {}
    for user, url, whole in visits:
        found = problems(
            seen(client(user), url, language), world.utc, whole=whole, language=language
        )
        if found:
            wrong[f"{user.username} {url}"] = found
    anonymous = Client()
    for url in ("/admin/login/", "/account/setup/", "/nowhere/"):
        found = problems(seen(anonymous, url, language), world.utc, whole=True, language=language)
        if found:
            wrong[url] = found
    # Refused and missing pages inside the admin: Django's bare pages replaced by the house's.
    refused = client(world.cast.croupier).get(
        f"/admin/audit/anomaly/{Anomaly.objects.first().pk}/review/",  # type: ignore[union-attr]
        HTTP_ACCEPT_LANGUAGE=language,
    )
    missing = client(world.cast.chef).get("/admin/no-such-page/", HTTP_ACCEPT_LANGUAGE=language)
    assert (refused.status_code, missing.status_code) == (403, 404)
    for name, response in (("403", refused), ("404", missing)):
        found = problems(response.content.decode(), world.utc, whole=True, language=language)
        if found:
            wrong[name] = found
    assert wrong == {}
    assert len(visits) > 50


def test_the_checks_see_what_they_are_for():
    """The page checks above, on pages that break each rule: a check that cannot fail proves
    nothing."""
    good = (
        f'<html lang="fr"><head><title>Coups | {NAME}</title></head><body>'
        f"<p>24/11/2026 21:30</p><footer>{FOOTER['fr']}</footer></body></html>"
    )
    assert problems(good, {"20:30"}, whole=True, language="fr") == []
    for bad, says in (
        (good.replace(NAME, "Administration de Django"), "title"),
        (good.replace("21:30", '{"at": "21:30"}'), "JSON"),
        (good.replace("24/11/2026 21:30", "2026-11-24 21:30"), "ISO date"),
        (good.replace("21:30", "20:30"), "UTC"),
        (good.replace("21:30", "9:30 p.m."), "12-hour"),
        (good.replace(FOOTER["fr"], ""), "footer"),
        (good.replace('lang="fr"', 'lang="en"'), "speaks"),
    ):
        assert any(says in p for p in problems(bad, {"20:30"}, whole=True, language="fr")), says
