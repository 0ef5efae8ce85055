"""Schemathesis over the whole API (issue 11): every operation of the app's own OpenAPI schema,
fed generated inputs (valid and invalid), in process through the WSGI application.

Whatever comes in: no 5xx, every 4xx is JSON of exactly ``{code, message, where}``, and every
answer is one the schema documents for the operation (its status, its content type, its body:
an error's ``code`` among those the operation lists). Each operation is called as a person who may
do it (``CALLER``: the director reads; each write by its role, on duty at the séance below) and
anonymously. A path reference is the real record's for half of the generated values, so the acts
and the reads reach past the lookup. Bounded and derandomized (a fixed seed, ``MAX_EXAMPLES`` per
operation) so that CI sees the same inputs every run.

``KNOWN_FAULTS`` lists operations whose fault (a 5xx, an answer outside the schema) lies in code
this test's author may not change: the test still runs them, and lets through only that fault,
named by a fragment of its report."""

# ruff: noqa: F811 (the fixtures ``house`` and ``cast`` come from tests/api/floor_world.py)
from __future__ import annotations

import datetime as dt
import re
import uuid
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core.failures import FailureGroup

from audit.models import AuditEvent, Severity
from audit.services import anomaly_raise
from casino.disputes.services import dispute_raise
from casino.floor.coups import coup_open, stake_place
from casino.floor.models import Movement
from casino.floor.services import (
    count_countersign,
    count_record,
    duty_assign,
    shift_close,
    transfer_record,
)
from casino.people.roles import Role
from casino.police.services import observation_record
from casino.reports.models import Report
from shoes.services import pack_retire, register_visa
from tests.api.floor_world import (  # noqa: F401 (house and cast are fixtures)
    COUP_CARDS,
    House,
    cast,
    house,
    in_play,
    rolled_back,
    seance,
    stored_pack,
)
from tests.conftest import FLOAT, lay_in_coups
from tests.floor.alliance_world import cercle_ready, close_cercle, play_act_by_act, simulated

MAX_EXAMPLES = 10
SEED = 20_261_123

# Faults known to lie outside what this test may fix: {"POST /path": (a fragment of the failure's
# report, why)}. Any other failure of the operation still fails the test.
KNOWN_FAULTS: dict[str, tuple[str, str]] = {}


def api_schema() -> dict[str, Any]:
    """The OpenAPI document the app serves at /api/schema/, generated in process."""
    return SchemaGenerator().get_schema(request=None, public=True)  # type: ignore[no-any-return]


schema = schemathesis.openapi.from_dict(
    api_schema(),
    config=schemathesis.Config.from_dict(
        {
            "seed": SEED,
            "generation": {
                "max-examples": MAX_EXAMPLES,
                "mode": "all",  # valid inputs and invalid ones
                "database": "none",
                "deterministic": True,
            },
            "phases": {"stateful": {"enabled": False}},
        }
    ),
)

