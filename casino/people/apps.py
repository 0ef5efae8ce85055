from django.apps import AppConfig


class PeopleConfig(AppConfig):
    name = "casino.people"
    label = "people"
    verbose_name = "Personnel et rôles / Staff and roles"

    def ready(self) -> None:
        from django.db.models.signals import post_migrate

        from casino.people.roles import sync_role_permissions

        # After every app's migrate: the permissions of later apps exist only once theirs ran.
        post_migrate.connect(sync_role_permissions)
