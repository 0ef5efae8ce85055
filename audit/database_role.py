"""The application's database role: what it may do, granted by the schema's owner (README, "Integrity").

The web, worker, beat and relay processes connect as a role that owns nothing, holds no role
attribute (superuser, createrole, createdb, replication, bypassrls) and is a member of no other
role. So it cannot ``ALTER TABLE … DISABLE TRIGGER`` (owners only) nor
``SET session_replication_role`` (superusers only). On top of that, the grants themselves refuse
edits: an append-only table grants it SELECT and INSERT only, a partly mutable one (pgtrigger
``ReadOnly(exclude=…)``) UPDATE of the columns that may change only, and DELETE is granted on a
short list of tables the application really deletes from. The lists are derived from the models'
triggers, so a new append-only model is covered without touching this module.

pgtrigger's own switch (``pgtrigger.ignore``, a session variable anyone may set) is closed: its test
function answers "never ignore" (``close_pgtrigger_ignore``, after every migrate too).
"""

from __future__ import annotations

from dataclasses import dataclass

import pgtrigger
from django.apps import apps
from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from psycopg import sql

APPEND_ONLY_TRIGGER = "append_only"  # the name audit.append_only gives its UPDATE/DELETE trigger

# Every pgtrigger trigger asks this function whether to skip itself (pgtrigger's compiled template
# names it exactly so); every migration that installs a trigger writes pgtrigger's version again.
_PGTRIGGER_IGNORE_FUNCTION = """
CREATE OR REPLACE FUNCTION "public"._pgtrigger_should_ignore(trigger_name NAME)
RETURNS BOOLEAN AS $$ SELECT FALSE $$ LANGUAGE sql IMMUTABLE;
"""

_ROLE_ATTRIBUTES = "LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT"


def _deletable() -> set[type[models.Model]]:
    """The tables the application deletes rows from, and why (nothing recorded is among them)."""
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.models import Session
    from django_otp.plugins.otp_totp.models import TOTPDevice

    return {
        Session,  # logout, expired sessions
        User.groups.through,  # a role withdrawn (people.services.staff_set_roles)
        User.user_permissions.through,
        Group.permissions.through,  # people.roles.sync_role_permissions
        TOTPDevice,  # a second factor withdrawn at a reset of credentials (people.services)
    }


def is_append_only(model: type[models.Model]) -> bool:
    return any(t.name == APPEND_ONLY_TRIGGER for t in getattr(model._meta, "triggers", []))


def append_only_models() -> list[type[models.Model]]:
    return [m for m in apps.get_models(include_auto_created=True) if is_append_only(m)]


@dataclass(frozen=True)
class TableGrant:
    table: str
    insert: bool
    update: list[str] | None  # None: every column; []: none
    delete: bool


def updatable_columns(model: type[models.Model]) -> list[str] | None:
    if is_append_only(model):
        return []
    for trigger in getattr(model._meta, "triggers", []):
        if isinstance(trigger, pgtrigger.ReadOnly):
            if trigger.exclude:
                names = set(trigger.exclude)
            else:
                names = {f.name for f in model._meta.concrete_fields} - set(trigger.fields)
            return sorted(f.column for f in model._meta.concrete_fields if f.name in names)
    return None


def table_grants(table_names: list[str]) -> list[TableGrant]:
    """What the application may do on each table of the schema (a table of no model: read it)."""
    by_table = {m._meta.db_table: m for m in apps.get_models(include_auto_created=True)}
    deletable = {m._meta.db_table for m in _deletable()}
    grants = []
    for table in sorted(table_names):
        model = by_table.get(table)
        if model is None:  # django_migrations
            grants.append(TableGrant(table, insert=False, update=[], delete=False))
            continue
        grants.append(
            TableGrant(
                table, insert=True, update=updatable_columns(model), delete=table in deletable
            )
        )
    return grants


def close_pgtrigger_ignore(connection: BaseDatabaseWrapper) -> None:
    with connection.cursor() as cursor:
        cursor.execute(_PGTRIGGER_IGNORE_FUNCTION)


def _tables(connection: BaseDatabaseWrapper) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        )
        return [row[0] for row in cursor.fetchall()]


