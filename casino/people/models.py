"""People: the staff profile beside Django's user; roles are Django groups (see roles.py).

Beside them, what lets a person in: one-time setup codes (how anyone gets a password and a second
factor), API tokens (hashed, expiring), and the login attempts that throttling counts.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class StaffProfile(models.Model):
    class Employer(models.TextChoices):
        CASINO = "casino", _("casino")
        POLICE = "police", _("police")
        REGULATOR = "regulator", _("autorité de contrôle")

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="staff_profile",
        verbose_name=_("compte"),
    )
    full_name = models.CharField(_("nom complet"), max_length=200)
    licence_number = models.CharField(
        _("agrément ou commission"),
        max_length=60,
        blank=True,
        help_text=_("l'agrément du personnel de jeux, ou la commission du commissaire"),
    )
    # Follows from the roles at creation and never changes (the database refuses it, 0003).
    employer = models.CharField(
        max_length=20,
        choices=Employer.choices,
        default=Employer.CASINO,
        editable=False,
        verbose_name=_("employeur"),
    )

    class Meta:
        verbose_name = _("profil")
        verbose_name_plural = _("profils")

    def __str__(self) -> str:
        return self.full_name


class SetupCode(models.Model):
    """A one-time code that lets its holder choose a password (and enrol a second factor).

    Only its SHA-256 is kept: the code is shown once to whoever issued it, who hands it over.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="setup_codes"
    )
    code_hash = models.CharField(max_length=64, unique=True)
    issued_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,  # the system: bootstrap and maintenance commands
        related_name="+",
    )
    issued_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True)
    withdrawn_at = models.DateTimeField(null=True)  # a newer code, or the account closed

    class Meta:
        verbose_name = _("code d'initialisation")
        verbose_name_plural = _("codes d'initialisation")

    def __str__(self) -> str:
        return f"setup code for user {self.user_id}, issued {self.issued_at:%Y-%m-%d %H:%M}"


class ApiToken(models.Model):
    """An API token: the key is stored only as its SHA-256; ``prefix`` names it in listings."""

    # Found through its index in Meta.indexes, which begins with it: no index of its own.
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        db_index=False,
        related_name="api_tokens",
    )
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    # The person's session hash at issue: a password change changes it, and the token dies.
    auth_hash = models.CharField(max_length=128)
    revoked_at = models.DateTimeField(null=True)
    revoked_reason = models.CharField(max_length=60, blank=True)
    last_used_at = models.DateTimeField(null=True)

    class Meta:
        verbose_name = _("jeton d'API")
        verbose_name_plural = _("jetons d'API")
        indexes = [models.Index(fields=["user", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.prefix}…"


class LoginAttempt(models.Model):
    """One try at the admin login or the token endpoint; failures since the last success of the
    same username from the same address are what throttling counts."""

    username = models.CharField(max_length=150)
    ip = models.GenericIPAddressField(null=True)
    at = models.DateTimeField()
    ok = models.BooleanField()
    where = models.CharField(max_length=10)  # admin | api

    class Meta:
        verbose_name = _("tentative de connexion")
        verbose_name_plural = _("tentatives de connexion")
        indexes = [models.Index(fields=["username", "ip", "-at"])]

    def __str__(self) -> str:
        return f"{self.username}@{self.ip} {'ok' if self.ok else 'failed'}"
