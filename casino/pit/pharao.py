"""The Pharao table page's acts (issue 13, item 6): the Trente-et-Quarante page's sibling, served at
the same URL for a Pharao table (casino/pit/table.py dispatches by the table's game) and answered
the same way: each act one POST through the service the API calls
(casino/floor/play/pharao/tailles.py), the panel re-rendered with what was done or refused in the
service's own words. Reading the forms is the view's job; every rule is the service's: who is on
duty, which post may do what, a late stake, a false paroli, the banker's approval."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _

from casino.floor.models import Shift
from casino.floor.play.pharao import tailles
from casino.floor.play.pharao.words import mark_word
from casino.pit.pages import Done, perform
from casino.pit.pharao_view import APPROVAL_WORDS, rank_label
from casino.pit.table import (
    Unreadable,
    Words,
    act,
    card_label,
    new_ref,
    read_amount,
    read_holder,
    read_number,
)
from casino.pit.table_view import holder_name
from casino.shown import money

# The acts on a standing stake, by the name in the page's URL: the service, and whether the
# croupier types an amount with it.
STAKE_ACTS = {
    "raise": (tailles.pharao_stake_raise, True),
    "reduce": (tailles.pharao_stake_reduce, True),
    "withdraw": (tailles.pharao_stake_withdraw, False),
    "collect": (tailles.pharao_stake_collect, False),
}


@act
def taille_open(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        tailles.taille_open,
        actor=request.user,
        shift_id=shift.pk,
        bottom_card=request.POST.get("bottom_card", "").strip(),
    )
    return (
        done,
        lambda taille: (
            _("Taille n° %(number)s : la carte du dessous, %(card)s, est montrée ; faites vos jeux")
            % {"number": taille.number, "card": card_label(taille.bottom_card)}
        ),
    )


@act
def stake_place(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    amount = read_amount(request.POST.get("amount", ""))
    done = perform(
        tailles.pharao_stake_place,
        actor=request.user,
        taille_id=read_number(request, "taille"),
        ref=request.POST.get("ref", "") or new_ref(),
        holder=read_holder(request),
        rank=request.POST.get("rank", ""),
        amount=amount,
    )
    return (
        done,
        lambda stake: (
            _("Mise posée : %(holder)s, sur le %(rank)s, %(amount)s")
            % {
                "holder": holder_name(stake.holder),
                "rank": rank_label(stake.rank),
                "amount": money(stake.amount),
            }
        ),
    )


def _acted(record: Any) -> str:
    """What an act on a stake did, as the croupier says it."""
    stake = record.stake
    words = {
        "raise": _("Mise %(ref)s augmentée de %(amount)s"),
        "reduce": _("Mise %(ref)s réduite de %(amount)s, rendus"),
        "withdraw": _("Mise %(ref)s retirée : %(returned)s rendus"),
        "collect": _("Gain de la mise %(ref)s retiré : %(returned)s rendus"),
        "paroli": _("Mise %(ref)s marquée : %(mark)s"),
        "appe": _("Mise %(ref)s marquée : %(mark)s"),
    }
    return words[record.act] % {
        "ref": f"{holder_name(stake.holder)}, {rank_label(stake.rank)}",
        "amount": money(record.amount or 0),
        "returned": money(record.returned),
        "mark": mark_word(record.mark),
    }


@act
def stake_act(request: HttpRequest, shift: Shift, stake_id: int, name: str) -> tuple[Done, Words]:
    if name in ("paroli", "appe"):
        done = perform(tailles.pharao_stake_mark, actor=request.user, stake_id=stake_id, move=name)
        return done, _acted
    if name not in STAKE_ACTS:
        raise Unreadable(_("%(act)r n'est pas un acte sur une mise") % {"act": name}, where="act")
    service, with_amount = STAKE_ACTS[name]
    extra = {"amount": read_amount(request.POST.get("amount", ""))} if with_amount else {}
    return perform(service, actor=request.user, stake_id=stake_id, **extra), _acted


@act
def approve(request: HttpRequest, shift: Shift, stake_id: int) -> tuple[Done, Words]:
    what = request.POST.get("act", "")
    amount = read_amount(request.POST.get("amount", "")) if what == "reduce" else None
    # ``perform`` names its own first argument ``act``: the service's ``act`` goes in a closure.
    done = perform(
        lambda: tailles.pharao_approval_give(
            actor=request.user, stake_id=stake_id, act=what, amount=amount
        )
    )
    return (
        done,
        lambda approval: (
            _("Approuvé par le banquier : %(what)s de la mise %(ref)s, avant le tirage %(draw)s")
            % {
                "what": APPROVAL_WORDS[approval.act] % {"amount": money(approval.amount or 0)},
                "ref": f"{holder_name(approval.stake.holder)}, {rank_label(approval.stake.rank)}",
                "draw": approval.draw,
            }
        ),
    )


@act
def card_lay(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    code = request.POST.get("code", "").strip()
    done = perform(
        tailles.taille_lay_card,
        actor=request.user,
        taille_id=read_number(request, "taille"),
        code=code,
    )

    def text(laid: Any) -> str:
        if laid.settled is None:
            return _("Tirage %(draw)s : %(card)s à gauche, pour la banque") % {
                "draw": laid.draw,
                "card": card_label(code),
            }
        said = _("Tirage %(draw)s : %(card)s à droite, pour les joueurs ; réglé") % {
            "draw": laid.draw,
            "card": card_label(code),
        }
        if laid.settled.plie:
            said += _(" ; plié : la banque prend sa part des mises sur le %(rank)s") % {
                "rank": rank_label(laid.settled.bank.rank.value)
            }
        if laid.end is not None:
            said += _(" ; la taille est finie, les mises restantes sont rendues")
        return said

    return done, text
