"""Transaction-scoped locks on a name, for what has no row to lock.

Append-only tables cannot be locked row by row: ``SELECT … FOR UPDATE`` needs the UPDATE privilege,
which the application's database role does not hold on them (audit/database_role.py).
"""

from __future__ import annotations

from casino.round_trips import run


def lock_name(name: str) -> None:
    """Wait until no other transaction holds ``name``; held until this transaction ends."""
    run("SELECT pg_advisory_xact_lock(hashtext(%s))", [name])
