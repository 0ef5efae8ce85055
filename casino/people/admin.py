"""People in the admin: shown read-only; every change is a button whose form calls a service.

No password, activity flag, staff or superuser flag, group or employer is edited here: the services
(``casino/people/services.py``) decide who may do what, and audit it. A setup code is shown once on
the page that issued it, never stored in a message or a cookie.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import Group, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.admin_base import RecordAdmin
from casino.errors import DomainError
from casino.people import services
from casino.people.models import SetupCode, StaffProfile
from casino.people.roles import ROLE_LABELS, Role
from casino.people.services import held_roles

ROLE_CHOICES = [(r.value, ROLE_LABELS[r]) for r in Role]


class RolesForm(forms.Form):
    roles = forms.MultipleChoiceField(
        choices=ROLE_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=gettext_lazy("rôles"),
    )


class ProfileForm(forms.Form):
    full_name = forms.CharField(label=gettext_lazy("nom complet"), max_length=200)
    licence_number = forms.CharField(
        label=gettext_lazy("agrément ou commission"), max_length=60, required=False
    )


class CreateForm(ProfileForm):
    username = forms.CharField(label=gettext_lazy("identifiant"), max_length=150)
    roles = RolesForm.base_fields["roles"]


class ReasonForm(forms.Form):
    reason = forms.CharField(label=gettext_lazy("motif"), max_length=200)


class ConfirmForm(forms.Form):
    confirm = forms.BooleanField(label=gettext_lazy("confirmer"), required=True)


# The acts on a person: (url name, button label, form, service call returning (message, code)).
Act = Callable[[HttpRequest, User, dict[str, Any]], tuple[str, str | None]]


def _roles(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    services.staff_set_roles(actor=request.user, user=user, roles=[Role(r) for r in data["roles"]])
    return _("Rôles enregistrés"), None


def _profile(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    services.staff_change_profile(actor=request.user, user=user, **data)
    return _("Profil enregistré"), None


def _activate(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    return _("Compte activé"), services.staff_activate(actor=request.user, user=user)


def _deactivate(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    services.staff_deactivate(actor=request.user, user=user, reason=data["reason"])
    return _("Compte désactivé"), None


def _reset(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    code = services.staff_reset_credentials(actor=request.user, user=user)
    if code is None:
        return _("Identifiants effacés ; le compte attend l'activation par son corps"), None
    return _("Identifiants effacés"), code


def _code(request: HttpRequest, user: User, data: dict[str, Any]) -> tuple[str, str | None]:
    return _("Nouveau code d'initialisation"), services.staff_issue_setup_code(
        actor=request.user, user=user
    )


ACTS: dict[str, tuple[Any, type[forms.Form], Act]] = {
    "roles": (gettext_lazy("Rôles"), RolesForm, _roles),
    "profile": (gettext_lazy("Profil"), ProfileForm, _profile),
    "activate": (gettext_lazy("Activer"), ConfirmForm, _activate),
    "deactivate": (gettext_lazy("Désactiver"), ReasonForm, _deactivate),
    "reset": (gettext_lazy("Réinitialiser les identifiants"), ConfirmForm, _reset),
    "code": (gettext_lazy("Nouveau code d'initialisation"), ConfirmForm, _code),
}


admin.site.unregister(User)
admin.site.unregister(Group)
if admin.site.is_registered(TOTPDevice):  # nobody reads anyone's TOTP secret
    admin.site.unregister(TOTPDevice)


@admin.register(User)
class StaffAdmin(RecordAdmin):
    list_display = ["username", "full_name", "role_list", "is_active", "last_login"]
    list_filter = ["groups", "is_active"]
    search_fields = ["username", "staff_profile__full_name"]
    readonly_fields = [
        "username",
        "full_name",
        "licence_number",
        "employer",
        "role_list",
        "is_active",
        "credentials",
        "is_superuser",
        "last_login",
        "date_joined",
        "acts",
    ]
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).select_related("staff_profile")

    @admin.display(description=gettext_lazy("nom"))
    def full_name(self, user: User) -> str:
        profile = getattr(user, "staff_profile", None)
        return profile.full_name if profile else ""

    @admin.display(description=gettext_lazy("agrément"))
    def licence_number(self, user: User) -> str:
        profile = getattr(user, "staff_profile", None)
        return profile.licence_number if profile else ""

    @admin.display(description=gettext_lazy("employeur"))
    def employer(self, user: User) -> str:
        profile = getattr(user, "staff_profile", None)
        return profile.get_employer_display() if profile else "–"

    @admin.display(description=gettext_lazy("rôles"))
    def role_list(self, user: User) -> str:
        return ", ".join(sorted(r.value for r in held_roles(user)))

    @admin.display(description=gettext_lazy("identifiants"))
    def credentials(self, user: User) -> str:
        device = TOTPDevice.objects.filter(user=user, confirmed=True).exists()
        pending = SetupCode.objects.filter(user=user, used_at=None, withdrawn_at=None).exists()
        return _(
            "mot de passe : %(password)s ; TOTP : %(totp)s ; code en attente : %(pending)s"
        ) % {
            "password": _("oui") if user.has_usable_password() else _("non"),
            "totp": _("oui") if device else _("non"),
            "pending": _("oui") if pending else _("non"),
        }

    @admin.display(description=gettext_lazy("actes"))
    def acts(self, user: User) -> str:
        links = [
            (reverse("admin:people_act", args=[user.pk, name]), label)
            for name, (label, _form, _act) in ACTS.items()
        ]
        return format_html_join(" ", '<a class="button" href="{}">{}</a>', links)

    def get_urls(self) -> list[Any]:
        act = self.admin_site.admin_view(self.act_on_person)
        create = self.admin_site.admin_view(self.create_person)
        return [
            path("<int:pk>/act/<str:name>/", act, name="people_act"),
            path("create/", create, name="people_create"),
            *super().get_urls(),
        ]

    def _done(
        self, request: HttpRequest, user: User, message: str, code: str | None
    ) -> HttpResponse:
        done_url = reverse("admin:auth_user_change", args=[user.pk])
        if code is None:
            self.message_user(request, message, messages.SUCCESS)
            return HttpResponseRedirect(done_url)
        expires = SetupCode.objects.filter(user=user, used_at=None, withdrawn_at=None).first()
        return render(
            request,
            "admin/people/setup_code.html",
            {
                **self.admin_site.each_context(request),
                "title": message,
                "message": message,
                "person": user,
                "code": code,
                "expires_at": expires.expires_at if expires else "",
                "setup_url": request.build_absolute_uri(reverse("account-setup")),
                "done_url": done_url,
            },
        )

    def _form_page(self, request: HttpRequest, form: forms.Form, title: str) -> HttpResponse:
        page = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form}
        return render(request, "admin/act.html", {**page, "title": title})

    def act_on_person(self, request: HttpRequest, pk: int, name: str) -> HttpResponse:
        user = get_object_or_404(User, pk=pk)
        if name not in ACTS or not self.has_view_permission(request, user):
            raise PermissionDenied
        label, form_class, act = ACTS[name]
        initial: dict[str, Any] = {"roles": [r.value for r in held_roles(user)]}
        profile = StaffProfile.objects.filter(user=user).first()
        if profile is not None:
            initial |= {"full_name": profile.full_name, "licence_number": profile.licence_number}
        form = form_class(request.POST or None, initial=initial)
        if request.method == "POST" and form.is_valid():
            try:
                message, code = act(request, user, form.cleaned_data)
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                return self._done(request, user, message, code)
        return self._form_page(
            request, form, _("%(act)s : %(person)s") % {"act": label, "person": user.username}
        )

    def create_person(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = CreateForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                with transaction.atomic():  # the account and its first code, or neither
                    user = services.staff_create(
                        actor=request.user,
                        username=data["username"],
                        full_name=data["full_name"],
                        licence_number=data["licence_number"],
                        roles=[Role(r) for r in data["roles"]],
                    )
                    code = None
                    if user.is_active:
                        code = services.staff_issue_setup_code(actor=request.user, user=user)
            except DomainError as exc:
                form.add_error(None, exc.message)
            else:
                message = _("Compte ouvert")
                if code is None:
                    message = _("Compte ouvert ; à activer par son corps")
                return self._done(request, user, message, code)
        return self._form_page(request, form, _("Ouvrir un compte"))
