"""Staff in the admin: roles are changed through ``staff_set_roles`` (segregation, audit)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group, User
from django.http import HttpRequest

from casino.errors import DomainError
from casino.people.models import StaffProfile
from casino.people.roles import Role, check_compatible
from casino.people.services import roles_of, staff_set_roles


class StaffProfileInline(admin.StackedInline):  # type: ignore[type-arg]
    model = StaffProfile
    can_delete = False


class StaffChangeForm(UserAdmin.form):  # type: ignore[name-defined,misc]
    roles = forms.MultipleChoiceField(
        choices=[(r.value, r.label) for r in Role],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Rôles / Roles",
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.fields["roles"].initial = [r.value for r in roles_of(self.instance)]

    def clean_roles(self) -> list[str]:
        roles: list[str] = self.cleaned_data["roles"]
        try:
            check_compatible(roles)
        except DomainError as exc:
            raise forms.ValidationError(exc.message) from None
        return roles


admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class StaffAdmin(UserAdmin):
    form = StaffChangeForm
    inlines = [StaffProfileInline]
    list_display = ["username", "full_name", "role_list", "is_active", "last_login"]
    list_filter = ["groups", "is_active"]
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Rôles / Roles", {"fields": ("roles",)}),
        ("Accès / Access", {"fields": ("is_active", "is_staff", "last_login", "date_joined")}),
    )
    readonly_fields = ["last_login", "date_joined"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # people who acted stay on record; deactivate instead

    @admin.display(description="nom / name")
    def full_name(self, user: User) -> str:
        profile = getattr(user, "staff_profile", None)
        return profile.full_name if profile else ""

    @admin.display(description="rôles / roles")
    def role_list(self, user: User) -> str:
        return ", ".join(sorted(r.value for r in roles_of(user)))

    def save_related(self, request: HttpRequest, form: Any, formsets: Any, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        if "roles" in form.cleaned_data:
            staff_set_roles(
                actor=request.user,
                user=form.instance,
                roles=[Role(r) for r in form.cleaned_data["roles"]],
            )
