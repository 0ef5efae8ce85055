"""The root of every domain error: a code, a message naming the offending value, and where.

Services raise subclasses (one hierarchy per domain, each with a docstring); the API turns any of
them into ``{"code", "message", "where"}`` and the admin shows the message. Nothing else catches them.
"""

from __future__ import annotations


class DomainError(Exception):
    """An act refused by a rule of the house. Subclasses name the rule."""

    code = "refused"
    http_status = 422

    def __init__(self, message: str, *, where: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where


class RoleRequired(DomainError):
    """The actor does not hold a role the act requires."""

    code = "role_required"
    http_status = 403


class SegregationViolation(DomainError):
    """The act would let one person hold two duties the house keeps apart."""

    code = "segregation_of_duties"
    http_status = 403


class NotFound(DomainError):
    """The record the act refers to does not exist."""

    code = "not_found"
    http_status = 404


class ReasonRequired(DomainError):
    """An act that must say why (a review step, a cancelled coup) was given no reason."""

    code = "reason_required"


class Conflict(DomainError):
    """The record is not in a state that allows the act (it moved on already)."""

    code = "conflict"
    http_status = 409


class WrongGame(DomainError):
    """The act belongs to another game than the table's: a coup at a Pharao table, a taille at a
    Trente-et-Quarante table."""

    code = "wrong_game"
