"""The cage's acts for patrons who play from an account of the house (at the cercle: Alliance):
the buy-in, money from outside into the patron's account, and the cash-out, back outside. Each is
the cashier's act, a movement in the ledger and an audit event."""

from __future__ import annotations

import re
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from audit.chain import audit_record
from casino.errors import DomainError, NotFound, SegregationViolation
from casino.floor.models import Account, Movement
from casino.floor.registry import every_game
from casino.floor.services import (
    MAX_AMOUNT,
    Entry,
    InvalidMovement,
    balance,
    house_account,
    ledger_post,
)
from casino.people.roles import Role
from casino.people.services import require_role
from casino.shown import money

# A patron's account code: ``patron:`` and 1 to 40 letters, digits, dots, dashes or underscores.
PATRON_CODE = re.compile(r"patron:[\w.-]{1,40}")


class NoPatron(DomainError):
    """Not a patron's account code (``patron:<id>``, 1 to 40 letters, digits, ``.-_``)."""

    code = "no_patron"
    http_status = 400


def patron_code(patron: str) -> str:
    """``ana`` or ``patron:ana`` → ``patron:ana``, checked."""
    code = patron.strip()
    if not code.startswith("patron:"):
        code = f"patron:{code}"
    if not PATRON_CODE.fullmatch(code):
        raise NoPatron(
            _("%(patron)r n'est pas un joueur : patron:<id>, 1 à 40 lettres ou chiffres")
            % {"patron": patron},
            where="patron",
        )
    return code


def require_not_the_houses(code: str, *, act: str) -> None:
    """The house's people do not play at its tables: the cashier would pay himself, a chef de
    partie would sit at the table he runs and arbitrates. What ties a patron to a person of the
    house is the login: a patron's id that is someone's username (any case) is refused."""
    from django.contrib.auth import get_user_model

    if get_user_model().objects.filter(username__iexact=code.removeprefix("patron:")).exists():
        raise SegregationViolation(
            _("%(act)s : %(patron)s est une personne de la maison, qui ne joue pas à ses tables")
            % {"act": act, "patron": code},
            where="patron",
        )


def patron_account(patron: str) -> Account:
    """The patron's account, which exists once he has bought in."""
    code = patron_code(patron)
    try:
        return Account.objects.get(code=code, kind=Account.Kind.PATRON)
    except Account.DoesNotExist:
        raise NotFound(
            _("%(patron)s n'a pas de compte : il change d'abord à la caisse") % {"patron": code},
            where="patron",
        ) from None


def _amount(amount: object) -> int:
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_AMOUNT:
        raise InvalidMovement(
            _("%(amount)r n'est pas un montant (1..%(maximum)s)")
            % {"amount": amount, "maximum": MAX_AMOUNT},
            where="amount",
        )
    return amount


@transaction.atomic
def patron_buy_in(*, actor: Any, patron: str, amount: int, name: str = "") -> Movement:
    """The cashier changes a patron's money: it enters his account (made at his first buy-in)."""
    act = _("changer l'argent d'un joueur")
    require_role(actor, Role.CAISSIER, act=act)
    code = patron_code(patron)
    require_not_the_houses(code, act=act)
    amount = _amount(amount)
    account, _created = Account.objects.get_or_create(
        code=code,
        defaults={"kind": Account.Kind.PATRON, "name": name.strip()[:120] or code[7:]},
    )
    if account.kind != Account.Kind.PATRON:
        raise NoPatron(_("%(code)s n'est pas un compte de joueur") % {"code": code}, where="patron")
    (movement,) = ledger_post(
        actor=actor,
        shift=None,
        entries=[
            Entry(Movement.Kind.BUY_IN, house_account(Account.Kind.OUTSIDE), account, amount, code)
        ],
    )
    audit_record(
        actor=actor,
        action="cage.buy_in",
        subject=account,
        payload={"patron": code, "amount": amount, "movement": movement.pk},
    )
    return movement


@transaction.atomic
def patron_cash_out(*, actor: Any, patron: str, amount: int | None = None) -> Movement:
    """The cashier pays a patron out: his whole balance, or part of it, leaves for outside."""
    require_role(actor, Role.CAISSIER, act=_("payer un joueur à la caisse"))
    account = patron_account(patron)
    Account.objects.select_for_update().get(pk=account.pk)  # one cash-out at a time
    held = balance(account)
    amount = held if amount is None else _amount(amount)
    if not 0 < amount <= held:
        raise InvalidMovement(
            _("%(patron)s a %(held)s sur son compte : on ne lui paie pas %(amount)s")
            % {"patron": account.code, "held": money(held), "amount": money(amount)},
            where="amount",
        )
    for game in every_game():  # a seated player's losses to come are his account's
        game.check_cash_out(account)
    (movement,) = ledger_post(
        actor=actor,
        shift=None,
        entries=[
            Entry(
                Movement.Kind.CASH_OUT,
                account,
                house_account(Account.Kind.OUTSIDE),
                amount,
                account.code,
            )
        ],
    )
    audit_record(
        actor=actor,
        action="cage.cash_out",
        subject=account,
        payload={"patron": account.code, "amount": amount, "movement": movement.pk},
    )
    return movement