# Who calls each operation (by its path's first segment, and the act): the director reads.
READER = Role.DIRECTEUR
CALLER: dict[str, Role] = {
    "POST /api/v1/anomalies/{id}/reviews": Role.AUDITEUR,
    "POST /api/v1/counts": Role.CROUPIER,
    "POST /api/v1/counts/{id}/countersign": Role.COMITE,
    "POST /api/v1/coups": Role.TAILLEUR,
    "POST /api/v1/coups/{id}/cards": Role.TAILLEUR,
    "POST /api/v1/coups/{id}/close-betting": Role.TAILLEUR,
    "POST /api/v1/coups/{id}/settle": Role.CROUPIER,
    "POST /api/v1/coups/{id}/cancel": Role.CHEF_DE_PARTIE,
    "POST /api/v1/coups/batch": Role.TAILLEUR,
    "POST /api/v1/disputes/{id}/appeal": Role.CROUPIER,
    "POST /api/v1/disputes/{id}/decide": Role.CHEF_DE_PARTIE,
    "POST /api/v1/disputes/{id}/evidence": Role.CROUPIER,
    "POST /api/v1/disputes/{id}/review": Role.CHEF_DE_PARTIE,
    "POST /api/v1/disputes/{id}/withdraw": Role.CROUPIER,
    "POST /api/v1/disputes": Role.CROUPIER,
    "POST /api/v1/duties": Role.CHEF_DE_PARTIE,
    "POST /api/v1/duties/{id}/end": Role.CHEF_DE_PARTIE,
    "POST /api/v1/packs/{id}/cut": Role.TAILLEUR,
    "POST /api/v1/packs/{id}/destroy": Role.COMMISSAIRE,
    "POST /api/v1/packs/{id}/open": Role.CHEF_DE_PARTIE,
    "POST /api/v1/packs/{id}/pass": Role.TAILLEUR,
    "POST /api/v1/packs/{id}/replacement": Role.TAILLEUR,
    "POST /api/v1/packs/{id}/retire": Role.CHEF_DE_PARTIE,
    "POST /api/v1/packs/{id}/shuffles": Role.CROUPIER,
    "POST /api/v1/packs/{id}/store": Role.CAISSIER,
    "POST /api/v1/packs/{id}/verification": Role.COMMISSAIRE,
    "POST /api/v1/packs": Role.CAISSIER,
    "POST /api/v1/police/observations": Role.COMMISSAIRE,
    "POST /api/v1/police/observations/{id}/follow-up": Role.DIRECTEUR,
    "POST /api/v1/register/visas": Role.COMMISSAIRE,
    "POST /api/v1/reglements": Role.COMMISSAIRE,
    "POST /api/v1/shifts": Role.CHEF_DE_PARTIE,
    "POST /api/v1/shifts/{id}/close": Role.CHEF_DE_PARTIE,
    "POST /api/v1/stakes": Role.CROUPIER,
    "POST /api/v1/stakes/{id}/withdraw": Role.CROUPIER,
    "POST /api/v1/tables": Role.DIRECTEUR,
    "POST /api/v1/tables/{number}/settings": Role.DIRECTEUR,
    "POST /api/v1/token": Role.DIRECTEUR,  # needs no login: called anonymously as well
    "POST /api/v1/transfers": Role.CAISSIER,  # fills and credits, the cage's side
    "POST /api/v1/transfers/{id}/countersign": Role.CAISSIER,
    "POST /api/v1/alliance/seats": Role.CROUPIER,
    "POST /api/v1/alliance/seats/{id}/leave": Role.CROUPIER,
    "POST /api/v1/alliance/deals": Role.CROUPIER,
    "POST /api/v1/alliance/deals/{id}/cards": Role.CROUPIER,
    "POST /api/v1/alliance/deals/{id}/calls": Role.CROUPIER,
    "POST /api/v1/alliance/deals/{id}/contract": Role.CROUPIER,
    "POST /api/v1/alliance/deals/{id}/plays": Role.CROUPIER,
    "POST /api/v1/alliance/deal-sheets": Role.CROUPIER,
    "POST /api/v1/cage/buy-ins": Role.CAISSIER,
    "POST /api/v1/cage/cash-outs": Role.CAISSIER,
}


@dataclass
class Floor:
    """Records the generated references are pointed at: by the path's first segments."""

    ids: dict[str, int | str]

    def id_for(self, path: str) -> int | str | None:
        for prefix, pk in self.ids.items():
            if path.startswith(prefix):
                return pk
        return None


