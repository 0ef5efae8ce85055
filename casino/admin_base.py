"""Admin building blocks shared by every app."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html


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

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        return [f.name for f in self.model._meta.fields]


def pretty_json(value: Any) -> str:
    return format_html(
        "<pre style='white-space:pre-wrap;margin:0'>{}</pre>",
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True),
    )
