"""The police register in the admin: the commissioner writes, the director follows up."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import clock, shown
from casino.admin_base import RecordAdmin
from casino.police import services
from casino.police.models import Observation


class ObservationForm(forms.Form):
    visited_at = forms.DateTimeField(
        label=gettext_lazy("visite le"),
        help_text=gettext_lazy("jj/mm/aaaa hh:mm, à l'heure du casino"),
    )
    table_number = forms.IntegerField(label=gettext_lazy("table"), required=False, min_value=1)
    checks = forms.CharField(label=gettext_lazy("vérifications"), widget=forms.Textarea)
    injunctions = forms.CharField(
        label=gettext_lazy("injonctions"), required=False, widget=forms.Textarea
    )


class FollowUpForm(forms.Form):
    action = forms.CharField(label=gettext_lazy("suite donnée"), widget=forms.Textarea)


@admin.register(Observation)
class ObservationAdmin(RecordAdmin):
    list_display = ["visited_at", "commissioner", "table", "follow_up_due", "followed_up"]
    list_filter = ["commissioner", "table"]
    date_hierarchy = "visited_at"
    readonly_fields = [
        "commissioner",
        "visited_at",
        "recorded_at",
        "table",
        "checks",
        "injunctions",
        "follow_up_due",
        "followed_up",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("suite"))
    def followed_up(self, observation: Observation) -> str:
        follow_up = getattr(observation, "follow_up", None)
        if follow_up is not None:
            return f"{shown.moment(follow_up.at)} {follow_up.director} : {follow_up.action}"
        late = _(" (en retard)") if clock.now() > observation.follow_up_due else ""
        url = reverse("admin:police_observation_follow_up", args=[observation.pk])
        return format_html('<a class="button" href="{}">{}</a>{}', url, _("Donner suite"), late)

    def get_urls(self) -> list[Any]:
        return [
            path(
                "write/",
                self.admin_site.admin_view(self.write_view),
                name="police_observation_write",
            ),
            path(
                "<int:pk>/follow-up/",
                self.admin_site.admin_view(self.follow_up_view),
                name="police_observation_follow_up",
            ),
            *super().get_urls(),
        ]

    def write_view(self, request: HttpRequest) -> HttpResponse:
        def act(data: dict[str, Any]) -> tuple[str, int]:
            services.observation_record(actor=request.user, **data)
            return _("Observation enregistrée"), messages.SUCCESS

        return self.act_view(
            request,
            form=ObservationForm(request.POST or None),
            act=act,
            done_url=reverse("admin:police_observation_changelist"),
            template="admin/act.html",
            title=_("Registre de police : observation"),
        )

    def follow_up_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        observation = get_object_or_404(Observation, pk=pk)

        def act(data: dict[str, Any]) -> tuple[str, int]:
            services.follow_up_record(actor=request.user, observation_id=pk, **data)
            return _("Suite enregistrée"), messages.SUCCESS

        return self.act_view(
            request,
            form=FollowUpForm(request.POST or None),
            act=act,
            done_url=reverse("admin:police_observation_change", args=[pk]),
            template="admin/act.html",
            title=_("Suite à la %(observation)s") % {"observation": observation},
        )