@pytest.fixture(scope="module")
def floor(house: House, django_db_blocker) -> Iterator[Floor]:  # type: ignore[no-untyped-def]
    """A séance with a pack in play and a coup in betting with a stake, a fill awaiting its
    signature, a closed séance with its report, a dispute, an anomaly, a police visit, a visa of
    the receipt register; a closed cercle séance with a deal played out."""
    h, c = house, house.cast
    with django_db_blocker.unblock(), rolled_back():
        # A cercle séance with one deal played out, closed on its fee box: its deal and seats
        # are read, and every act on them is refused as the rules say.
        cercle = cercle_ready(c)
        deal = play_act_by_act(c, cercle, simulated(2))
        seat = cercle.seats.order_by("pk").first()
        close_cercle(c, cercle)
        played, first_pack = in_play(h)
        lay_in_coups(c, played, COUP_CARDS)
        pack_retire(actor=c.chef, pack_id=first_pack.pk, counted={})
        dispute = dispute_raise(
            actor=c.croupier, subject="coup", subject_id=played.coups.get().pk, claim="c"
        )
        closing = count_record(actor=c.croupier, table_id=h.table.pk, moment="closing", chips=FLOAT)
        count_countersign(actor=c.directeur, count_id=closing.pk)
        shift_close(actor=c.chef, shift=played, count_id=closing.pk)  # asks for its report
        report = Report.objects.get(shift=played)
        shift, pack = in_play(h)
        coup = coup_open(actor=c.tailleur, shift_id=shift.pk)
        stake = stake_place(
            actor=c.croupier, coup_id=coup.pk, ref="s", holder="3", chance="rouge", amount=1000
        )
        duty = duty_assign(
            actor=c.chef, shift_id=shift.pk, person=h.spare_croupier, post="croupier"
        )
        fill = transfer_record(actor=c.chef, shift_id=shift.pk, kind="fill", amount=10_000)
        count = count_record(actor=c.croupier, table_id=h.table.pk, moment="closing", chips=FLOAT)
        anomaly = anomaly_raise(
            detector="fuzz", severity=Severity.WARNING, summary="a test anomaly", evidence={}
        )
        observation = observation_record(
            actor=c.commissaire, visited_at=dt.datetime.now(dt.UTC), checks="les scellés"
        )
        visa = register_visa(actor=c.commissaire, day=timezone.localdate())
        yield Floor(
            {
                "/api/v1/accounts/": "T1:bank",
                "/api/v1/alliance/deals/": deal.pk,
                "/api/v1/alliance/seats/": seat.pk,
                "/api/v1/anomalies/": anomaly.pk,
                "/api/v1/audit/events/": AuditEvent.objects.order_by("seq").last().seq,
                "/api/v1/counts/": count.pk,
                "/api/v1/coups/": coup.pk,
                "/api/v1/disputes/": dispute.pk,
                "/api/v1/duties/": duty.pk,
                "/api/v1/movements/": Movement.objects.order_by("id").last().pk,
                "/api/v1/packs/": pack.pk,
                "/api/v1/people/": "tailleur",
                "/api/v1/police/observations/": observation.pk,
                "/api/v1/register/visas/": visa.day.isoformat(),
                "/api/v1/reglements/": h.posted.pk,
                "/api/v1/reports/": report.pk,
                "/api/v1/shifts/": shift.pk,
                "/api/v1/stakes/": stake.pk,
                "/api/v1/tables/": 1,
                "/api/v1/transfers/": fill.pk,
            }
        )


@pytest.fixture
def wsgi_app() -> Iterator[WSGIHandler]:
    """Django's WSGI application, called in this thread: it sees the test's transaction. As
    Django's own test client does, keep the request signals from closing that connection."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield WSGIHandler()
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


def auth_headers(api, user) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """The headers ``api(user)`` authenticates with, whatever the scheme."""
    client = api(user)
    return {
        name[5:].replace("_", "-").title(): value
        for name, value in client._credentials.items()
        if name.startswith("HTTP_")
    }


# Every answer must be one the schema documents for the operation: its status, its content type,
# its headers and its body (a refusal's ``code`` among the operation's enumerated codes).
CONFORMANCE = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


def keeps_generated(value: Any) -> bool:
    """Whether a generated path reference is sent as generated (half of them, deterministically);
    the others are replaced by the real record's, so that the operation reaches past the lookup."""
    if isinstance(value, int):
        return value % 2 == 1
    return zlib.crc32(repr(value).encode()) % 2 == 1


def check(case, response) -> None:  # type: ignore[no-untyped-def]
    label = f"{case.operation.method.upper()} {case.operation.path}"
    assert response.status_code < 500, (
        f"{label} answered {response.status_code}:\n{response.text[:2000]}\n"
        f"{case.as_curl_command()}"
    )
    if 400 <= response.status_code < 500:
        content_type = {k.lower(): v for k, v in response.headers.items()}.get("content-type")
        assert content_type, f"{label} {response.status_code} has no type: {response.text[:300]}"
        assert content_type[0].startswith("application/json"), (
            f"{label} {response.status_code} is not JSON: {response.text[:300]}"
        )
        body = response.json()
        assert isinstance(body, dict), f"{label}: {body}"
        assert set(body) == {"code", "message", "where"}, f"{label}: {body}"
    case.validate_response(response, checks=CONFORMANCE)


