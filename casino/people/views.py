"""``/account/setup/``: the person, with the one-time code they were handed, chooses a password and
enrols their second factor. Step 1 checks username and code (nothing written); step 2 sets the
password and confirms the device with its first code, in ``account_setup``."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_protect
from django_otp.plugins.otp_totp.models import TOTPDevice

from casino.errors import DomainError
from casino.people.services import (
    account_setup,
    needs_second_factor,
    new_totp_key,
    setup_code_holder,
    totp_secret_base32,
)

SESSION_KEY = "people_account_setup"


def _step2(request: HttpRequest, pending: dict[str, Any], errors: list[str]) -> HttpResponse:
    context: dict[str, Any] = {"step": 2, "username": pending["username"], "errors": errors}
    if pending["key"]:
        user = User.objects.get(username=pending["username"])
        context["secret"] = totp_secret_base32(pending["key"])
        context["otpauth_uri"] = TOTPDevice(user=user, key=pending["key"]).config_url
    return render(request, "people/setup.html", context)


@never_cache
@csrf_protect
def account_setup_view(request: HttpRequest) -> HttpResponse:
    pending = request.session.get(SESSION_KEY)
    if request.method != "POST":
        return render(request, "people/setup.html", {"step": 1})
    if request.POST.get("step") == "2" and pending:
        password = request.POST.get("password1", "")
        if password != request.POST.get("password2", ""):
            return _step2(request, pending, [_("les deux mots de passe diffèrent")])
        try:
            account_setup(
                username=pending["username"],
                code=pending["code"],
                password=password,
                totp_key=pending["key"],
                otp_token=request.POST.get("otp", ""),
            )
        except DomainError as exc:
            return _step2(request, pending, [exc.message])
        del request.session[SESSION_KEY]
        context = {"done": True, "second_factor": bool(pending["key"])}
        return render(request, "people/setup.html", context)
    username = request.POST.get("username", "").strip()
    code = request.POST.get("code", "")
    try:
        user = setup_code_holder(username=username, code=code)
    except DomainError as exc:
        return render(
            request, "people/setup.html", {"step": 1, "username": username, "errors": [exc.message]}
        )
    # The secret waits in the server-side session until the first code confirms it.
    pending = {
        "username": user.username,
        "code": code,
        "key": new_totp_key() if needs_second_factor(user) else None,
    }
    request.session[SESSION_KEY] = pending
    return _step2(request, pending, [])
