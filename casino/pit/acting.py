"""How a page of the séance, the cage or the card room answers one of its forms: the form read,
the one service called through ``perform``, then either the page again (302 to it, the service's
success said in the admin's messages) or the same page rendered with the refusal shown where
the form was, the form keeping what was typed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect

from casino.pit.pages import Done, perform


@dataclass
class Outcome:
    """A form's answer: ``name`` says which form of the page it was, ``form`` is bound (with its
    own errors when it was not valid: then no service was called and ``done`` is None)."""

    name: str
    form: forms.Form
    done: Done | None = None

    @property
    def refused(self) -> Any:
        return self.done.refused if self.done is not None else None


def act(name: str, form: forms.Form, run: Callable[[dict[str, Any]], Any]) -> Outcome:
    """Read ``form`` and, when it is valid, call the service: ``run(cleaned_data)`` is the one
    service call of the act (the form's fields become its arguments)."""
    if not form.is_valid():
        return Outcome(name, form)
    data = form.cleaned_data
    return Outcome(name, form, perform(lambda: run(data)))


def answer(
    request: HttpRequest,
    outcome: Outcome,
    *,
    back: str,
    said: Callable[[Any], str],
    again: Callable[[Outcome], HttpResponse],
) -> HttpResponse:
    """Done: back to the page, with the service's result said. Refused or invalid: the page
    again, showing why, with the form as it was sent."""
    if outcome.done is not None and outcome.done.ok:
        messages.success(request, said(outcome.done.result))
        return HttpResponseRedirect(back)
    return again(outcome)


def bound(outcome: Outcome | None, name: str, blank: forms.Form) -> forms.Form:
    """The page's form ``name``: as sent when it is the one that failed, else ``blank``."""
    if outcome is not None and outcome.name == name:
        return outcome.form
    return blank
