"""The role groups, and the database's own refusal of incompatible roles (DESIGN.md, Roles).

Frozen copies of ``roles.Role`` and ``roles.INCOMPATIBLE`` as they were when written: a change of the
rules is a new migration.
"""

from django.db import migrations

ROLES = ['directeur', 'comite', 'chef_de_partie', 'tailleur', 'croupier', 'caissier', 'commissaire', 'inspecteur', 'auditeur']
INCOMPATIBLE = [('auditeur', 'caissier'), ('auditeur', 'chef_de_partie'), ('auditeur', 'commissaire'), ('auditeur', 'croupier'), ('auditeur', 'inspecteur'), ('auditeur', 'tailleur'), ('caissier', 'chef_de_partie'), ('caissier', 'comite'), ('caissier', 'commissaire'), ('caissier', 'croupier'), ('caissier', 'directeur'), ('caissier', 'inspecteur'), ('caissier', 'tailleur'), ('chef_de_partie', 'comite'), ('chef_de_partie', 'commissaire'), ('chef_de_partie', 'directeur'), ('chef_de_partie', 'inspecteur'), ('comite', 'commissaire'), ('comite', 'croupier'), ('comite', 'inspecteur'), ('comite', 'tailleur'), ('commissaire', 'croupier'), ('commissaire', 'directeur'), ('commissaire', 'inspecteur'), ('commissaire', 'tailleur'), ('croupier', 'directeur'), ('croupier', 'inspecteur'), ('directeur', 'inspecteur'), ('directeur', 'tailleur'), ('inspecteur', 'tailleur')]

TRIGGER = """
CREATE OR REPLACE FUNCTION people_refuse_incompatible_roles() RETURNS trigger AS $$
DECLARE
    new_name text;
    clash text;
BEGIN
    SELECT name INTO new_name FROM auth_group WHERE id = NEW.group_id;
    SELECT g.name INTO clash
      FROM auth_user_groups ug JOIN auth_group g ON g.id = ug.group_id
     WHERE ug.user_id = NEW.user_id AND ug.group_id <> NEW.group_id
       AND (LEAST(g.name, new_name), GREATEST(g.name, new_name)) IN (__PAIRS__)
     LIMIT 1;
    IF clash IS NOT NULL THEN
        RAISE EXCEPTION 'segregation of duties: % and % may not be held by one person',
            clash, new_name USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS people_refuse_incompatible_roles ON auth_user_groups;
CREATE TRIGGER people_refuse_incompatible_roles BEFORE INSERT OR UPDATE ON auth_user_groups
    FOR EACH ROW EXECUTE FUNCTION people_refuse_incompatible_roles();
""".replace("__PAIRS__", ", ".join(f"('{a}', '{b}')" for a, b in INCOMPATIBLE))

REVERSE = """
DROP TRIGGER IF EXISTS people_refuse_incompatible_roles ON auth_user_groups;
DROP FUNCTION IF EXISTS people_refuse_incompatible_roles();
"""


def create_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    for name in ROLES:
        Group.objects.get_or_create(name=name)


class Migration(migrations.Migration):
    dependencies = [("people", "0001_initial"), ("auth", "0012_alter_user_first_name_max_length")]

    operations = [
        migrations.RunPython(create_groups, migrations.RunPython.noop),
        migrations.RunSQL(TRIGGER, REVERSE),
    ]
