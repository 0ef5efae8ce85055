"""The database protects itself from the application: its role cannot edit history nor switch the
triggers off (audit/database_role.py). Every test here runs as that role, as every test does."""

from __future__ import annotations

import threading
import time

import pgtrigger
import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.db import DatabaseError, IntegrityError, connection, connections, transaction

from audit.chain import audit_record
from audit.database_role import append_only_models, updatable_columns, violations
from audit.models import Anomaly, AnomalyState, AuditEvent, Severity
from casino import clock
from casino.people.roles import INCOMPATIBLE, Role
from tests.conftest import as_owner

APPEND_ONLY = append_only_models()


def app_role() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        return cursor.fetchone()[0]


def refused(sql: str, *, says: str) -> None:
    with (
        pytest.raises(DatabaseError, match=says),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql)


def test_the_tests_run_as_the_applications_role_not_the_owner(db):
    assert app_role() != settings.DATABASES["owner"]["USER"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls "
            "FROM pg_roles WHERE rolname = current_user"
        )
        assert cursor.fetchone() == (False, False, False, False, False)
    assert violations(connection, role=app_role()) == []


def test_every_append_only_model_is_found_from_its_triggers():
    names = {m._meta.label for m in APPEND_ONLY}
    assert {"audit.AuditEvent", "floor.Movement", "shoes.PackEvent", "police.Observation"} <= names
    assert all(updatable_columns(m) == [] for m in APPEND_ONLY)


@pytest.mark.parametrize("model", APPEND_ONLY, ids=lambda m: m._meta.label)
def test_append_only_tables_refuse_edits_by_privilege(db, model):
    table, pk = model._meta.db_table, model._meta.pk.column
    refused(f'UPDATE "{table}" SET "{pk}" = "{pk}"', says="permission denied")
    refused(f'DELETE FROM "{table}"', says="permission denied")
    refused(f'TRUNCATE "{table}"', says="permission denied")
    refused(f'SELECT 1 FROM "{table}" FOR UPDATE', says="permission denied")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT has_any_column_privilege(%s, 'UPDATE'), has_table_privilege(%s, 'DELETE')",
            [table, table],
        )
        assert cursor.fetchone() == (False, False)


def test_the_role_cannot_switch_the_triggers_off(db):
    with transaction.atomic():
        audit_record(actor=None, action="test.recorded", payload={"n": 1})
    refused("SET session_replication_role = replica", says="permission denied")
    refused("ALTER TABLE audit_auditevent DISABLE TRIGGER ALL", says="must be owner")
    refused("ALTER TABLE audit_anomaly DISABLE TRIGGER USER", says="must be owner")
    refused("CREATE TABLE forged (id int)", says="permission denied")
    refused("CREATE TEMPORARY TABLE audit_auditevent (seq bigint)", says="permission denied")
    refused(
        "CREATE OR REPLACE FUNCTION public._pgtrigger_should_ignore(trigger_name NAME) "
        "RETURNS BOOLEAN AS $$ SELECT TRUE $$ LANGUAGE sql",
        says="must be owner|permission denied",
    )
    # pgtrigger's switch is a session variable anyone may set: it no longer switches anything.
    with pgtrigger.ignore("audit.AuditEvent:append_only"):
        refused("UPDATE audit_auditevent SET payload = '{}'", says="permission denied")
    assert AuditEvent.objects.get().payload == '{"n":1}'


def anomaly() -> Anomaly:
    return Anomaly.objects.create(
        detector="test", severity=Severity.INFO, summary="seen", detected_at=clock.now()
    )


def test_a_partly_mutable_table_lets_only_its_mutable_columns_change(db):
    assert updatable_columns(Anomaly) == ["state"]
    flagged = anomaly()
    refused(
        f"UPDATE audit_anomaly SET summary = 'nothing' WHERE id = {flagged.pk}", says="permission"
    )
    refused(f"DELETE FROM audit_anomaly WHERE id = {flagged.pk}", says="permission denied")
    Anomaly.objects.filter(pk=flagged.pk).update(state=AnomalyState.ACKNOWLEDGED)
    flagged.refresh_from_db()
    assert (flagged.summary, flagged.state) == ("seen", AnomalyState.ACKNOWLEDGED)


