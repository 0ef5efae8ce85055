"""The cast, made once for a run of tests that each roll back, not once for every test.

Making the cast is about 370 queries through the people services (0.3 to 0.8 s here), and most
tests begin with it. Consecutive tests of one file that roll back (``db``, marked or not, and no
fixture of theirs scoped wider than the test but the session's) share one: it is made in a
transaction opened before the first of them and rolled back after the last, and each test works
in a savepoint inside it, rolled back after the test, as ``tests/api/floor_world.py``'s house does.
So each test still starts from the cast alone, and every test gets its own ``User`` objects, read
again from the database. A test that commits, or one whose file gives it another cast, makes its
own as before; any other test runs with the shared transaction closed, so it sees no cast.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import override_settings
from django.utils import translation

from tests.actors import Cast, make_cast

FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Whether the test shares the cast, and whether the next test does too (then it stays open).
SHARES = pytest.StashKey[bool]()
KEEP_OPEN = pytest.StashKey[bool]()
# What makes pytest-django run a test in a transaction that commits, or on other databases.
COMMITTING_FIXTURES = {
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


class SharedCast:
    """The open transaction holding the cast, and its people's keys."""

    def __init__(self) -> None:
        self._atomic: Any = None
        self._keys: dict[str, int] = {}

    @property
    def is_open(self) -> bool:
        return self._atomic is not None

    def open(self, blocker: Any) -> None:
        if self.is_open:
            return
        with blocker.unblock():
            atomic = transaction.atomic()
            atomic.__enter__()
            try:
                with connection.cursor() as cursor:  # see conftest: commit-time triggers fire now
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
                with override_settings(PASSWORD_HASHERS=FAST_HASHER), translation.override("en"):
                    cast = make_cast()
            except BaseException:
                transaction.set_rollback(True)
                atomic.__exit__(None, None, None)
                raise
        self._atomic = atomic
        self._keys = {field.name: getattr(cast, field.name).pk for field in fields(Cast)}

    def close(self, blocker: Any) -> None:
        if not self.is_open:
            return
        atomic, self._atomic, self._keys = self._atomic, None, {}
        with blocker.unblock():
            transaction.set_rollback(True)
            atomic.__exit__(None, None, None)

    def cast(self) -> Cast:
        """The cast's people as the database holds them now (in this test's savepoint)."""
        people = User.objects.in_bulk(self._keys.values())
        return Cast(**{name: people[key] for name, key in self._keys.items()})


def shares_the_cast(item: pytest.Item) -> bool:
    """Whether ``item`` rolls back and takes the conftest's cast with no wider fixture of its own."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None or "cast" not in info.name2fixturedefs:
        return False
    definitions = info.name2fixturedefs
    if getattr(definitions["cast"][-1].func, "__module__", None) != "tests.conftest":
        return False  # another cast (the API tests' house)
    if COMMITTING_FIXTURES & set(info.names_closure):
        return False
    if any(wider(d[-1]) for d in definitions.values() if d):
        return False  # its savepoint would sit under the wider fixture's transaction
    marker = item.get_closest_marker("django_db")
    if marker is not None:
        from pytest_django.fixtures import validate_django_db

        transactional, reset_sequences, databases, serialized, available_apps = validate_django_db(
            marker
        )
        if transactional or reset_sequences or serialized or available_apps is not None:
            return False
        if databases not in (None, ["default"], ("default",)):
            return False
    return True


def wider(definition: Any) -> bool:
    """A fixture of ours scoped wider than a test and narrower than the run (pytest-django's
    class-scoped one sets up Django's unittest classes only, and holds no transaction)."""
    ours = not getattr(definition.func, "__module__", "").startswith("pytest_django")
    return ours and definition.scope in ("package", "module", "class")


def mark_the_runs(items: list[pytest.Item]) -> None:
    """Which tests share the cast, and after which the transaction stays open for the next."""
    shares = [shares_the_cast(item) for item in items]
    for index, item in enumerate(items):
        item.stash[SHARES] = shares[index]
        following = index + 1 < len(items) and shares[index + 1]
        item.stash[KEEP_OPEN] = shares[index] and following and items[index + 1].path == item.path
