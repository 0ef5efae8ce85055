"""Errors of the custody of sealed packs."""

from casino.errors import Conflict, DomainError


class IllegalPackState(Conflict):
    """The act does not fit the pack's state (the custody chain only moves forward)."""

    code = "illegal_pack_state"


class SealNotVerified(Conflict):
    """No pack is opened before a police commissioner has found its seal intact."""

    code = "seal_not_verified"


class ShuffleOrderViolated(DomainError):
    """The croupiers shuffle, then the tailleur last; a player only where the règlement allows."""

    code = "shuffle_order"


class CardRefused(DomainError):
    """A card laid that the pack cannot hold any more (a foreign card): refused and recorded.

    ``recorded`` tells the API that the refusal is itself evidence, committed before the error.
    """

    code = "foreign_card"
    recorded = True

    def __init__(self, message: str, *, where: str | None = None, card: str = "") -> None:
        super().__init__(message, where=where)
        self.card = card


class NotACard(DomainError):
    """A string that is no card code (``KS``, ``TH`` or ``10H``…): a malformed request."""

    code = "not_a_card"
    http_status = 400


class CountInvalid(DomainError):
    """A reconciliation count that is not a count of card codes."""

    code = "invalid_count"


class TalonCounted(Conflict):
    """The undealt cards of a taille are recorded once, when the cards pass: the count is
    evidence, and a second one would not replace it."""

    code = "talon_counted"


class TalonNotCounted(Conflict):
    """A passed talon is shuffled again or leaves the table only once its undealt cards are
    recorded: after that their order and number are gone."""

    code = "talon_not_counted"
