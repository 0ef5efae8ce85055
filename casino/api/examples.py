"""Every operation's example, taken from a real séance played over the API by the schema tests'
tour (tests/api/tour.py; ``make api-examples`` writes them again), and put in the schema so a
vendor reads a true request and its true answer beside each operation."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

from django.conf import settings

EXAMPLES_FILE = Path(settings.BASE_DIR) / "docs" / "api-examples.json"

# Credentials are never examples, even a throw-away test database's.
MASKED = {"token": "<the key, shown once>", "password": "<password>", "otp": "<TOTP code>"}


def example_key(method: str, route: str) -> str:
    return f"{method.upper()} {route}"


def masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: MASKED.get(k, masked(v)) if k in MASKED else masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value


@functools.cache
def recorded() -> dict[str, Any]:
    if not EXAMPLES_FILE.exists():
        return {}
    examples: dict[str, Any] = json.loads(EXAMPLES_FILE.read_text())
    return examples


def with_examples(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """Postprocessing hook: each operation's recorded request and answer as its examples."""
    for route, methods in result.get("paths", {}).items():
        for method, operation in methods.items():
            example = recorded().get(example_key(method, route))
            if example is None:
                continue
            body = operation.get("requestBody", {}).get("content", {})
            for media in body.values():
                if example["request"] is not None:
                    media["examples"] = {"tour": {"value": example["request"]}}
            answer = operation["responses"].get(str(example["status"]), {}).get("content", {})
            if "application/json" in answer and example["response"] is not None:
                answer["application/json"]["examples"] = {"tour": {"value": example["response"]}}
    return result


def closed_objects(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """Postprocessing hook: a record's schema lists every property it has, so a client (and our
    tests) can tell a field the schema does not name from one it does."""
    for schema in result.get("components", {}).get("schemas", {}).values():
        if schema.get("type") == "object" and "properties" in schema:
            schema.setdefault("additionalProperties", False)
    return result
