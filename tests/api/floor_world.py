"""A house built once per test module and rolled back after it: the cast, the posted règlements,
table 1, and a second person of each floor role who is never put on duty.

Hundreds of API cases each need the same people and a few records; building them for every case
would take minutes. The module-scoped ``house`` opens a transaction that is never committed; each
test's ``db`` fixture then works in a savepoint inside it, rolled back after the test, so every
case still starts from the same fresh state. Import the fixtures into a test module to use them
(``from tests.api.floor_world import cast, house``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import override_settings

from casino.floor.models import PostedReglement, Shift, Table
from casino.floor.services import (
    count_countersign,
    count_record,
    reglement_load_presets,
    shift_open,
    table_create,
)
from casino.people.roles import Role
from casino.people.services import staff_create
from shoes.models import Pack, PackKind
from shoes.services import pack_cut, pack_open, pack_receive, pack_shuffle, pack_store, seal_verify
from tests.actors import PASSWORD, Cast, make_cast

try:  # the director hires through setup codes where people were reworked; else a password
    from tests.actors import hire  # type: ignore[attr-defined]
except ImportError:
    hire = None
from tests.conftest import FLOAT

FAST_HASHER = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@contextmanager
def rolled_back() -> Iterator[None]:
    """A transaction (a savepoint when nested) that is always rolled back."""
    atomic = transaction.atomic()
    atomic.__enter__()
    try:
        yield
    finally:
        transaction.set_rollback(True)
        atomic.__exit__(None, None, None)


@dataclass
class House:
    cast: Cast
    posted: PostedReglement
    table: Table
    off_duty: dict[Role, User]  # a second chef, tailleur and croupier, never on duty
    spare_croupier: User  # put on duty and taken off by the acts that need a third person


@pytest.fixture(scope="module")
def house(django_db_setup, django_db_blocker) -> Iterator[House]:  # type: ignore[no-untyped-def]
    with (
        django_db_blocker.unblock(),
        override_settings(PASSWORD_HASHERS=FAST_HASHER),
        rolled_back(),
    ):
        with connection.cursor() as cursor:  # see conftest: commit-time triggers fire now
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cast = make_cast()
        reglement_load_presets(actor=cast.commissaire, effective_from=dt.date(2026, 1, 1))
        posted = PostedReglement.objects.get(name="baden-1854")
        table = table_create(
            actor=cast.directeur,
            number=1,
            game="trente-et-quarante",
            reglement_id=posted.pk,
            min_stake=500,
            max_stake=600_000,
        )

        def person(username: str, role: Role) -> User:
            if hire is not None:  # people set up through their setup codes (once merged with h2)
                return hire(cast.directeur, username, role)
            return staff_create(
                actor=cast.directeur,
                username=username,
                full_name=username.title(),
                roles=[role],
                password=PASSWORD,
            )

        off_duty = {
            Role.CHEF_DE_PARTIE: person("chef2", Role.CHEF_DE_PARTIE),
            Role.TAILLEUR: person("tailleur2", Role.TAILLEUR),
            Role.CROUPIER: person("croupier2", Role.CROUPIER),
        }
        yield House(cast, posted, table, off_duty, person("croupier3", Role.CROUPIER))


@pytest.fixture
def cast(db, house: House) -> Cast:  # type: ignore[no-untyped-def]
    """The house's cast (overrides the conftest's, so ``api(user)`` serves these people)."""
    return house.cast


# --- the floor, built through the services -------------------------------------------------------

COUP_CARDS = ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"]  # noir wins


def seance(h: House) -> Shift:
    count = count_record(actor=h.cast.croupier, table_id=h.table.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=h.cast.directeur, count_id=count.pk)
    return shift_open(
        actor=h.cast.chef,
        table=h.table,
        count_id=count.pk,
        tailleur=h.cast.tailleur,
        croupiers=[h.cast.croupier],
    )


SEALS = iter(range(50_000, 99_999))


def stored_pack(h: House) -> Pack:
    pack = pack_receive(
        actor=h.cast.caissier,
        kind=PackKind.SIXAIN,
        maker="Grimaud",
        maker_pack_numbers="G-1",
        seal_number=f"RF-{next(SEALS)}",
        sealing_authority="Préfecture de police",
        store_location="coffre A",
    )
    return pack_store(actor=h.cast.caissier, pack_id=pack.pk)


def verified_pack(h: House) -> Pack:
    pack = stored_pack(h)
    seal_verify(
        actor=h.cast.commissaire,
        pack_id=pack.pk,
        seal_number_read=pack.seal_number,
        verdict="intact",
    )
    return pack


def opened_pack(h: House, shift: Shift, *, shuffled: bool = False, cut: bool = False) -> Pack:
    pack = verified_pack(h)
    pack_open(actor=h.cast.chef, pack_id=pack.pk, shift_id=shift.pk)
    if shuffled or cut:
        pack_shuffle(actor=h.cast.croupier, pack_id=pack.pk)
        pack_shuffle(actor=h.cast.tailleur, pack_id=pack.pk)
    if cut:
        pack_cut(actor=h.cast.tailleur, pack_id=pack.pk, cut_by="M. Dupont")
    return pack


def in_play(h: House) -> tuple[Shift, Pack]:
    shift = seance(h)
    return shift, opened_pack(h, shift, cut=True)
