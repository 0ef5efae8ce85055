from __future__ import annotations

from django.contrib import admin

from casino.admin_base import RecordAdmin
from casino.floor.models import Shift, Table


@admin.register(Table)
class TableAdmin(RecordAdmin):
    list_display = ["number", "game", "reglement"]


@admin.register(Shift)
class ShiftAdmin(RecordAdmin):
    list_display = ["table", "opened_at", "opened_by", "closed_at"]
    list_filter = ["table"]
    date_hierarchy = "opened_at"