def test_pgtrigger_ignore_does_not_skip_a_state_machine(db):
    flagged = anomaly()
    with (
        pgtrigger.ignore("audit.Anomaly:state_forward_only"),
        pytest.raises(DatabaseError, match="Invalid transition"),
        transaction.atomic(),
    ):
        Anomaly.objects.filter(pk=flagged.pk).update(state=AnomalyState.CONFIRMED)
    flagged.refresh_from_db()
    assert flagged.state == AnomalyState.OPEN


def test_the_owners_session_still_meets_the_triggers(transactional_db):
    """Privileges stop the application; the triggers still stop a session of the owner's."""
    with transaction.atomic():
        audit_record(actor=None, action="test.recorded", payload={"n": 1})
    with as_owner():
        refused("UPDATE audit_auditevent SET payload = '{}'", says="Cannot update or delete")
        refused("TRUNCATE audit_auditevent CASCADE", says="Cannot truncate")
    assert AuditEvent.objects.get().payload == '{"n":1}'


@pytest.mark.django_db(databases=["default", "owner"])
def test_db_roles_grants_again_and_checks(capsys, tmp_path):
    role = app_role()
    password = tmp_path / "password"
    password.write_text("another secret")
    call_command("db_roles", app_role=role, app_password_file=password)
    call_command("db_roles", "--check", app_role=role)
    assert capsys.readouterr().out.count(f"database role {role} holds only") == 2
    assert violations(connections["owner"], role=role) == []


@pytest.mark.django_db(databases=["default", "owner"])
def test_db_roles_names_what_a_role_could_use_to_edit_history(capsys):
    owner = connections["owner"]
    with owner.cursor() as cursor:
        cursor.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        is_superuser = cursor.fetchone()[0]
        role = app_role()
        cursor.execute(f'GRANT UPDATE (at) ON audit_auditevent TO "{role}"')
        cursor.execute(f'GRANT TRUNCATE ON shoes_packevent TO "{role}"')
    with pytest.raises(SystemExit) as exit_:
        call_command("db_roles", "--check", app_role=role)
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert f"{role} may UPDATE append-only audit_auditevent" in err
    assert f"{role} may TRUNCATE append-only shoes_packevent" in err
    if is_superuser:  # the owner of CI and of the embedded server
        with pytest.raises(SystemExit):
            call_command("db_roles", "--check", app_role=owner.settings_dict["USER"])
        assert "has superuser" in capsys.readouterr().err


# --- segregation of duties under concurrency ------------------------------------------------


def test_two_incompatible_roles_added_at_once_one_is_refused(transactional_db):
    """Each transaction adds one role of an incompatible pair to the same person, at the same time:
    the person's row lock makes the second wait and then see the first. Exactly one commits."""
    a, b = (Group.objects.get(name=role.value) for role in (Role.CAISSIER, Role.TAILLEUR))
    assert frozenset({Role.CAISSIER, Role.TAILLEUR}) in INCOMPATIBLE
    for attempt in range(15):
        person = User.objects.create_user(username=f"double{attempt}")
        assert sorted(add_at_once(person, a, b)) == ["added", "refused"], attempt
        assert person.groups.count() == 1


def add_at_once(person: User, *groups: Group) -> list[str]:
    """Each group added to ``person`` by its own thread (its own connection), at the same moment."""
    start = threading.Barrier(len(groups))
    outcomes: list[str] = []

    def add(group: Group) -> None:
        try:
            start.wait()
            with transaction.atomic():
                person.groups.add(group)
                time.sleep(0.05)  # all inside their transaction before any commits
            outcomes.append("added")
        except IntegrityError as exc:
            outcomes.append("refused" if "segregation of duties" in str(exc) else repr(exc))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=add, args=(g,)) for g in groups]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes
