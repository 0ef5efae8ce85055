"""The table page (issue 12, item 1): where the tailleur and the croupiers on duty play the coups,
and the chef de partie on duty follows them.

One page per table in séance, shown only to staff on duty there. Each act is one POST through the
same service as the API (``casino/floor/coups.py``, ``shoes/services.py``) and answers the panel
re-rendered (htmx swaps it in) with what was done or refused, in the service's own words. The
panel is polled, so each person's page follows the others' acts; a poll that finds nothing new
gets 204 and swaps nothing. Reading the forms is the view's job (an amount typed as ``25,50``);
every rule is the service's.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from casino.errors import DomainError, NotFound, WrongGame
from casino.floor import coups
from casino.floor.models import Duty, Shift, Table
from casino.floor.services import NotOnDuty, require_on_duty
from casino.games.cards import card
from casino.games.errors import GameError
from casino.pit.alliance_view import alliance_view
from casino.pit.pages import Done, page, perform
from casino.pit.pharao_view import RANKS, pharao_view, rank_label
from casino.pit.table_view import (
    CHANCE_WORDS,
    PICKER,
    face,
    holder_name,
    money,
    staff_on_duty,
    table_view,
)
from shoes.services import cards_pass

# Who sees the page: the staff on duty at the table, and the chef de partie on duty there.
POSTS = (Duty.Post.TAILLEUR, Duty.Post.CROUPIER, Duty.Post.CHEF_DE_PARTIE)


class Unreadable(DomainError):
    """A field of the page that cannot be read as what it asks for (an amount, a number)."""

    code = "invalid"
    http_status = 400


@dataclass(frozen=True)
class Said:
    """The answer to the last act, shown above the table: done, refused, or refused and recorded
    as evidence (a late stake, a foreign card)."""

    kind: str  # "done", "refused", "recorded" (refused, and the refusal kept), "anomaly" (done,
    # and found wrong: a count that does not reconcile)
    text: str
    code: str = ""
    where: str | None = None


Words = Callable[[Any], "str | Said"]


def _said(done: Done, words: Words) -> Said:
    if done.refused is None:
        said = words(done.result)
        return said if isinstance(said, Said) else Said("done", said)
    refused = done.refused
    return Said(
        "recorded" if done.recorded else "refused", refused.message, refused.code, refused.where
    )


def _on_duty_here(request: HttpRequest, number: int) -> Shift:
    """The séance open at table ``number``, if the person is on duty there; else the refusal."""
    table = Table.objects.filter(number=number).first()
    if table is None:
        raise NotFound(_("la table %(table)s n'existe pas") % {"table": number}, where="table")
    act = _("ouvrir la page de la table")
    if str(table.game) not in PAGES:
        raise WrongGame(
            _("%(act)s : la table %(table)s joue %(game)s, qui n'a pas encore de page de table")
            % {"act": act, "table": number, "game": table.get_game_display()},
            where="table",
        )
    shift = (
        Shift.objects.select_related("table", "reglement")
        .filter(table=table, closed_at__isnull=True)
        .first()
    )
    if shift is None:
        raise NotOnDuty(
            _("%(act)s : aucune séance n'est ouverte à cette table") % {"act": act}, where="actor"
        )
    require_on_duty(shift, request.user, *POSTS, act=act)
    return shift


def _is_htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


def new_ref() -> str:
    """The page's own reference of the next stake (unique in its coup, as the API's ``ref``): a
    form sent twice is refused the second time instead of placing the stake twice."""
    return f"p-{secrets.token_hex(4)}"


@dataclass(frozen=True)
class GamePage:
    """One game's table page: its whole page, its panel, and what they show (its view)."""

    page: str
    panel: str
    read: Callable[[Shift], Any]
    card: str  # the URL name its cards are laid at


# The page of a table is its game's: the same URL, the same frame, the same acts' machinery.
PAGES = {
    "trente-et-quarante": GamePage(
        "pit/table/page.html", "pit/table/panel.html", table_view, "admin:pit-table-card"
    ),
    "pharao": GamePage(
        "pit/pharao/page.html", "pit/pharao/panel.html", pharao_view, "admin:pit-pharao-card"
    ),
    "alliance": GamePage(
        "pit/alliance/page.html", "pit/alliance/panel.html", alliance_view, "admin:pit-cercle-play"
    ),
}


def _game_page(shift: Shift) -> GamePage:
    return PAGES[str(shift.table.game)]


def _posts(request: HttpRequest, shift: Shift) -> list[str]:
    return list(
        Duty.objects.filter(shift=shift, person=request.user, end__isnull=True).values_list(
            "post", flat=True
        )
    )


