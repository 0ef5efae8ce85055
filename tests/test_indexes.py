"""No index is written twice: an index whose columns begin another index of its table (or repeat
it) costs every insert a second B-tree to update and finds nothing the longer one does not.

The append-only records are written an act at a time, so each such index was paid on every
stake, card and movement (docs/speed.md, twelfth round). Django indexes every foreign key by
itself; where a constraint already begins with that key, the field says ``db_index=False``.
"""

from __future__ import annotations

import pytest
from django.db import connection, connections

from casino.floor.models import Movement

# Django's own tables (auth, contenttypes) come as Django makes them: not ours to change.
THEIRS = ("auth_%", "django_%")

# Plain B-tree indexes on columns alone (no expression, no predicate) whose columns, with their
# operator classes and orders, are the first columns of another index of the same table: all of
# them if that index is unique or longer, or an identical twin (the later one named).
REDUNDANT = """
    WITH i AS (
        SELECT indrelid, indexrelid, indisunique AS is_unique, indisprimary AS is_primary,
               string_to_array(indkey::text, ' ') AS keys,
               string_to_array(indclass::text, ' ') AS classes,
               string_to_array(indoption::text, ' ') AS options
          FROM pg_index
         WHERE indpred IS NULL AND indexprs IS NULL
    )
    SELECT a.indexrelid::regclass::text, b.indexrelid::regclass::text
      FROM i a
      JOIN i b ON a.indrelid = b.indrelid AND a.indexrelid <> b.indexrelid
      JOIN pg_class t ON t.oid = a.indrelid
      JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = current_schema()
       AND NOT (t.relname LIKE ANY (%s))
       AND NOT a.is_unique AND NOT a.is_primary
       AND b.keys[1:cardinality(a.keys)] = a.keys
       AND b.classes[1:cardinality(a.keys)] = a.classes
       AND b.options[1:cardinality(a.keys)] = a.options
       AND (cardinality(a.keys) < cardinality(b.keys) OR b.is_unique OR a.indexrelid > b.indexrelid)
     ORDER BY 1, 2
"""


def redundant_indexes(on=connection) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    with on.cursor() as cursor:
        cursor.execute(REDUNDANT, [list(THEIRS)])
        return cursor.fetchall()


def test_no_index_begins_another_of_its_table(db):
    assert redundant_indexes() == []


@pytest.mark.django_db(databases=["default", "owner"])
def test_an_index_a_constraint_already_begins_is_found():
    """The query above can fail: an index on a stake's coup alone, which `one_stake_per_ref`
    (coup, ref) begins, is reported, and so is a second index on a movement's debit account.
    Made by the schema's owner in the test's transaction, which is rolled back."""
    with connections["owner"].cursor() as cursor:
        cursor.execute("CREATE INDEX stake_coup_again ON floor_stake (coup_id)")
        cursor.execute("CREATE INDEX movement_debit_again ON floor_movement (debit_id)")
    assert redundant_indexes(connections["owner"]) == [
        ("movement_debit_again", "floor_movement_debit_id_8f6c5735"),
        ("stake_coup_again", "one_stake_per_ref"),
    ]


@pytest.mark.parametrize(
    "lookup",
    [
        {"reference__startswith": "coup:12:"},  # a coup's movements (its page, the API, disputes)
        {"reference__startswith": "taille:12:"},  # a Pharao taille's
        {"reference": "dispute:12"},  # a dispute's corrections
    ],
)
def test_movements_are_found_by_their_reference_through_an_index(db, lookup):
    """The reference's index serves the lookup as a condition, not only as an order to read the
    ledger in: a default B-tree cannot serve LIKE 'coup:12:%' unless the collation is C. With
    sequential scans priced out and the rows asked in the index's order, that index is the
    cheapest plan on any PostgreSQL (on a near-empty table, 18 read another index whole, and
    filtered); it is an ``Index Cond`` only if it can serve the lookup."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
    plan = Movement.objects.filter(**lookup).order_by("reference").explain()
    assert "movement_reference" in plan, plan
    conditions = [line for line in plan.splitlines() if "Index Cond" in line]
    assert any("reference" in line for line in conditions), plan
