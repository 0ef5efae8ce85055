"""Errors of the audit domain."""

from casino.errors import Conflict, DomainError, ReasonRequired, SegregationViolation


class ReviewReasonRequired(ReasonRequired):
    """Every review step states its reason; an anomaly is never waved through silently."""


class IllegalReviewStep(Conflict):
    """The review moves forward only, along open → acknowledged → dismissed/escalated/confirmed."""

    code = "illegal_review_step"


class ReviewerInvolved(SegregationViolation):
    """A person whose acts are in question does not review the anomaly about them."""

    code = "reviewer_involved"


class ReviewBatchTooLarge(DomainError):
    """A batch review holds the audit chain while it writes: a few hundred anomalies at most."""

    code = "review_batch_too_large"
