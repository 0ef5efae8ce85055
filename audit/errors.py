"""Errors of the audit domain."""

from casino.errors import Conflict, ReasonRequired, SegregationViolation


class ReviewReasonRequired(ReasonRequired):
    """Every review step states its reason; an anomaly is never waved through silently."""


class IllegalReviewStep(Conflict):
    """The review moves forward only, along open → acknowledged → dismissed/escalated/confirmed."""

    code = "illegal_review_step"


class ReviewerInvolved(SegregationViolation):
    """A person whose acts are in question does not review the anomaly about them."""

    code = "reviewer_involved"
