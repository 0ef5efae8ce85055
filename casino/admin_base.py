"""Admin building blocks shared by every app."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render

from casino.errors import DomainError


class RecordAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """What is recorded is shown, never added, changed or deleted here (superusers included).

    Changes happen through service actions; corrections are new records.
    """

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def act_view(
        self,
        request: HttpRequest,
        *,
        form: forms.Form,
        act: Callable[[dict[str, Any]], tuple[str, int]],
        done_url: str,
        template: str,
        **context: Any,
    ) -> HttpResponse:
        """An admin page whose form calls one service: ``act(cleaned_data)`` returns the message
        and its level; a refusal (DomainError) is shown on the form and nothing is recorded."""
        if request.method == "POST" and form.is_valid():
            try:
                message, level = act(form.cleaned_data)
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                self.message_user(request, message, level)
                return HttpResponseRedirect(done_url)
        page = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form}
        return render(request, template, {**page, **context})

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        # The fields a page declares (computed displays included), else every model field.
        return self.readonly_fields or [f.name for f in self.model._meta.fields]


class RecordInline(admin.TabularInline):  # type: ignore[type-arg]
    """Related records shown on a record's page: its ``fields``, read-only, nothing added."""

    extra = 0
    can_delete = False

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return self.fields

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
