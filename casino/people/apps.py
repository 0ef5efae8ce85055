from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PeopleConfig(AppConfig):
    name = "casino.people"
    label = "people"
    verbose_name = _("Personnel et rôles")

    def ready(self) -> None:
        from django.contrib.admin.models import LogEntry
        from django.db.models.signals import post_migrate, post_save

        from casino.people.audit_admin import audit_admin_log_entry
        from casino.people.roles import sync_role_permissions

        # After every app's migrate: the permissions of later apps exist only once theirs ran.
        post_migrate.connect(sync_role_permissions)
        # Whatever anyone does through the admin's own forms is in the audit chain too.
        post_save.connect(audit_admin_log_entry, sender=LogEntry, dispatch_uid="audit_admin")
