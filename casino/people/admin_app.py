"""Django's admin, on our site (second factor, throttled login, audited password change)."""

from django.contrib.admin.apps import AdminConfig


class CasinoAdminConfig(AdminConfig):
    default_site = "casino.people.adminsite.CasinoAdminSite"
