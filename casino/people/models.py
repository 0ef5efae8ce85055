"""People: the staff profile beside Django's user; roles are Django groups (see roles.py)."""

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
    employer = models.CharField(max_length=20, choices=Employer.choices, default=Employer.CASINO)

    class Meta:
        verbose_name = "profil / staff profile"
        verbose_name_plural = "profils / staff profiles"

    def __str__(self) -> str:
        return self.full_name
