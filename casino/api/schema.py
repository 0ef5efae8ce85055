"""The OpenAPI schema says what a client must know to be written from it alone: for every operation
the refusals it may answer (each status with the enumeration of its codes), and in the schema's
description the whole vocabulary, code by code, with the operations that use it."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from drf_spectacular.openapi import AutoSchema

from casino.api import vocabulary
from casino.api.acts import RecordAct
from casino.api.permissions import HoldsRole
from casino.api.resources import Collection, Item


def operation_codes(view: Any, method: str) -> set[str]:
    """The codes an operation may answer (see casino/api/vocabulary.py)."""
    view_class = type(view)
    codes: set[str] = set()
    if getattr(view_class, "authentication_classes", None) != []:
        codes.update(vocabulary.EVERY_OPERATION)
    else:
        codes.add("unavailable")
    if method == "GET":
        if any(p is HoldsRole for p in view_class.permission_classes):
            codes.update(vocabulary.EVERY_READ)
        if isinstance(view, Collection):
            codes.update(vocabulary.EVERY_COLLECTION)
        if isinstance(view, Item):
            codes.update(vocabulary.EVERY_ITEM)
        handler = getattr(view_class, "get", None)
    else:
        codes.update(vocabulary.EVERY_WRITE)
        handler = getattr(view_class, method.lower(), None)
        if issubclass(view_class, RecordAct) or getattr(handler, "is_idempotent", False):
            codes.update(vocabulary.EVERY_IDEMPOTENT_WRITE)
    if handler is not None:
        codes.update(kind.code for kind in vocabulary.raised_by(handler, view_class))
    act = getattr(view_class, "act", None)
    if act is not None and method == "POST":
        codes.update(kind.code for kind in vocabulary.raised_by(act))
    return codes


def error_schema(codes: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "code": {"type": "string", "enum": codes},
            "message": {"type": "string", "description": "in the language asked (Accept-Language)"},
            "where": {
                "type": ["string", "null"],
                "description": "the field (dotted, [i] for items), header or path parameter at "
                "fault; null when nothing in the request is (a role, a state)",
            },
        },
        "required": ["code", "message", "where"],
        "additionalProperties": False,
    }


class CasinoAutoSchema(AutoSchema):
    """drf-spectacular's schema, with each collection's filters and each operation's refusals."""

    def get_override_parameters(self) -> list[Any]:
        parameters = list(super().get_override_parameters())
        filters = getattr(self.view, "filters", None)
        if isinstance(self.view, Collection) and filters is not None and self.method == "GET":
            parameters.append(filters)
        return parameters

    def _get_response_bodies(self, direction: str = "response") -> dict[str, Any]:
        bodies: dict[str, Any] = super()._get_response_bodies(direction)  # type: ignore[arg-type]
        # An act answers 201 with the record it made or changed (the token endpoint, a login,
        # answers 200).
        if (
            self.method == "POST"
            and "200" in bodies
            and not getattr(self.view, "answers_200", False)
        ):
            bodies["201"] = bodies.pop("200")
        catalogue = vocabulary.catalogue()
        by_status: dict[int, list[str]] = defaultdict(list)
        for code in sorted(operation_codes(self.view, self.method)):
            by_status[catalogue[code].status].append(code)
        for status, codes in sorted(by_status.items()):
            bodies[str(status)] = {
                "description": ", ".join(codes),
                "content": {"application/json": {"schema": error_schema(codes)}},
            }
        return bodies


def vocabulary_table(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """Postprocessing hook: the schema's description ends with the vocabulary, each code with its
    status, meaning and the operations that answer it."""
    used: dict[str, list[str]] = defaultdict(list)
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            for status, response in operation.get("responses", {}).items():
                if not status.startswith(("4", "5")):
                    continue
                schema = response["content"]["application/json"]["schema"]
                for code in schema["properties"]["code"]["enum"]:
                    used[code].append(f"{method.upper()} {path}")
    rows = [
        "",
        "## Refusals",
        "",
        "Every refusal is `{code, message, where}`.",
        "",
        "| code | status | meaning | operations |",
        "|---|---|---|---|",
    ]
    for code, entry in sorted(vocabulary.catalogue().items(), key=lambda kv: (kv[1].status, kv[0])):
        operations = used.get(code, [])
        shown = "every operation" if len(operations) > 40 else "<br>".join(operations) or "–"
        rows.append(f"| `{code}` | {entry.status} | {entry.meaning} | {shown} |")
    result["info"]["description"] = result["info"].get("description", "") + "\n".join(rows)
    return result