def grant(connection: BaseDatabaseWrapper, *, role: str, password: str | None) -> None:
    """Create or update ``role`` and give it exactly its grants; run as the owner, after migrate."""
    role_id = sql.Identifier(role)
    database = sql.Identifier(connection.settings_dict["NAME"])
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        if cursor.fetchone()[0] == role:
            raise ValueError(f"the application's role {role!r} is the owner's own role")
        cursor.execute(
            "SELECT rolcanlogin AND rolinherit AND NOT (rolsuper OR rolcreatedb OR rolcreaterole "
            "OR rolreplication OR rolbypassrls) FROM pg_roles WHERE rolname = %s",
            [role],
        )
        existing = cursor.fetchone()
        if existing is None:
            cursor.execute(sql.SQL("CREATE ROLE {} " + _ROLE_ATTRIBUTES).format(role_id))
        elif not existing[0]:  # (an owner without CREATEROLE can use a role a DBA made right)
            cursor.execute(sql.SQL("ALTER ROLE {} " + _ROLE_ATTRIBUTES).format(role_id))
        if password:
            cursor.execute(
                sql.SQL("ALTER ROLE {} PASSWORD {}").format(role_id, sql.Literal(password))
            )
        # A member of another role would hold that role's rights (the owner's, say).
        cursor.execute(
            "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
            "JOIN pg_roles r ON r.oid = m.member WHERE r.rolname = %s",
            [role],
        )
        for (group,) in cursor.fetchall():
            cursor.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(group), role_id))

        # Connect, no temporary tables: a temporary table named like one of ours would be what
        # the triggers' unqualified queries read in that session.
        cursor.execute(sql.SQL("REVOKE ALL ON DATABASE {} FROM {}").format(database, role_id))
        cursor.execute(sql.SQL("REVOKE TEMPORARY ON DATABASE {} FROM PUBLIC").format(database))
        cursor.execute(sql.SQL("GRANT CONNECT ON DATABASE {} TO {}").format(database, role_id))
        cursor.execute(sql.SQL("REVOKE ALL ON SCHEMA public FROM {}").format(role_id))
        cursor.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")  # the default before 15
        cursor.execute(sql.SQL("GRANT USAGE ON SCHEMA public TO {}").format(role_id))

        for table_grant in table_grants(_tables(connection)):
            table = sql.Identifier(table_grant.table)
            cursor.execute(sql.SQL("REVOKE ALL ON TABLE {} FROM {}").format(table, role_id))
            privileges = [sql.SQL("SELECT")]
            if table_grant.insert:
                privileges.append(sql.SQL("INSERT"))
            if table_grant.update is None:
                privileges.append(sql.SQL("UPDATE"))
            elif table_grant.update:
                columns = sql.SQL(", ").join(map(sql.Identifier, table_grant.update))
                privileges.append(sql.SQL("UPDATE ({})").format(columns))
            if table_grant.delete:
                privileges.append(sql.SQL("DELETE"))
            cursor.execute(
                sql.SQL("GRANT {} ON TABLE {} TO {}").format(
                    sql.SQL(", ").join(privileges), table, role_id
                )
            )
        cursor.execute(
            sql.SQL("REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM {}").format(role_id)
        )
        cursor.execute(
            sql.SQL("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {}").format(role_id)
        )
    close_pgtrigger_ignore(connection)


def violations(connection: BaseDatabaseWrapper, *, role: str) -> list[str]:
    """What ``role`` holds that the application must not: empty when it is as ``grant`` made it."""
    found: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT oid, rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls "
            "FROM pg_roles WHERE rolname = %s",
            [role],
        )
        row = cursor.fetchone()
        if row is None:
            return [f"role {role!r} does not exist"]
        oid, *attributes = row
        names = ("superuser", "createrole", "createdb", "replication", "bypassrls")
        found += [
            f"{role} has {name}" for name, held in zip(names, attributes, strict=True) if held
        ]
        cursor.execute(
            "SELECT g.rolname FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid "
            "WHERE m.member = %s",
            [oid],
        )
        found += [f"{role} is a member of {group}" for (group,) in cursor.fetchall()]
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relowner = %s "
            "UNION ALL SELECT proname FROM pg_proc WHERE proowner = %s "
            "UNION ALL SELECT nspname FROM pg_namespace WHERE nspowner = %s",
            [oid, oid, oid],
        )
        found += [f"{role} owns {name}" for (name,) in cursor.fetchall()]
        cursor.execute(
            "SELECT has_schema_privilege(%s, 'public', 'CREATE'), "
            "has_database_privilege(%s, current_database(), 'TEMPORARY')",
            [role, role],
        )
        create, temporary = cursor.fetchone()
        if create:
            found.append(f"{role} may create objects in schema public")
        if temporary:
            found.append(f"{role} may create temporary tables")
        for model in append_only_models():
            table = model._meta.db_table
            cursor.execute(
                "SELECT has_table_privilege(%s, %s, 'UPDATE'), "
                "has_any_column_privilege(%s, %s, 'UPDATE'), "
                "has_table_privilege(%s, %s, 'DELETE'), has_table_privilege(%s, %s, 'TRUNCATE'), "
                "has_table_privilege(%s, %s, 'TRIGGER')",
                [role, table] * 5,
            )
            update, column_update, delete, truncate, trigger = cursor.fetchone()
            for privilege, held in (
                ("UPDATE", update or column_update),
                ("DELETE", delete),
                ("TRUNCATE", truncate),
                ("TRIGGER", trigger),
            ):
                if held:
                    found.append(f"{role} may {privilege} append-only {table}")
        cursor.execute(
            "SELECT prosrc FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE n.nspname = 'public' AND p.proname = '_pgtrigger_should_ignore'"
        )
        source = cursor.fetchone()
        if source is not None and "SELECT FALSE" not in source[0]:
            found.append("pgtrigger.ignore can switch triggers off (run db_roles after migrate)")
    return found
