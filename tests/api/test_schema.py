"""The published schema is enough to write a client: it validates as OpenAPI 3.1 with no warning,
every answer of a whole séance played over the API is one it describes (refusals included, each
code among those it lists for that operation), and every operation has an example."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from drf_spectacular.generators import SchemaGenerator
from jsonschema import Draft202012Validator
from openapi_spec_validator import validate
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from casino.api.examples import EXAMPLES_FILE, example_key, masked
from tests.api.tour import Exchange, play

pytestmark = pytest.mark.django_db


def published() -> dict[str, Any]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return json.loads(json.dumps(schema, default=str))


def test_the_schema_is_valid_openapi_with_no_warning():
    out = io.StringIO()
    call_command("spectacular", "--validate", "--fail-on-warn", stdout=out)
    schema = published()
    validate(schema)
    assert schema["openapi"] == "3.1.0"


def _validator(schema: dict[str, Any], pointer: str) -> Draft202012Validator:
    registry = Registry().with_resource(
        "urn:api", Resource.from_contents(schema, default_specification=DRAFT202012)
    )
    return Draft202012Validator({"$ref": f"urn:api#{pointer}"}, registry=registry)


def _escape(part: str) -> str:
    return part.replace("~", "~0").replace("/", "~1")


def _outside_the_schema(schema: dict[str, Any], exchange: Exchange) -> str | None:
    operation = schema["paths"].get(exchange.route, {}).get(exchange.method.lower())
    if operation is None:
        return f"{exchange.method} {exchange.route} is not in the schema"
    response = operation["responses"].get(str(exchange.status))
    if response is None:
        return f"{exchange.method} {exchange.route}: status {exchange.status} is not documented"
    if exchange.response is None:
        documented = response.get("content", {})
        media = exchange.content_type.split(";")[0]
        if documented and media not in documented:
            return f"{exchange.method} {exchange.route}: {media} is not documented"
        return None
    pointer = "/".join(
        [
            "",
            "paths",
            _escape(exchange.route),
            exchange.method.lower(),
            "responses",
            str(exchange.status),
            "content",
            _escape("application/json"),
            "schema",
        ]
    )
    errors = list(_validator(schema, pointer).iter_errors(exchange.response))
    if errors:
        return f"{exchange.method} {exchange.route} {exchange.status}: {errors[0].message}"
    return None


@pytest.fixture
def tour(cast, posted, table, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return play(cast)


def test_every_answer_of_a_played_seance_is_one_the_schema_describes(tour):
    schema = published()
    faults = [f for f in (_outside_the_schema(schema, e) for e in tour.exchanges) if f]
    assert faults == []
    assert any(e.status >= 400 for e in tour.exchanges), "the tour tries faults too"


def test_the_tour_calls_every_operation_with_success(tour):
    schema = published()
    operations = {
        f"{method.upper()} {route}"
        for route, methods in schema["paths"].items()
        for method in methods
    }
    succeeded = {f"{e.method} {e.route}" for e in tour.exchanges if e.status < 300}
    assert operations - succeeded == set()
    if os.environ.get("CASINO_RECORD_EXAMPLES") == "1":
        _record(tour.exchanges)


def _record(exchanges: list[Exchange]) -> None:
    """``make api-examples``: the first success of each operation becomes its example."""
    examples: dict[str, Any] = {}
    for e in exchanges:
        key = example_key(e.method, e.route)
        if e.status < 300 and key not in examples:
            examples[key] = {
                "request": masked(e.request),
                "status": e.status,
                "response": _trimmed(masked(e.response)),
            }
    Path(EXAMPLES_FILE).write_text(json.dumps(examples, indent=1, ensure_ascii=False) + "\n")


def _trimmed(value: Any) -> Any:
    """An example shows the shape: a list's first three items are enough."""
    if isinstance(value, dict):
        return {k: _trimmed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_trimmed(v) for v in value[:3]]
    return value


def test_every_operation_has_an_example_that_its_schema_takes():
    schema = published()
    recorded = json.loads(Path(EXAMPLES_FILE).read_text())
    missing = []
    for route, methods in schema["paths"].items():
        for method, operation in methods.items():
            key = example_key(method.upper(), route)
            if key not in recorded:
                missing.append(key)
                continue
            example = recorded[key]
            for media in operation.get("requestBody", {}).get("content", {}).values():
                assert media["examples"]["tour"]["value"] == example["request"], key
            status = str(example["status"])
            content = operation["responses"][status].get("content", {})
            if "application/json" in content:
                assert content["application/json"]["examples"]["tour"]["value"], key
                exchange = Exchange(
                    method.upper(),
                    route,
                    None,
                    example["status"],
                    example["response"],
                    "application/json",
                )
                assert _outside_the_schema(schema, exchange) is None
    assert missing == []