def _panel_body(request: HttpRequest, shift: Shift, view: Any = None) -> tuple[str, str]:
    """The panel as rendered, and its fingerprint (a poll that finds it unchanged gets nothing
    to swap)."""
    game = _game_page(shift)
    body = render_to_string(
        game.panel,
        {
            "view": view or game.read(shift),
            "number": shift.table.number,
            # The person's posts here: the panel offers each the acts of his post (the banker's
            # approval to the chef de partie); the services refuse the others all the same.
            "posts": _posts(request, shift),
        },
        request=request,
    )
    digest = hashlib.sha256(body.encode()).hexdigest()[:16]
    # Rendered by the template engine, which escaped what it was given: safe to put in the page.
    return mark_safe(body.replace("__DIGEST__", digest, 1)), digest


def _refusal(request: HttpRequest, number: int, refused: DomainError) -> HttpResponse:
    """The page refused: a whole page for a person who opens it, the panel's place for an act."""
    said = Said("refused", refused.message, refused.code, refused.where)
    if _is_htmx(request):
        return HttpResponse(
            render_to_string(
                "pit/table/refused_panel.html", {"said": said, "number": number}, request=request
            ),
            status=refused.http_status,
        )
    response = page(
        request,
        "pit/table/refused.html",
        title=_("Table %(table)s") % {"table": number},
        said=said,
        number=number,
    )
    response.status_code = refused.http_status
    return response


@require_GET
def table(request: HttpRequest, number: int) -> HttpResponse:
    """The table page, whole."""
    try:
        shift = _on_duty_here(request, number)
    except DomainError as refused:
        return _refusal(request, number, refused)
    game = _game_page(shift)
    view = game.read(shift)
    view.staff = staff_on_duty(shift)
    body, _digest = _panel_body(request, shift, view)
    return page(
        request,
        game.page,
        title=_("Table %(table)s") % {"table": number},
        # The table needs the width; the admin's menu stays a click away.
        is_nav_sidebar_enabled=False,
        number=number,
        view=view,
        panel=body,
        picker=PICKER,
        ref=new_ref(),
        # The person's post here, for where the keyboard goes first (table.js).
        posts=" ".join(_posts(request, shift)),
        card_url=reverse(game.card, args=[number]),
        game_class=str(shift.table.game),
        chances=list(CHANCE_WORDS.items()),
        ranks=[(r.value, rank_label(r.value)) for r in RANKS],
    )


@require_GET
def panel(request: HttpRequest, number: int) -> HttpResponse:
    """The panel alone, for the poll: 204 when it is as the page last saw it."""
    try:
        shift = _on_duty_here(request, number)
    except DomainError as refused:
        return _refusal(request, number, refused)
    body, digest = _panel_body(request, shift)
    if request.GET.get("seen") == digest:
        return HttpResponse(status=204)
    return HttpResponse(body)


def act(do: Callable[..., tuple[Done, Words]]) -> Callable[..., HttpResponse]:
    """One act of the page: the person must be on duty at the table; ``do(request, shift, …)``
    performs the service and says how to word what was done. The answer is the panel with what
    was said (htmx), or, without htmx, the page again with the same words."""

    @require_POST
    @wraps(do)
    def view(request: HttpRequest, number: int, **kwargs: Any) -> HttpResponse:
        try:
            shift = _on_duty_here(request, number)
        except DomainError as refused:
            return _refusal(request, number, refused)
        try:
            done, text = do(request, shift, **kwargs)
        except Unreadable as unreadable:
            done, text = Done(refused=unreadable), str
        said = _said(done, text)
        status = done.refused.http_status if done.refused is not None else 200
        if not _is_htmx(request):
            level = {"done": messages.SUCCESS, "refused": messages.ERROR}.get(
                said.kind, messages.WARNING
            )
            messages.add_message(request, level, said.text)
            return HttpResponseRedirect(reverse("admin:pit-table", args=[number]), status=303)
        body, _digest = _panel_body(request, shift)
        oob = render_to_string(
            "pit/table/said.html",
            {"said": said, "oob": True, "ref": new_ref() if done.refused is None else None},
            request=request,
        )
        return HttpResponse(body + oob, status=status)

    return view


# --- reading the forms ------------------------------------------------------------------------

AMOUNT = re.compile(r"^(\d{1,12})(?:[.,](\d{1,2}))?$")


def read_amount(text: str) -> int:
    """An amount as the croupier types it (``25``, ``25,5``, ``1 234,50``), in minor units."""
    found = AMOUNT.match(re.sub(r"[\s\u00a0\u202f]", "", text or ""))
    if found is None:
        raise Unreadable(
            _("%(amount)r n'est pas un montant (par exemple 25 ou 25,50)") % {"amount": text},
            where="amount",
        )
    units, cents = found.groups()
    return int(units) * 100 + int((cents or "0").ljust(2, "0"))


def read_number(request: HttpRequest, name: str) -> int:
    value = request.POST.get(name, "")
    if not value.isdigit():
        raise Unreadable(
            _("%(field)s : %(value)r n'est pas un numéro") % {"field": name, "value": value},
            where=name,
        )
    return int(value)


