"""Database triggers shared by every append-only table (django-pgtrigger)."""

from __future__ import annotations

import pgtrigger


def append_only() -> list[pgtrigger.Trigger]:
    """Refuse UPDATE, DELETE and TRUNCATE in PostgreSQL itself, raw SQL included.

    A correction is a new row that references what it corrects; nothing recorded is edited.
    """
    return [
        pgtrigger.Protect(name="append_only", operation=pgtrigger.Update | pgtrigger.Delete),
        pgtrigger.Trigger(
            name="no_truncate",
            operation=pgtrigger.Truncate,
            level=pgtrigger.Statement,
            when=pgtrigger.Before,
            func="RAISE EXCEPTION 'pgtrigger: Cannot truncate % table', TG_TABLE_NAME;",
        ),
    ]
