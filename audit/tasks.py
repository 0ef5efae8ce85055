"""Background work of the audit domain."""

from __future__ import annotations

from audit.services import chain_verify_and_record
from casino.outbox.outbox import outbox_task


@outbox_task("audit.chain_verify")
def chain_verify() -> None:
    chain_verify_and_record()