def read_holder(request: HttpRequest) -> str:
    """A seat (its number or name at the table) or a patron (``patron:<card number>``), as the
    service names a stake's holder."""
    holder = request.POST.get("holder", "").strip()
    if request.POST.get("holder_kind") == "patron" and holder:
        return f"patron:{holder}"
    return holder


# --- the acts ---------------------------------------------------------------------------------


@act
def coup_open(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(coups.coup_open, actor=request.user, shift_id=shift.pk)
    return (
        done,
        lambda coup: _("Coup n° %(number)s : messieurs, faites vos jeux") % {"number": coup.number},
    )


@act
def stake_place(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    amount = read_amount(request.POST.get("amount", ""))
    chance = request.POST.get("chance", "")
    done = perform(
        coups.stake_place,
        actor=request.user,
        coup_id=read_number(request, "coup"),
        ref=request.POST.get("ref", "") or new_ref(),
        holder=read_holder(request),
        chance=chance,
        amount=amount,
        insured=request.POST.get("insured") == "on",
        on_refait=request.POST.get("on_refait", "") or None,
    )

    def text(stake: Any) -> str:
        return _("Mise posée : %(holder)s, %(chance)s, %(amount)s") % {
            "holder": holder_name(stake.holder),
            "chance": CHANCE_WORDS[stake.chance],
            "amount": money(stake.amount),
        }

    return done, text


@act
def stake_withdraw(request: HttpRequest, shift: Shift, stake_id: int) -> tuple[Done, Words]:
    done = perform(coups.stake_withdraw, actor=request.user, stake_id=stake_id)
    return (
        done,
        lambda withdrawal: (
            _("Mise retirée : %(amount)s rendus") % {"amount": money(withdrawal.stake.amount)}
        ),
    )


@act
def close_betting(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        coups.coup_close_betting, actor=request.user, coup_id=read_number(request, "coup")
    )
    return (
        done,
        lambda coup: (
            _("Le jeu est fait : rien ne va plus sur le coup n° %(number)s")
            % {"number": coup.number}
        ),
    )


@act
def card_lay(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    code = request.POST.get("code", "").strip()
    done = perform(
        coups.coup_lay_card, actor=request.user, coup_id=read_number(request, "coup"), code=code
    )

    def text(laid: Any) -> str:
        said = _("%(card)s en %(row)s : %(total)s") % {
            "card": card_label(code),
            "row": CHANCE_WORDS[laid.row],
            "total": laid.row_total,
        }
        if laid.coup_complete:
            said += _(" ; rangées complètes : annoncez, puis réglez")
        elif laid.row_closed:
            said += _(" ; rangée fermée")
        return said

    return done, text


def card_label(code: str) -> str:
    try:
        return face(str(card(code))).label
    except GameError:
        return code


@act
def settle(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        coups.coup_settle,
        actor=request.user,
        coup_id=read_number(request, "coup"),
        spoken=request.POST.get("spoken", "").strip(),
        cut_card=request.POST.get("cut_card") == "1",
    )

    def text(result: Any) -> str:
        said = _("Coup n° %(number)s réglé : %(result)s") % {
            "number": result.coup.number,
            "result": result.announcement["result"] or _("coup nul"),
        }
        if result.void:
            said += _(" (coup nul : les mises sont rendues)")
        if result.last:
            said += _(" — les cartes passent : enregistrez les cartes restantes")
        return said

    return done, text


@act
def pass_cards(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    undealt = [code for code in re.split(r"[\s,;]+", request.POST.get("undealt", "")) if code]
    done = perform(
        cards_pass,
        actor=request.user,
        pack_id=read_number(request, "pack"),
        undealt=undealt,
        method=request.POST.get("method", "counted"),
    )

    def text(talon: Any) -> str | Said:
        said = _("Les cartes passent : %(counted)s cartes restantes enregistrées") % {
            "counted": len(talon.cards)
        }
        if not (talon.missing or talon.extra):
            return said
        # Recorded as counted, with the anomalies naming the cards: evidence, shown as such.
        said += _(" ; le compte ne concorde pas (manquent : %(missing)s ; en trop : %(extra)s)") % {
            "missing": ", ".join(f"{c} ×{n}" for c, n in talon.missing.items()) or "–",
            "extra": ", ".join(f"{c} ×{n}" for c, n in talon.extra.items()) or "–",
        }
        return Said("anomaly", said, "missing_card" if talon.missing else "extra_card")

    return done, text


@act
def cancel(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        coups.coup_cancel,
        actor=request.user,
        coup_id=read_number(request, "coup"),
        reason=request.POST.get("reason", ""),
    )
    return (
        done,
        lambda cancellation: (
            _("Coup n° %(number)s annulé : les mises sont rendues")
            % {"number": cancellation.coup.number}
        ),
    )
