"""One JSON shape for every refusal: ``{"code", "message", "where"}`` (HackSoft's handler)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from casino.errors import DomainError


def _first_error(detail: Any, path: str = "") -> tuple[str, str]:
    """The first field (as a dotted path) and message of a DRF validation error."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            sub = key if key != "non_field_errors" else ""
            return _first_error(value, f"{path}.{sub}".strip(".") if sub else path)
    if isinstance(detail, list) and detail:
        if isinstance(detail[0], (dict, list)):
            for index, item in enumerate(detail):
                if item:
                    return _first_error(item, f"{path}[{index}]")
        return path, str(detail[0])
    return path, str(detail)


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
        where, message = _first_error(exc.detail)
        response.data = error_body("invalid", message, where)
    elif isinstance(exc, exceptions.APIException):
        detail = exc.detail
        message = str(detail if not isinstance(detail, dict) else detail.get("detail", detail))
        response.data = error_body(str(getattr(detail, "code", exc.default_code)), message, None)
    return response


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A URL that names no resource (``/api/v1/coups/abc``): under /api/ the refusal has the API's
    shape like every other; elsewhere Django's own page."""
    if request.path.startswith("/api/"):
        body = error_body("not_found", f"{request.path} names no resource of the API", "path")
        return JsonResponse(body, status=404)
    return page_not_found(request, exception)
