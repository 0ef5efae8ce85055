"""The police observations register: the commissioner's visits, checks and injunctions, and the
director's follow-up, due within eight days."""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from audit.append_only import append_only
from casino import shown
from casino.floor.models import Table

FOLLOW_UP_WITHIN = dt.timedelta(days=8)


class Observation(models.Model):
    """One entry of the commissioner in the register."""

    commissioner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("commissaire"),
    )
    visited_at = models.DateTimeField(verbose_name=_("visite le"))
    recorded_at = models.DateTimeField(verbose_name=_("enregistrée le"))
    table = models.ForeignKey(
        Table, null=True, blank=True, on_delete=models.PROTECT, verbose_name=_("table")
    )
    checks = models.TextField(
        help_text=_("ce qui a été vérifié et constaté"), verbose_name=_("vérifications")
    )
    injunctions = models.TextField(
        blank=True,
        help_text=_("ce qu'il est ordonné à la maison de faire"),
        verbose_name=_("injonctions"),
    )
    follow_up_due = models.DateTimeField(db_index=True, verbose_name=_("suite due le"))

    class Meta:
        verbose_name_plural = _("registre de police")
        ordering = ["-visited_at", "-id"]
        verbose_name = _("observation de police")
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(checks=""), name="checks_made")]

    def __str__(self) -> str:
        return _("visite du %(at)s (%(commissioner)s)") % {
            "at": shown.moment(self.visited_at),
            "commissioner": self.commissioner,
        }


class FollowUp(models.Model):
    """The director's answer to an observation: what was done."""

    observation = models.OneToOneField(
        Observation,
        on_delete=models.PROTECT,
        related_name="follow_up",
        verbose_name=_("observation"),
    )
    director = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="+",
        verbose_name=_("directeur"),
    )
    at = models.DateTimeField(verbose_name=_("date"))
    action = models.TextField(verbose_name=_("suite donnée"))

    class Meta:
        verbose_name_plural = _("suites données")
        verbose_name = _("suite donnée")
        triggers = append_only()
        constraints = [models.CheckConstraint(condition=~models.Q(action=""), name="action_taken")]

    def __str__(self) -> str:
        return _("suite du %(day)s à la %(observation)s") % {
            "day": shown.moment(self.at),
            "observation": self.observation,
        }
