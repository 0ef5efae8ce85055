"""The admin site: a login that asks the TOTP code of those who need one, throttled like the API's,
and a "change my password" that goes through the service (audited, API tokens revoked)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth.views import PasswordChangeView
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.translation import gettext_lazy

from casino.errors import DomainError


class AdminLoginForm(AdminAuthenticationForm):
    otp_token = forms.CharField(
        label=gettext_lazy("Code TOTP"),
        required=False,
        max_length=10,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
        help_text=gettext_lazy(
            "Demandé au directeur, au comité, au commissaire, aux auditeurs, aux inspecteurs et "
            "aux superutilisateurs."
        ),
    )

    def clean(self) -> dict[str, Any]:
        from casino.people.login import client_ip, login_check

        username = self.cleaned_data.get("username") or ""
        password = self.cleaned_data.get("password") or ""
        if username and password:
            try:
                user = login_check(
                    username=username,
                    password=password,
                    otp=self.cleaned_data.get("otp_token") or "",
                    ip=client_ip(self.request),
                    where="admin",
                )
            except DomainError as exc:
                raise forms.ValidationError(exc.message, code=exc.code) from None
            self.confirm_login_allowed(user)
            self.user_cache = user
        return self.cleaned_data


class ServicePasswordChangeView(PasswordChangeView):
    def form_valid(self, form: Any) -> HttpResponse:
        from casino.people.services import account_password_change

        try:
            account_password_change(
                user=self.request.user,
                old_password=form.cleaned_data["old_password"],
                new_password=form.cleaned_data["new_password1"],
            )
        except DomainError as exc:
            form.add_error(None, exc.message)
            return self.form_invalid(form)
        update_session_auth_hash(self.request, self.request.user)
        return HttpResponseRedirect(self.get_success_url())


class CasinoAdminSite(admin.AdminSite):
    """Titled with the casino's name (CASINO_NAME), never Django's."""

    index_title = gettext_lazy("Back-office")

    @property  # type: ignore[override]
    def site_header(self) -> str:
        from django.conf import settings

        return settings.CASINO_NAME

    @property  # type: ignore[override]
    def site_title(self) -> str:
        return self.site_header

    def get_urls(self) -> list[Any]:
        from django.urls import include, path

        from casino.pit.urls import urls as pit_urls

        # The pit's pages behind the same login and second factor as every admin page; Django's
        # own index (every register the person may read) under registers/, the index being the
        # person's home (see ``index``).
        return [
            path("pit/", include(pit_urls(self.admin_view))),
            path("registers/", self.admin_view(self.registers), name="registers"),
            *super().get_urls(),
        ]

    login_form = AdminLoginForm
    login_template = "admin/people/login.html"

    def has_permission(self, request: HttpRequest) -> bool:
        from casino.people.services import needs_second_factor

        if not super().has_permission(request):
            return False
        user = request.user
        if needs_second_factor(user):  # type: ignore[arg-type]
            return bool(getattr(user, "is_verified", lambda: False)())
        return True

    def password_change(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        request.current_app = self.name
        return ServicePasswordChangeView.as_view(
            success_url=reverse("admin:password_change_done", current_app=self.name),
            extra_context={**self.each_context(request), **(extra_context or {})},
        )(request)

    def index(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> Any:
        """The first page after login is the person's home: what waits for them
        (casino/pit/home.py). The model lists stay in the menu and under ``registers``."""
        from casino.pit.home import home

        return home(request)

    def registers(self, request: HttpRequest) -> Any:
        from django.utils.translation import gettext as _

        return super().index(request, extra_context={"title": _("Tous les registres")})
