"""Role changes of one person happen one at a time, so the segregation check sees them all.

``people_refuse_incompatible_roles`` (casino/people/migrations/0002_roles.py) looks at the person's
other groups before a group is added. Two transactions adding one role each, at the same moment,
would each see the person without the other's role and both commit an incompatible pair.

This trigger, on the same table and named so that it fires first (PostgreSQL fires a table's
triggers of one kind in the order of their names: "auth_…" before "people_…"), locks the person's
``auth_user`` row. The second transaction waits for the first to end, then runs the check with a
fresh snapshot (READ COMMITTED, each statement of the trigger function), which shows the first's
role: refused. ``FOR NO KEY UPDATE`` conflicts only with itself and with edits of the row, not with
the key-share locks of rows that merely reference the person (every audit event does).

It lives in the audit app so that a change of the check itself (casino/people) leaves it in place.
"""

from django.db import migrations

TRIGGER = """
CREATE OR REPLACE FUNCTION auth_user_groups_lock_person() RETURNS trigger AS $$
BEGIN
    PERFORM 1 FROM auth_user WHERE id = NEW.user_id FOR NO KEY UPDATE;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS auth_user_groups_lock_person ON auth_user_groups;
CREATE TRIGGER auth_user_groups_lock_person BEFORE INSERT OR UPDATE ON auth_user_groups
    FOR EACH ROW EXECUTE FUNCTION auth_user_groups_lock_person();
"""

REVERSE = """
DROP TRIGGER IF EXISTS auth_user_groups_lock_person ON auth_user_groups;
DROP FUNCTION IF EXISTS auth_user_groups_lock_person();
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0003_lock_and_last_event"), ("people", "0002_roles")]

    operations = [migrations.RunSQL(TRIGGER, REVERSE)]
