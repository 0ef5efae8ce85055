"""The cercle table page's acts (issue 15, item 5): the page of an Alliance table, served at the
same URL as the banking games' (casino/pit/table.py dispatches by the table's game) and answered
the same way: each act one POST through the service the API calls (casino/floor/play/alliance/
``seats.py`` and ``deals.py``), the panel re-rendered with what was done or refused in the
service's own words. Reading the forms is the view's job; every rule is the service's: who is on
duty, who may sit, who cuts, whose call or card it is, what the auction, the contract and the
play allow (the engine's)."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpRequest
from django.utils.translation import gettext as _

from casino.floor.models import Shift
from casino.floor.play.alliance import deals, seats
from casino.floor.play.alliance.words import call_word, game_word, suit_word
from casino.pit.alliance_view import player_name
from casino.pit.pages import Done, perform
from casino.pit.table import Words, act, card_label, read_number

CODES = re.compile(r"[\s,;]+")


def read_codes(text: str) -> list[str]:
    """Card codes as the croupier types them, separated by spaces, commas or new lines."""
    return [code for code in CODES.split(text or "") if code]


# --- the seats -------------------------------------------------------------------------------


@act
def seat_take(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        seats.seat_take,
        actor=request.user,
        shift_id=shift.pk,
        seat=read_number(request, "seat"),
        patron=request.POST.get("patron", ""),
    )
    return (
        done,
        lambda seating: (
            _("%(player)s s'assied à la place %(seat)s")
            % {"player": player_name(seating.patron.code), "seat": seating.seat}
        ),
    )


@act
def seat_leave(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        seats.seat_leave,
        actor=request.user,
        shift_id=shift.pk,
        patron=request.POST.get("patron", ""),
        reason=request.POST.get("reason", ""),
    )
    return (
        done,
        lambda end: (
            _("%(player)s quitte la place %(seat)s")
            % {"player": player_name(end.seating.patron.code), "seat": end.seating.seat}
        ),
    )


# --- the deal --------------------------------------------------------------------------------


@act
def deal_open(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        deals.deal_open,
        actor=request.user,
        shift_id=shift.pk,
        dealer=request.POST.get("dealer", ""),
        cut_by=request.POST.get("cut_by", ""),
    )
    return (
        done,
        lambda deal: (
            _("Donne n° %(number)s : %(dealer)s a mêlé, %(cutter)s a coupé ; entrez les cartes")
            % {
                "number": deal.number,
                "dealer": player_name(deal.dealer),
                "cutter": player_name(deal.cut_by),
            }
        ),
    )


@act
def deal_cards(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    """The hands as the croupier reads them, one field per player, and the table cards."""
    hands = {
        key.removeprefix("hand:"): read_codes(value)
        for key, value in request.POST.items()
        if key.startswith("hand:")
    }
    table = {
        "up": request.POST.get("table_up", "").strip(),
        "down": read_codes(request.POST.get("table_down", "")),
    }
    done = perform(
        deals.deal_cards,
        actor=request.user,
        deal_id=read_number(request, "deal"),
        hands=hands,
        table=table,
    )

    def text(state: Any) -> str:
        assert state.couleur is not None
        return _("Cartes enregistrées ; couleur : %(suit)s ; à %(player)s d'annoncer") % {
            "suit": suit_word(state.couleur.value),
            "player": player_name(state.next_caller),
        }

    return done, text


@act
def deal_call(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    call = request.POST.get("call", "")
    done = perform(
        deals.deal_call,
        actor=request.user,
        deal_id=read_number(request, "deal"),
        player=request.POST.get("player", ""),
        call=call,
    )

    def text(called: Any) -> str:
        said = _("%(player)s : %(call)s") % {
            "player": player_name(called.caller),
            "call": call_word(called.call.value),
        }
        if called.ended:
            return said + _(" ; enchères finies : %(player)s joue %(game)s") % {
                "player": player_name(called.declarer),
                "game": game_word(called.game.value, forced=called.forced),
            }
        return said + _(" ; à %(player)s") % {"player": player_name(called.next_caller)}

    return done, text


def read_contract(request: HttpRequest) -> dict[str, Any]:
    """The contract as REPLAY.md writes it, from the fields the form of the declarer's game
    sent: an alliance's trumps and called card, a lever's turn, take, discards and called card,
    a solo's trumps and résistance. Which keys a game takes, and what they may say, is the
    service's to judge."""
    data = request.POST
    contract: dict[str, Any] = {}
    if "trumps" in data:
        contract["trumps"] = data["trumps"]
    if "turn" in data:
        contract["turn"] = read_number(request, "turn")
        contract["take"] = data.get("take") == "on"
        discard = data.getlist("discard")
        if contract["take"] or discard:
            contract["discard"] = discard
    if "called" in data:
        contract["called"] = data["called"]
    if "resistance" in data:
        contract["resistance"] = data["resistance"] or None
    return contract


@act
def deal_declare(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        deals.deal_declare,
        actor=request.user,
        deal_id=read_number(request, "deal"),
        contract=read_contract(request),
    )

    def text(contract: Any) -> str:
        words = [_("Contrat enregistré")]
        trumps = getattr(contract, "trumps", None)
        if trumps is not None:
            words.append(_("atout : %(suit)s") % {"suit": suit_word(trumps.value)})
        called = getattr(contract, "called", None)
        if called is not None:
            words.append(_("appelle %(card)s") % {"card": card_label(str(called))})
        return " ; ".join(words)

    return done, text


@act
def deal_play(request: HttpRequest, shift: Shift) -> tuple[Done, Words]:
    done = perform(
        deals.deal_play,
        actor=request.user,
        deal_id=read_number(request, "deal"),
        player=request.POST.get("player", ""),
        code=request.POST.get("code", "").strip(),
    )

    def text(played: Any) -> str:
        said = _("%(player)s joue %(card)s") % {
            "player": player_name(played.player),
            "card": card_label(str(played.card)),
        }
        if played.trick is not None:
            said += _(" ; pli n° %(number)s à %(winner)s") % {
                "number": played.trick.number,
                "winner": player_name(played.trick.winner),
            }
        if played.outcome is not None:
            winners = played.outcome.winners
            said += _(" ; donne réglée : %(winners)s") % {
                "winners": ", ".join(player_name(p) for p in winners)
                if winners
                else _("personne ne gagne")
            }
        return said

    return done, text
