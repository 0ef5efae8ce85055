"""The house's "at most one" rules, held by PostgreSQL, and how a violation reaches the person.

Each rule is a constraint or a trigger of the database (docs/uniqueness.md lists them with their
reasons), so two concurrent acts can never both pass, whatever the services check before. The
services still check first and refuse with a message of their own; when two acts race past that
check, the database refuses the second, and this module turns its error into the same refusal:
a ``Conflict`` (409 in the API, a message on the admin's form) naming the rule.

The translation sits on every database connection (an execute wrapper, installed when Django
opens the connection), so the API, the admin, the simulator and the management commands all get
it without each catching ``IntegrityError``. Only the rules listed here are translated; any other
integrity error stays what it is (a bug to see, not a refusal to explain).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.errors import Conflict


@dataclass(frozen=True)
class Rule:
    where: str
    # What the person reads, French in the code (STYLE.md 12). A trigger's refusal gives its facts
    # (who, which table) as JSON in the error's DETAIL; the template names them.
    message: Promise


RULES: dict[str, Rule] = {
    # The floor (casino/floor/models.py). The first three: trigger at_most_one_duty.
    "one_duty_per_person": Rule(
        "person", gettext_lazy("%(person)s est déjà de service à la table %(table)s")
    ),
    "one_post_holder_per_seance": Rule(
        "post",
        gettext_lazy("la séance %(shift)s a déjà son %(post)s de service : le relever d'abord"),
    ),
    "no_duty_in_a_closed_seance": Rule(
        "shift", gettext_lazy("la séance %(shift)s est close : personne n'y prend son service")
    ),
    "one_open_shift_per_table": Rule("table", gettext_lazy("la table a déjà une séance ouverte")),
    "floor_shift_opening_count_id_key": Rule(
        "count", gettext_lazy("ce comptage a déjà ouvert une séance")
    ),
    "one_coup_in_progress_per_seance": Rule(
        "shift", gettext_lazy("un coup est déjà en cours à la table")
    ),
    "one_coup_number_per_taille": Rule(
        "coup", gettext_lazy("ce numéro de coup est déjà pris dans la taille")
    ),
    "one_stake_per_ref": Rule("ref", gettext_lazy("le coup a déjà une mise de cette référence")),
    "one_settlement_per_stake": Rule("coup", gettext_lazy("la mise est déjà réglée dans ce coup")),
    "floor_coupresult_coup_id_key": Rule("coup", gettext_lazy("le coup est déjà réglé")),
    "floor_coupcancellation_coup_id_key": Rule("coup", gettext_lazy("le coup est déjà annulé")),
    "floor_stakewithdrawal_stake_id_key": Rule("stake", gettext_lazy("la mise est déjà retirée")),
    "floor_dutyend_duty_id_key": Rule("duty", gettext_lazy("ce service a déjà pris fin")),
    "floor_countsignature_count_id_key": Rule(
        "count", gettext_lazy("le comptage est déjà contresigné")
    ),
    "floor_transfersignature_transfer_id_key": Rule(
        "transfer", gettext_lazy("le transfert est déjà signé")
    ),
    "floor_movement_idempotency_key_key": Rule(
        "idempotency_key", gettext_lazy("ce mouvement est déjà passé")
    ),
    "floor_table_number_key": Rule("number", gettext_lazy("une table porte déjà ce numéro")),
    "one_version_number_per_reglement": Rule(
        "name", gettext_lazy("cette version du règlement est déjà affichée")
    ),
    # Sealed packs (shoes/models.py). The first: trigger one_pack_in_use_per_table.
    "one_pack_in_use_per_table": Rule(
        "shift", gettext_lazy("la table a déjà le jeu %(seal)s en service")
    ),
    "one_opening_per_pack": Rule("pack", gettext_lazy("le jeu a déjà été ouvert")),
    "one_card_per_place": Rule(
        "card", gettext_lazy("une autre carte a été posée à cette place du jeu")
    ),
    "shoes_pack_seal_number_key": Rule(
        "seal_number", gettext_lazy("ce numéro de scellé est déjà au registre")
    ),
    "shoes_registervisa_day_key": Rule(
        "day", gettext_lazy("la page du registre de ce jour porte déjà un visa")
    ),
    "shoes_reconciliation_pack_id_key": Rule("pack", gettext_lazy("le jeu a déjà été recompté")),
    # Reports, disputes, the police register.
    "one_shift_report_version": Rule(
        "version", gettext_lazy("cette version du rapport est déjà demandée")
    ),
    "one_register_version": Rule(
        "version", gettext_lazy("cette version du registre est déjà demandée")
    ),
    "one_signoff_per_capacity": Rule("actor", gettext_lazy("cette qualité a déjà visé la journée")),
    "two_different_people": Rule("actor", gettext_lazy("cette personne a déjà visé la journée")),
    "one_decision_per_attempt": Rule("dispute", gettext_lazy("la contestation est déjà décidée")),
    "disputes_decisionapproval_decision_id_key": Rule(
        "dispute", gettext_lazy("la décision est déjà approuvée")
    ),
    "police_followup_observation_id_key": Rule(
        "observation", gettext_lazy("la suite est déjà enregistrée")
    ),
}


class RuleViolated(Conflict, IntegrityError):
    """The database refused an act that another one, a moment before, made impossible: one of
    the house's "at most one" rules (``RULES``). Still an ``IntegrityError`` for code that
    catches those; a ``Conflict`` (409) for the person."""

    def __init__(self, rule: str, message: str, where: str) -> None:
        super().__init__(message, where=where)
        self.rule = rule


def _facts(detail: str | None) -> dict[str, Any]:
    """What a trigger says about its refusal (JSON in DETAIL); nothing for an index's."""
    try:
        facts = json.loads(detail or "")
    except ValueError:
        return {}
    return facts if isinstance(facts, dict) else {}


def violation(error: IntegrityError) -> RuleViolated | None:
    """The rule ``error`` breaks, as a refusal in the active language; None when it is no rule
    of ``RULES``."""
    diag = getattr(error.__cause__, "diag", None)
    name = getattr(diag, "constraint_name", None) or ""
    rule = RULES.get(name)
    if rule is None:
        return None
    try:
        text = rule.message % _facts(getattr(diag, "message_detail", None))
    except (KeyError, TypeError, ValueError):  # a trigger that said less: its own words
        text = getattr(diag, "message_primary", None) or str(error)
    message = _("%(message)s (règle %(rule)s de la base de données)") % {
        "message": text,
        "rule": name,
    }
    return RuleViolated(name, message, rule.where)


def translate_violations(
    execute: Callable[..., Any], sql: str, params: Any, many: bool, context: dict[str, Any]
) -> Any:
    try:
        return execute(sql, params, many, context)
    except RuleViolated:
        raise
    except IntegrityError as error:
        refused = violation(error)
        if refused is None:
            raise
        raise refused from error


def install(sender: Any, connection: BaseDatabaseWrapper, **kwargs: Any) -> None:
    """On ``connection_created``: translate on this connection from now on (once). First in the
    list, so that a wrapper someone pushes and pops later stays last."""
    if translate_violations not in connection.execute_wrappers:
        connection.execute_wrappers.insert(0, translate_violations)
