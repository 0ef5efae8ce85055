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

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError
from django.db.backends.base.base import BaseDatabaseWrapper

from casino.errors import Conflict


@dataclass(frozen=True)
class Rule:
    where: str
    # What the person reads. None: the database's own message, which the triggers write to be
    # read ("tailleur is already on duty at table 2").
    message: str | None = None


RULES: dict[str, Rule] = {
    # The floor (casino/floor/models.py).
    "one_duty_per_person": Rule("person"),  # trigger at_most_one_duty
    "one_post_holder_per_seance": Rule("post"),  # trigger at_most_one_duty
    "no_duty_in_a_closed_seance": Rule("shift"),  # trigger at_most_one_duty
    "one_open_shift_per_table": Rule("table", "the table already has an open séance"),
    "floor_shift_opening_count_id_key": Rule("count", "this count opened a séance already"),
    "one_coup_in_progress_per_seance": Rule("shift", "the table has a coup in progress"),
    "one_coup_number_per_taille": Rule("coup", "this coup number is taken in the taille"),
    "one_stake_per_ref": Rule("ref", "the coup has a stake with this reference already"),
    "one_settlement_per_stake": Rule("coup", "the stake is settled in this coup already"),
    "floor_coupresult_coup_id_key": Rule("coup", "the coup is settled already"),
    "floor_coupcancellation_coup_id_key": Rule("coup", "the coup is cancelled already"),
    "floor_stakewithdrawal_stake_id_key": Rule("stake", "the stake is withdrawn already"),
    "floor_dutyend_duty_id_key": Rule("duty", "the duty has ended already"),
    "floor_countsignature_count_id_key": Rule("count", "the count is countersigned already"),
    "floor_transfersignature_transfer_id_key": Rule("transfer", "the transfer is signed already"),
    "floor_movement_idempotency_key_key": Rule(
        "idempotency_key", "this movement is posted already"
    ),
    "floor_table_number_key": Rule("number", "a table has this number already"),
    "one_version_number_per_reglement": Rule("name", "this règlement version is posted already"),
    # Sealed packs (shoes/models.py).
    "one_pack_in_use_per_table": Rule("shift"),  # trigger one_pack_in_use_per_table
    "one_opening_per_pack": Rule("pack", "the pack has been opened already"),
    "one_card_per_place": Rule("card", "another card was laid at this place of the pack"),
    "shoes_pack_seal_number_key": Rule("seal_number", "this seal number is in the register"),
    "shoes_registervisa_day_key": Rule("day", "the register page of this day bears a visa"),
    "shoes_reconciliation_pack_id_key": Rule("pack", "the pack has been counted back already"),
    # Reports, disputes, the police register.
    "one_shift_report_version": Rule("version", "this report version is requested already"),
    "one_register_version": Rule("version", "this register version is requested already"),
    "one_signoff_per_capacity": Rule("actor", "this capacity has signed off the day already"),
    "two_different_people": Rule("actor", "this person has signed off the day already"),
    "one_decision_per_attempt": Rule("dispute", "the dispute is decided already"),
    "disputes_decisionapproval_decision_id_key": Rule(
        "dispute", "the decision is approved already"
    ),
    "police_followup_observation_id_key": Rule("observation", "the follow-up is recorded already"),
}


class RuleViolated(Conflict, IntegrityError):
    """The database refused an act that another one, a moment before, made impossible: one of
    the house's "at most one" rules (``RULES``). Still an ``IntegrityError`` for code that
    catches those; a ``Conflict`` (409) for the person."""

    def __init__(self, rule: str, message: str, where: str) -> None:
        super().__init__(message, where=where)
        self.rule = rule


def violation(error: IntegrityError) -> RuleViolated | None:
    """The rule ``error`` breaks, as a refusal; None when it is no rule of ``RULES``."""
    diag = getattr(error.__cause__, "diag", None)
    name = getattr(diag, "constraint_name", None)
    rule = RULES.get(name or "")
    if rule is None:
        return None
    text = rule.message or getattr(diag, "message_primary", None) or str(error)
    return RuleViolated(name or "", f"{text} (database rule {name})", rule.where)


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