@schema.parametrize()
@settings(
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
    max_examples=MAX_EXAMPLES,
)
def test_no_input_breaks_the_api(case, floor, house, api, wsgi_app):
    label = f"{case.operation.method.upper()} {case.operation.path}"
    for name, value in list((case.path_parameters or {}).items()):
        real = floor.id_for(case.operation.path)
        if real is not None and not keeps_generated(value):
            case.path_parameters[name] = real
    role = CALLER.get(label, READER)
    callers = [house.cast.by_role(role), None]
    try:
        for user in callers:
            headers = auth_headers(api, user) if user else {}
            headers["Idempotency-Key"] = f"fuzz-{uuid.uuid4()}"
            check(case, case.call(app=wsgi_app, headers=headers))
    except (AssertionError, FailureGroup) as failure:
        fragment, why = KNOWN_FAULTS.get(label, (None, ""))
        if fragment is not None and _only(failure, fragment):
            pytest.xfail(why)
        raise


def _only(failure: BaseException, fragment: str) -> bool:
    """Whether every failure in ``failure`` (a group, or one) is the known one."""
    if isinstance(failure, FailureGroup):
        return all(_only(f, fragment) for f in failure.exceptions)
    return fragment in str(failure)


# --- what the fuzz found, kept as regressions -------------------------------------------------------


def test_the_fuzzed_schema_is_the_one_served(api, cast):
    """The schema generated here is what /api/schema/ serves to a logged-in user."""
    served = api(cast.directeur).get("/api/schema/", {"format": "json"})
    assert served.status_code == 200
    assert served.json()["paths"].keys() == api_schema()["paths"].keys()


def test_every_act_documents_its_own_input_and_answer():
    """Every act on a record once showed the last act's schema (the views shared one ``post``)."""
    from casino.api.acts import RecordAct
    from casino.urls import api_v1

    paths = api_schema()["paths"]
    acts = [p for p in api_v1 if issubclass(getattr(p.callback, "view_class", object), RecordAct)]
    assert len(acts) > 10
    # The record each kind of act answers, as it now stands (by the path's first segment, or its
    # first two where a game's package serves several kinds of records).
    records = {
        "alliance/deals": "DealDetail",
        "alliance/seats": "CercleSeat",
        "anomalies": "Anomaly",
        "counts": "Count",
        "coups": "Coup",
        "disputes": "Dispute",
        "duties": "Duty",
        "packs": "PackDetail",
        "pharao": "PharaoStakeDetail",
        "police": "Observation",
        "stakes": "StakeDetail",
        "transfers": "Transfer",
    }
    for pattern in acts:
        view = pattern.callback.view_class
        path = "/api/v1/" + re.sub(r"<\w+:(\w+)>", r"{\1}", str(pattern.pattern))
        documented = paths[path]["post"]
        answer = documented["responses"]["201"]["content"]["application/json"]["schema"]["$ref"]
        segments = path.split("/")
        record = records.get("/".join(segments[3:5])) or records[segments[3]]
        assert answer == f"#/components/schemas/{record}", path
        if view.input().fields:
            given = documented["requestBody"]["content"]["application/json"]["schema"]["$ref"]
            assert given == f"#/components/schemas/{view.input.__name__}Request", path
        else:
            assert "requestBody" not in documented, path


@pytest.mark.parametrize("path", ["/api/v1/tables", "/api/v1/tables/1/settings"])
def test_table_limits_beyond_the_database_column_are_refused(api, cast, house, path):
    """999,999,999,999 fitted the serializer's bound but not the table's integer column: 500."""
    body = {"reglement": house.posted.pk, "min_stake": 500, "max_stake": 999_999_999_999}
    if path == "/api/v1/tables":
        body |= {"number": 7, "game": "trente-et-quarante"}
    response = api(cast.directeur).post(path, body, format="json", HTTP_IDEMPOTENCY_KEY="big")
    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    assert response.json()["where"] == "max_stake"


def test_a_url_that_names_nothing_is_refused_in_the_api_shape(api, cast):
    """/api/v1/coups/abc matches no route: Django's HTML page answered, not {code, message, where}."""
    for path in ["/api/v1/coups/abc", "/api/v1/packs/-1/cut", "/api/v1/nothing"]:
        response = api(cast.directeur).get(path)
        assert response.status_code == 404, path
        body = response.json()
        assert set(body) == {"code", "message", "where"}, body
        assert (body["code"], body["where"]) == ("not_found", "path"), body
        assert path in body["message"], body  # the message names what was asked for
    elsewhere = api(cast.directeur).get("/nothing")  # Django's own page outside the API
    assert elsewhere.status_code == 404
    assert elsewhere["Content-Type"].startswith("text/html")
