"""One JSON shape for every refusal: ``{"code", "message", "where"}`` (HackSoft's handler), and one
vocabulary of codes (casino/api/vocabulary.py lists them with their statuses).

The framework's own refusals get codes of the same vocabulary: a body that is not JSON is
``bad_json``, an unknown field ``unknown_field``, a missing one ``missing_field``, a value of the
wrong type or out of range ``invalid``; ``where`` names the field (dotted, with ``[i]`` for list
items), the header, or the path parameter at fault, and is null only when nothing in the request is
(the person's roles, the record's state).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.translation import gettext as _
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from casino.errors import DomainError

# DRF's code for a field error → ours. Anything else a field can be refused for is ``invalid``.
FIELD_CODES = {"required": "missing_field", "unknown": "unknown_field"}

# DRF's exceptions → (our code, where).
FRAMEWORK_CODES: dict[type[exceptions.APIException], tuple[str, str | None]] = {
    exceptions.ParseError: ("bad_json", "body"),
    exceptions.UnsupportedMediaType: ("unsupported_media_type", "Content-Type"),
    exceptions.NotAcceptable: ("not_acceptable", "Accept"),
    exceptions.MethodNotAllowed: ("method_not_allowed", "method"),
    exceptions.NotAuthenticated: ("not_authenticated", "Authorization"),
    exceptions.AuthenticationFailed: ("authentication_failed", "Authorization"),
    exceptions.PermissionDenied: ("role_required", None),
    exceptions.NotFound: ("not_found", "path"),
    exceptions.Throttled: ("too_many_attempts", None),
}


def _first_error(detail: Any, path: str = "") -> tuple[str, str, str]:
    """The first field (as a dotted path), message and DRF code of a validation error."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            if isinstance(key, int):  # an item of a list of objects (DRF keys them by index)
                return _first_error(value, f"{path}[{key}]")
            sub = key if key not in ("non_field_errors", "detail") else ""
            return _first_error(value, f"{path}.{sub}".strip(".") if sub else path)
    if isinstance(detail, list) and detail:
        if isinstance(detail[0], (dict, list)):
            for index, item in enumerate(detail):
                if item:
                    return _first_error(item, f"{path}[{index}]")
        return _first_error(detail[0], path)
    return path, str(detail), str(getattr(detail, "code", "invalid"))


def error_body(code: str, message: str, where: str | None) -> dict[str, Any]:
    return {"code": code, "message": message, "where": where or None}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        return Response(error_body(exc.code, exc.message, exc.where), status=exc.http_status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, exceptions.ValidationError):
        where, message, field_code = _first_error(exc.detail)
        # A fault of no single field (a body that is an array, not an object) is the body's.
        response.data = error_body(FIELD_CODES.get(field_code, "invalid"), message, where or "body")
    elif isinstance(exc, exceptions.APIException):
        code, where = _framework_code(exc)
        detail = exc.detail
        message = str(detail if not isinstance(detail, dict) else detail.get("detail", detail))
        response.data = error_body(code, message, where)
    return response


def _framework_code(exc: exceptions.APIException) -> tuple[str, str | None]:
    # Our authentication names its refusals (token_expired, token_revoked...).
    own = str(getattr(exc.detail, "code", ""))
    if isinstance(exc, exceptions.AuthenticationFailed) and own.startswith(("token_", "account_")):
        return own, "Authorization"
    for kind in type(exc).__mro__:
        if kind in FRAMEWORK_CODES:
            return FRAMEWORK_CODES[kind]
    return own or exc.default_code, None


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL that names no resource (``/api/v1/coups/abc``): under /api/ the refusal has the API's
    shape like every other; elsewhere Django's own page."""
    if request.path.startswith("/api/"):
        body = error_body(
            "not_found",
            _("%(path)s ne désigne aucune ressource de l'API") % {"path": request.path},
            "path",
        )
        return JsonResponse(body, status=404)
    return page_not_found(request, exception)
