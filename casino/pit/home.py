"""The pit's front page: where each person's work is."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse

from casino.pit.pages import page


def home(request: HttpRequest) -> HttpResponse:
    return page(request, "pit/home.html", title="Salle de jeu")
