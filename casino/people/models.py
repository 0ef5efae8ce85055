"""People: the staff profile beside Django's user; roles are Django groups (see roles.py).

Beside them, what lets a person in: one-time setup codes (how anyone gets a password and a second
factor), API tokens (hashed, expiring), and the login attempts that throttling counts.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StaffProfile(models.Model):
    class Employer(models.TextChoices):
        CASINO = "casino", "Casino"
        POLICE = "police", "Police"
        REGULATOR = "regulator", "Autorité de contrôle / Regulator"

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="staff_profile"
    )
    full_name = models.CharField("nom complet / full name", max_length=200)
    licence_number = models.CharField(
        "agrément ou commission / licence or warrant",
        max_length=60,
        blank=True,
        help_text="Agrément du personnel de jeux, ou commission du commissaire.",
    )
    # Follows from the roles at creation and never changes (the database refuses it, 0003).
    employer = models.CharField(
        max_length=20, choices=Employer.choices, default=Employer.CASINO, editable=False
    )

    class Meta:
        verbose_name = "profil / staff profile"
        verbose_name_plural = "profils / staff profiles"

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
        verbose_name = "code d'initialisation / setup code"
        verbose_name_plural = "codes d'initialisation / setup codes"

    def __str__(self) -> str:
        return f"setup code for user {self.user_id}, issued {self.issued_at:%Y-%m-%d %H:%M}"


class ApiToken(models.Model):
    """An API token: the key is stored only as its SHA-256; ``prefix`` names it in listings."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="api_tokens"
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
        verbose_name = "jeton d'API / API token"
        verbose_name_plural = "jetons d'API / API tokens"
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
        indexes = [models.Index(fields=["username", "ip", "-at"])]

    def __str__(self) -> str:
        return f"{self.username}@{self.ip} {'ok' if self.ok else 'failed'}"
