"""Who sits at the cercle table: players take and leave seats between deals, each an act of the
croupier (or the chef de partie) on duty. The seats, in their order round the table, give each
deal its dealing order (RULES.md 3.1): from the seat after the dealer's, the dealer last."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from audit.chain import audit_record
from casino import clock
from casino.errors import Conflict, DomainError, NotFound
from casino.floor.cage import patron_account, patron_code, require_not_the_houses
from casino.floor.models import Account, Duty, Shift
from casino.floor.play.alliance.models import SEATS, CercleSeat, CercleSeatEnd, Deal, DealPhase
from casino.floor.registry import require_game
from casino.floor.services import balance, open_shift_locked, require_on_duty
from casino.people.roles import Role
from casino.people.services import require_role
from casino.shown import money

GAME = "alliance"
CERCLE_STAFF = (Role.CROUPIER, Role.CHEF_DE_PARTIE)
AT_THE_TABLE = (Duty.Post.CROUPIER, Duty.Post.CHEF_DE_PARTIE)


class SeatTaken(Conflict):
    """The seat has a player, or the player a seat (here or at another cercle table)."""

    code = "seat_taken"


class NotSeated(Conflict):
    """The player has no seat at this table (or has left it)."""

    code = "not_seated"


class NoSeat(DomainError):
    """A seat is numbered 1 to 6."""

    code = "no_seat"
    http_status = 400


class NotBoughtIn(DomainError):
    """A player sits with money in his account: he buys in at the cage first."""

    code = "not_bought_in"


class DealInProgress(Conflict):
    """Players sit down and leave between deals, not during one."""

    code = "deal_in_progress"


def seated(shift: Shift) -> list[CercleSeat]:
    """The seats taken now at the séance, in their order round the table."""
    return list(
        CercleSeat.objects.filter(shift=shift, end__isnull=True)
        .select_related("patron")
        .order_by("seat")
    )


def dealing_order(shift: Shift, dealer: str) -> list[str]:
    """The players of the next deal (their accounts' codes) in dealing order: from the seat after
    the dealer's round the table, the dealer last (RULES.md 3.1: the first is the Vorhand)."""
    codes = [s.patron.code for s in seated(shift)]
    if dealer not in codes:
        raise NotSeated(
            _("le donneur %(dealer)s n'est pas assis à %(table)s")
            % {"dealer": dealer, "table": shift.table},
            where="dealer",
        )
    at = codes.index(dealer)
    return codes[at + 1 :] + codes[: at + 1]


def between_deals(shift: Shift, *, act: str) -> None:
    if Deal.objects.filter(shift=shift).exclude(phase=DealPhase.OVER).exists():
        raise DealInProgress(
            _("%(act)s : une donne est en cours à %(table)s ; attendez sa fin")
            % {"act": act, "table": shift.table},
            where="shift",
        )


def cercle_locked(shift_id: int, actor: Any, *, act: str) -> Shift:
    """The séance, locked, at a cercle table, where the actor is on duty at the table."""
    require_role(actor, *CERCLE_STAFF, act=act)
    shift = open_shift_locked(shift_id)
    require_game(shift.table, GAME, act=act)
    require_on_duty(shift, actor, *AT_THE_TABLE, act=act)
    return shift


@transaction.atomic
def seat_take(*, actor: Any, shift_id: int, seat: int, patron: str) -> CercleSeat:
    """A patron who has bought in takes a free seat, between deals."""
    act = _("asseoir un joueur")
    shift = cercle_locked(shift_id, actor, act=act)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= SEATS:
        raise NoSeat(
            _("%(seat)r n'est pas une place (1 à %(seats)s)") % {"seat": seat, "seats": SEATS},
            where="seat",
        )
    between_deals(shift, act=act)
    require_not_the_houses(patron_code(patron), act=act)
    account = patron_account(patron)
    # Each act locks its own séance: at two tables at once both would find the patron seated
    # nowhere. Locking his account (after the séance; ``no_key``: movements posted to it do not
    # wait) makes the second wait for the first, then see its seat.
    Account.objects.select_for_update(no_key=True).get(pk=account.pk)
    taken = CercleSeat.objects.filter(end__isnull=True, shift__closed_at__isnull=True)
    here = taken.filter(shift=shift, seat=seat).select_related("patron").first()
    if here is not None:
        raise SeatTaken(
            _("la place %(seat)s est prise par %(patron)s")
            % {"seat": seat, "patron": here.patron.code},
            where="seat",
        )
    elsewhere = taken.filter(patron=account).select_related("shift__table").first()
    if elsewhere is not None:
        raise SeatTaken(
            _("%(patron)s est déjà assis à la place %(seat)s de %(table)s")
            % {"patron": account.code, "seat": elsewhere.seat, "table": elsewhere.shift.table},
            where="patron",
        )
    held = balance(account)
    if held <= 0:
        raise NotBoughtIn(
            _("%(patron)s a %(held)s sur son compte : il change d'abord à la caisse")
            % {"patron": account.code, "held": money(held)},
            where="patron",
        )
    seating = CercleSeat.objects.create(
        shift=shift, seat=seat, patron=account, at=clock.now(), by=actor
    )
    audit_record(
        actor=actor,
        action="cercle.seat_taken",
        subject=shift,
        payload={"seat": seat, "patron": account.code, "balance": held, "seating": seating.pk},
    )
    return seating


def _seat_end(seating: CercleSeat, actor: Any, reason: str) -> CercleSeatEnd:
    end = CercleSeatEnd.objects.create(seating=seating, at=clock.now(), by=actor, reason=reason)
    audit_record(
        actor=actor,
        action="cercle.seat_left",
        subject=seating.shift,
        payload={"seat": seating.seat, "patron": seating.patron.code, "reason": reason},
    )
    return end


@transaction.atomic
def seat_leave(*, actor: Any, shift_id: int, patron: str, reason: str = "") -> CercleSeatEnd:
    """A player leaves his seat, between deals."""
    act = _("lever un joueur")
    shift = cercle_locked(shift_id, actor, act=act)
    between_deals(shift, act=act)
    account = patron_account(patron)
    seating = (
        CercleSeat.objects.filter(shift=shift, patron=account, end__isnull=True)
        .select_related("patron", "shift")
        .first()
    )
    if seating is None:
        raise NotSeated(
            _("%(patron)s n'est pas assis à %(table)s")
            % {"patron": account.code, "table": shift.table},
            where="patron",
        )
    return _seat_end(seating, actor, reason.strip()[:60] or "left")


@transaction.atomic
def seating_leave(*, actor: Any, seating_id: int, reason: str = "") -> CercleSeatEnd:
    """The player of the seat a terminal shows (``seating_id``) leaves it, between deals."""
    found = seating(seating_id)
    end = seat_leave(actor=actor, shift_id=found.shift_id, patron=found.patron.code, reason=reason)
    if end.seating_id != found.pk:  # he left that seat before and sits at another now
        raise NotSeated(
            _("%(patron)s a déjà quitté la place %(seat)s")
            % {"patron": found.patron.code, "seat": found.seat},
            where="seat",
        )
    return end


def seats_end(shift: Shift, actor: Any) -> None:
    """The séance closes: everyone still seated leaves (the floor's close asks the game)."""
    for seating in seated(shift):
        _seat_end(seating, actor, "séance closed")


def seating(pk: int) -> CercleSeat:
    try:
        return CercleSeat.objects.select_related("patron").get(pk=pk)
    except CercleSeat.DoesNotExist:
        raise NotFound(_("la place %(seat)s n'existe pas") % {"seat": pk}, where="seat") from None
