"""What every page of the pit shares: an act performed for the person signed in, its refusal
shown on the page with its reason (the service's own words), and the page's context."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from casino.errors import DomainError


@dataclass(frozen=True)
class Done:
    """What an act left: its result, or the refusal (code, message, and whether the refusal was
    itself recorded as evidence: a late stake, a foreign card)."""

    result: Any = None
    refused: DomainError | None = None

    @property
    def ok(self) -> bool:
        return self.refused is None

    @property
    def recorded(self) -> bool:
        return bool(self.refused is not None and getattr(self.refused, "recorded", False))


def perform(act: Callable[..., Any], **kwargs: Any) -> Done:
    """Run one service as the page's act; a refusal is returned to be shown, never raised."""
    try:
        return Done(result=act(**kwargs))
    except DomainError as refused:
        return Done(refused=refused)


def page(request: HttpRequest, template: str, **context: Any) -> HttpResponse:
    """A pit page inside the admin's frame (its header, language, the person's menu)."""
    return render(request, template, {**admin.site.each_context(request), **context})
