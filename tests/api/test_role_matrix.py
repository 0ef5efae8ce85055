"""The role x act matrix (issue 11): every write act of the API tried by every member of the cast,
at a table both on duty and off duty, allowed only where the README's role table says.

``EXPECTED`` below is the README's table written as data: act -> the (role, duty) pairs that may
do it. ``duty`` is ``ON``/``OFF`` for the floor roles at acts done at a table, ``None`` elsewhere.
Where the code lets someone the README does not (or refuses someone it names), the case is in
``README_CODE_DISAGREEMENTS``: it still asserts the README, marked as an expected failure until the
code or the README changes (strict, so a fix makes it fail until the entry is removed).

A refusal must be a 403 with one of ``REFUSAL_CODES`` and must record nothing: every table of
the house's apps is counted before and after. An allowed act answers 2xx and records its audit
event. Each act's records are built once per act (``setting``), and each case runs in a savepoint
rolled back after it, so every person meets the same fresh record.

The second part checks the admin: who sees which changelist (``ROLE_PERMISSIONS``), and that
append-only records are never added, changed or deleted there, by the superuser either."""

# ruff: noqa: F811 (the fixtures ``house`` and ``cast`` come from tests/api/floor_world.py)
from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from audit.models import AnomalyState, AuditEvent, Severity
from audit.services import anomaly_raise, anomaly_review, chain_verify_and_record
from casino.admin_base import RecordAdmin
from casino.disputes.services import (
    dispute_appeal,
    dispute_decide,
    dispute_raise,
    dispute_review,
    evidence_add,
)
from casino.floor.cage import patron_buy_in
from casino.floor.coups import coup_close_betting, coup_lay_card, coup_open, stake_place
from casino.floor.models import Shift, Table
from casino.floor.play.alliance.models import CercleSeat
from casino.floor.play.pharao.tailles import (
    pharao_approval_give,
    pharao_stake_place,
    taille_lay_card,
    taille_open,
)
from casino.floor.services import (
    count_countersign,
    count_record,
    duty_assign,
    shift_close,
    shift_open,
    transfer_record,
)
from casino.games.cards import SIXAIN
from casino.people.roles import ROLE_PERMISSIONS, Role
from casino.people.services import needs_second_factor
from casino.police.services import observation_record
from shoes.models import Pack, PackKind
from shoes.services import (
    cards_pass,
    pack_receive,
    pack_retire,
    register_visa,
    seal_verify,
)
from tests.actors import login_admin
from tests.api.floor_world import (  # noqa: F401 (house and cast are fixtures)
    COUP_CARDS,
    House,
    cast,
    house,
    in_play,
    opened_pack,
    rolled_back,
    seance,
    stored_pack,
    verified_pack,
)
from tests.conftest import FLOAT, lay_in_coups, open_seance
from tests.floor.alliance_world import (
    cercle_ready,
    cercle_table,
    close_cercle,
    deal_in,
    play_act_by_act,
    sheet,
    simulated,
)
from tests.floor.pharao_world import pharao_table, play_a_taille, single_pack_in_play

ON, OFF = "on_duty", "off_duty"
D, C, CHEF, T, CR, CA, COM, INSP, A = (
    Role.DIRECTEUR,
    Role.COMITE,
    Role.CHEF_DE_PARTIE,
    Role.TAILLEUR,
    Role.CROUPIER,
    Role.CAISSIER,
    Role.COMMISSAIRE,
    Role.INSPECTEUR,
    Role.AUDITEUR,
)

# Acts done at a table, by staff on duty in the séance open there (README: "Staff on duty", and
# "Every act at a table is done by staff on duty"): tried by the floor roles on and off duty.
AT_TABLE = {
    "pack_open",
    "pack_shuffle",
    "pack_cut",
    "pack_pass",
    "pack_replacement",
    "pack_retire",
    "count_closing",
    "shift_fill",
    "shift_credit",
    "transfer_countersign_by_table",
    "transfer_countersign_by_cage",
    "shift_close",
    "duty_assign",
    "duty_end",
    "coup_open",
    "coup_batch",
    "stake_place",
    "stake_withdraw",
    "coup_close_betting",
    "coup_card",
    "coup_settle",
    "coup_cancel",
    *(
        "taille_open",
        "taille_card",
        "pharao_stake_place",
        "pharao_stake_raise",
        "pharao_stake_mark",
        "pharao_stake_collect",
        "pharao_stake_reduce",
        "pharao_stake_withdraw",
        "pharao_approval",
    ),
    *(
        "seat_take",
        "seat_leave",
        "deal_open",
        "deal_cards",
        "deal_call",
        "deal_declare",
        "deal_play",
        "deal_sheet",
    ),
}

# The README's role table as data: who may do each act. Nobody else may: not the superuser (who
# holds no role), not a person without a role, not anyone anonymous.
# "raise disputes": the floor, the cage and the direction (README, Roles).
RAISERS = {(T, None), (CR, None), (CHEF, None), (CA, None), (D, None), (C, None)}

EXPECTED: dict[str, set[tuple[Role, str | None]]] = {
    # Audit: "review anomalies" (directeur, auditeur); "rule on escalated anomalies" (commissaire).
    "anomaly_acknowledge": {(D, None), (A, None)},
    "anomaly_rule_on_escalated": {(COM, None)},
    # The card room: "receive and store sealed packs" (caissier); "verify seals", "witness
    # destruction", "sign the receipt register" (commissaire).
    "pack_receive": {(CA, None)},
    "pack_store": {(CA, None)},
    "pack_verify": {(COM, None)},
    "pack_destroy": {(COM, None)},
    "register_visa": {(COM, None)},
    # At the table (README, Sealed packs): "shuffles by the croupiers and the tailleur, the cut
    # and the pass by the tailleur, opening and the demand for new cards by the chef de partie or
    # the tailleur, retirement by the chef de partie", all on duty.
    "pack_open": {(CHEF, ON), (T, ON)},
    "pack_shuffle": {(T, ON), (CR, ON)},
    "pack_cut": {(T, ON)},
    "pack_pass": {(T, ON)},
    "pack_replacement": {(CHEF, ON), (T, ON)},
    "pack_retire": {(CHEF, ON)},
    # The floor: "create tables" (directeur, who also moves them to another version or limits);
    # "approve posted règlements" (commissaire).
    "table_create": {(D, None)},
    "table_settings": {(D, None)},
    "reglement_post": {(COM, None)},
    # "count the float" (croupier; the role table lists it outside "on duty:"); "countersign
    # float counts" (directeur, comite); "open/close séances", "put staff on duty" (chef de
    # partie; closing and duties by the one on duty there, README "Staff on duty").
    "count_opening": {(CR, None)},
    "count_closing": {(CR, ON)},  # "on duty: count the closing float"
    "count_countersign": {(D, None), (C, None)},
    "shift_open": {(CHEF, None)},
    "shift_close": {(CHEF, ON)},
    "duty_assign": {(CHEF, ON)},
    "duty_end": {(CHEF, ON)},
    # "A fill or a credit is recorded by one side (the cashier, or the chef de partie on duty)
    # and moves money only when the other side signs it."
    "shift_fill": {(CA, None), (CHEF, ON)},
    "shift_credit": {(CA, None), (CHEF, ON)},
    "transfer_countersign_by_table": {(CHEF, ON)},  # recorded by the cashier
    "transfer_countersign_by_cage": {(CA, None)},  # recorded by the chef de partie on duty
    # Coups: tailleur "on duty: open coups, close the betting, lay cards, settle"; croupier "on
    # duty: record stakes, settle". A paper record (batch, no stakes) is the tailleur's acts.
    "coup_open": {(T, ON)},
    "coup_batch": {(T, ON)},
    "stake_place": {(CR, ON), (T, ON)},
    "stake_withdraw": {(CR, ON), (T, ON)},
    "coup_close_betting": {(T, ON)},
    "coup_card": {(T, ON)},
    "coup_settle": {(T, ON), (CR, ON)},
    # Chef de partie "on duty: ... cancel a coup".
    "coup_cancel": {(CHEF, ON)},
    # Pharao: the tailleur "on duty: open ... Pharao tailles, ... lay cards, record stakes and the
    # acts on them"; the croupier "on duty: record stakes and the acts on them"; the chef de
    # partie "on duty: approve the reduction or withdrawal of a Pharao stake he did not record".
    "taille_open": {(T, ON)},
    "taille_card": {(T, ON)},
    "pharao_stake_place": {(CR, ON), (T, ON)},
    "pharao_stake_raise": {(CR, ON), (T, ON)},
    "pharao_stake_mark": {(CR, ON), (T, ON)},
    "pharao_stake_collect": {(CR, ON), (T, ON)},
    "pharao_stake_reduce": {(CR, ON), (T, ON)},
    "pharao_stake_withdraw": {(CR, ON), (T, ON)},
    "pharao_approval": {(CHEF, ON)},
    # Alliance, at a cercle table where the players deal: the croupier "on duty: seat the players,
    # record each deal (the dealer's shuffle and the cut, the cards, the calls, the contract, the
    # cards played), or a whole deal from its sheet"; the chef de partie "on duty: seat the
    # players, record the calls, the contract and the cards played". A cercle séance opens
    # without a tailleur, by the chef de partie as any other.
    "seat_take": {(CR, ON), (CHEF, ON)},
    "seat_leave": {(CR, ON), (CHEF, ON)},
    "deal_open": {(CR, ON)},
    "deal_cards": {(CR, ON)},
    "deal_call": {(CR, ON), (CHEF, ON)},
    "deal_declare": {(CR, ON), (CHEF, ON)},
    "deal_play": {(CR, ON), (CHEF, ON)},
    "deal_sheet": {(CR, ON)},
    "shift_open_cercle": {(CHEF, None)},
    # The cage: "a patron's buy-in and cash-out" (caissier).
    "cage_buy_in": {(CA, None)},
    "cage_cash_out": {(CA, None)},
    # Disputes: "raise disputes" (tailleur, croupier), with the patron's statement and evidence
    # (the README names no other holder of evidence; the code adds the commissaire, see below);
    # "decide disputes (first instance)" (chef de partie), "decide appealed disputes"
    # (commissaire). The README names nobody for the appeal (the raisers appeal, as the
    # services' docstring says) nor for withdrawal (whoever raised it, or the chef de partie).
    "dispute_raise": RAISERS,
    "dispute_evidence": RAISERS | {(COM, None)},
    "dispute_review": {(CHEF, None)},
    "dispute_decide": {(CHEF, None)},
    "dispute_appeal": RAISERS,
    "dispute_decide_on_appeal": {(COM, None)},
    # Withdrawal: only whoever raised it (here the cashier), never about their own acts.
    "dispute_withdraw": {(CA, None)},
    # A decision that departs from the engine waits for a second approver: "a director or a
    # commissioner" (README, Disputes).
    "dispute_approve": {(D, None), (COM, None)},
    "dispute_refuse": {(D, None), (COM, None)},
    # The police register: "write the police register" (commissaire); "follow up police
    # observations" (directeur).
    "police_observation": {(COM, None)},
    "police_follow_up": {(D, None)},
}

# Where the README and the code disagreed, one was changed (the cage alone receives packs; the
# README now names the tailleur's stakes, the croupier's closing count on duty and the raisers):
# a disagreement found later goes here as a strict expected failure with its reason.
README_CODE_DISAGREEMENTS: dict[tuple[str, Role, str | None], str] = {}
REFUSAL_CODES = {"role_required", "not_on_duty", "segregation_of_duties", "not_the_raiser"}
ANONYMOUS_CODES = {"not_authenticated", "authentication_failed"}
NOBODY = {"root", "outsider", "anonymous"}  # the superuser (no role), no role, no login

# --- who tries -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    label: str  # the test id: a role, or root/outsider/anonymous
    role: Role | None
    duty: str | None

    def user(self, h: House) -> Any:
        if self.label == "anonymous":
            return None
        if self.role is None:
            return getattr(h.cast, self.label)
        if self.duty == OFF:
            return h.off_duty[self.role]
        return h.cast.by_role(self.role)


def people(act: str) -> list[Person]:
    floor = (CHEF, T, CR)
    found = [Person(n, None, None) for n in ("root", "outsider", "anonymous")]
    for role in Role:
        if act in AT_TABLE and role in floor:
            found += [Person(role.value, role, ON), Person(role.value, role, OFF)]
        else:
            found.append(Person(role.value, role, None))
    return found


def cases() -> Iterator[Any]:
    for act in EXPECTED:
        for person in people(act):
            case_id = "-".join(filter(None, [act, person.label, person.duty]))
            reason = README_CODE_DISAGREEMENTS.get((act, person.role, person.duty))  # type: ignore[arg-type]
            marks = (
                [pytest.mark.xfail(strict=True, raises=AssertionError, reason=reason)]
                if reason
                else []
            )
            yield pytest.param(act, person, id=case_id, marks=marks)


def test_the_matrix_names_every_write_of_the_api():
    """Every POST route of casino/urls.py but /token is an act of the matrix (some twice)."""
    from casino.urls import api_v1

    # Logging in and out are a person's own session, open to anyone who has one (tests/people).
    posts = {p.name for p in api_v1 if _posts(p)} - {"api-token", "api-logout"}
    covered = {ROUTE_OF[act] for act in EXPECTED}
    assert posts == covered, f"not in the matrix: {posts - covered}; unknown: {covered - posts}"
    assert set(SETTINGS) == set(EXPECTED)
    for act, person_role, duty in README_CODE_DISAGREEMENTS:
        assert act in EXPECTED, act
        assert duty in (None, ON, OFF), duty
        assert person_role in Role, person_role


def _posts(pattern: Any) -> bool:
    view = getattr(pattern.callback, "view_class", None)
    return view is not None and hasattr(view, "post")


# --- what each act needs: built once per act, rolled back after its cases -------------------------


@dataclass
class Call:
    path: str
    body: dict[str, Any] = field(default_factory=dict)
    multipart: bool = False


def anomaly(h: House, *, escalated: bool = False) -> Call:
    found = anomaly_raise(
        detector="matrix", severity=Severity.WARNING, summary="a test anomaly", evidence={}
    )
    if escalated:
        for state in (AnomalyState.ACKNOWLEDGED, AnomalyState.ESCALATED):
            anomaly_review(actor=h.cast.auditeur2, anomaly_id=found.pk, to_state=state, reason="r")
        return Call(
            f"/api/v1/anomalies/{found.pk}/reviews", {"to_state": "confirmed", "reason": "r"}
        )
    return Call(
        f"/api/v1/anomalies/{found.pk}/reviews", {"to_state": "acknowledged", "reason": "r"}
    )


def pack_call(act: str, body: dict[str, Any] | None = None) -> Callable[[Pack], Call]:
    return lambda pack: Call(f"/api/v1/packs/{pack.pk}/{act}", body or {})


def dispute(h: House, state: str = "open", raiser: str = "croupier") -> tuple[str, str]:
    """A dispute raised by the croupier about a coup the tailleur and croupier recorded, moved
    on to ``state``: its path, and an article of its règlement to cite."""
    shift = seance(h)
    opened_pack(h, shift, cut=True)
    lay_in_coups(h.cast, shift, COUP_CARDS)
    coup = shift.coups.get()
    found = dispute_raise(
        actor=getattr(h.cast, raiser), subject="coup", subject_id=coup.pk, claim="c"
    )
    article = found.reglement.articles[0]["number"]
    if state != "open":
        dispute_review(actor=h.cast.chef, dispute_id=found.pk, note="n")
    if state in ("decided", "appealed"):
        dispute_decide(actor=h.cast.chef, dispute_id=found.pk, articles=[article], reasoning="r")
    if state == "appealed":
        dispute_appeal(actor=h.cast.croupier, dispute_id=found.pk, note="n")
    if state == "awaiting_approval":  # an override between the table's own accounts
        table = coup.shift.table.number
        dispute_decide(
            actor=h.cast.chef,
            dispute_id=found.pk,
            articles=[article],
            reasoning="r",
            corrections=[[f"T{table}:bank", f"T{table}:layout", 100]],
            override_reason="a gesture",
        )
    return f"/api/v1/disputes/{found.pk}", article


def _dispute_act(
    state: str, act: str, body: dict[str, Any], raiser: str = "croupier"
) -> Callable[[House], Call]:
    def build(h: House) -> Call:
        path, article = dispute(h, state, raiser)
        given = {**body, "articles": [article]} if "articles" in body else dict(body)
        return Call(f"{path}/{act}", given)

    return build


def _coup_in(h: House, phase: str) -> tuple[Shift, Any]:
    shift, _pack = in_play(h)
    coup = coup_open(actor=h.cast.tailleur, shift_id=shift.pk)
    if phase in ("closed", "complete"):
        coup_close_betting(actor=h.cast.tailleur, coup_id=coup.pk)
    if phase == "complete":
        for code in COUP_CARDS:
            coup_lay_card(actor=h.cast.tailleur, coup_id=coup.pk, code=code)
    return shift, coup


def _stake(h: House) -> Call:
    _shift, coup = _coup_in(h, "betting")
    stake = stake_place(
        actor=h.cast.croupier, coup_id=coup.pk, ref="s", holder="3", chance="rouge", amount=1000
    )
    return Call(f"/api/v1/stakes/{stake.pk}/withdraw")


def _duty_end(h: House) -> Call:
    shift = seance(h)
    duty = duty_assign(
        actor=h.cast.chef, shift_id=shift.pk, person=h.spare_croupier, post="croupier"
    )
    return Call(f"/api/v1/duties/{duty.pk}/end", {"reason": "pause"})


def _closing(h: House) -> Call:
    shift = seance(h)
    count = count_record(actor=h.cast.croupier, table_id=h.table.pk, moment="closing", chips=FLOAT)
    count_countersign(actor=h.cast.directeur, count_id=count.pk)
    return Call(f"/api/v1/shifts/{shift.pk}/close", {"count": count.pk})


def _countersign_transfer(h: House, recorded_by: str) -> Call:
    shift = seance(h)
    transfer = transfer_record(
        actor=getattr(h.cast, recorded_by), shift_id=shift.pk, kind="fill", amount=10_000
    )
    return Call(f"/api/v1/transfers/{transfer.pk}/countersign", {})


def _rejected(h: House) -> Call:
    pack = stored_pack(h)
    seal_verify(
        actor=h.cast.commissaire, pack_id=pack.pk, seal_number_read="RF-0", verdict="intact"
    )
    return Call(f"/api/v1/packs/{pack.pk}/destroy", {"remarks": "brûlé"})


def _observation(h: House) -> Call:
    found = observation_record(
        actor=h.cast.commissaire, visited_at=dt.datetime.now(dt.UTC), checks="les scellés"
    )
    return Call(f"/api/v1/police/observations/{found.pk}/follow-up", {"action": "rappel"})


def _received(h: House) -> Call:
    pack = pack_receive(
        actor=h.cast.caissier,
        kind=PackKind.SIXAIN,
        maker="Grimaud",
        maker_pack_numbers="G-1",
        seal_number="RF-1",
        sealing_authority="Préfecture de police",
        store_location="coffre A",
    )
    return Call(f"/api/v1/packs/{pack.pk}/store")


def _verify(h: House) -> Call:
    pack = stored_pack(h)
    return Call(
        f"/api/v1/packs/{pack.pk}/verification",
        {"seal_number_read": pack.seal_number, "verdict": "intact"},
    )


def _shift_open(h: House) -> Call:
    count = count_record(actor=h.cast.croupier, table_id=h.table.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=h.cast.directeur, count_id=count.pk)
    body = {"table": 1, "count": count.pk, "tailleur": "tailleur", "croupiers": ["croupier"]}
    return Call("/api/v1/shifts", body)


def _coup_act(phase: str, act: str, body: dict[str, Any] | None = None) -> Callable[[House], Call]:
    def build(h: House) -> Call:
        _shift, coup = _coup_in(h, phase)
        return Call(f"/api/v1/coups/{coup.pk}/{act}", body or {})

    return build


def _pack_at_table(state: str, act: str, body: dict[str, Any] | None = None):  # type: ignore[no-untyped-def]
    def build(h: House) -> Call:
        shift = seance(h)
        if state == "verified":
            pack = verified_pack(h)
        else:
            pack = opened_pack(
                h, shift, shuffled=state == "shuffled", cut=state in ("cut", "passed")
            )
        if state == "passed":
            cards_pass(actor=h.cast.tailleur, pack_id=pack.pk, undealt=SIXAIN_CARDS)
        given = dict(body or {})
        if act == "open":
            given["shift"] = shift.pk
        return pack_call(act, given)(pack)

    return build


def _transfer(kind: str) -> Callable[[House], Call]:
    def build(h: House) -> Call:
        return Call("/api/v1/transfers", {"shift": seance(h).pk, "kind": kind, "amount": 10_000})

    return build


def _count_closing(h: House) -> Call:
    seance(h)
    return Call("/api/v1/counts", {"table": 1, "moment": "closing", "chips": FLOAT})


def _count_to_sign(h: House) -> Call:
    count = count_record(actor=h.cast.croupier, table_id=h.table.pk, moment="opening", chips=FLOAT)
    return Call(f"/api/v1/counts/{count.pk}/countersign")


def _batch(h: House) -> Call:
    shift, _pack = in_play(h)
    return Call("/api/v1/coups/batch", {"shift": shift.pk, "cards": COUP_CARDS})


def _coup_open(h: House) -> Call:
    shift, _pack = in_play(h)
    return Call("/api/v1/coups", {"shift": shift.pk})


def _duty_assign(h: House) -> Call:
    shift = seance(h)
    return Call("/api/v1/duties", {"shift": shift.pk, "person": "croupier3", "post": "croupier"})


def _evidence(h: House) -> Call:
    path, _article = dispute(h)
    photo = SimpleUploadedFile("photo.jpg", b"\xff\xd8 a photo", content_type="image/jpeg")
    return Call(f"{path}/evidence", {"file": photo}, multipart=True)


def _raise(h: House) -> Call:
    shift = seance(h)
    opened_pack(h, shift, cut=True)
    lay_in_coups(h.cast, shift, COUP_CARDS)
    coup = shift.coups.get()
    return Call("/api/v1/disputes", {"subject": "coup", "subject_id": coup.pk, "claim": "c"})


def _stake_place(h: House) -> Call:
    _shift, coup = _coup_in(h, "betting")
    return Call("/api/v1/stakes", {"coup": coup.pk, **STAKE})


def _fixed(call: Call) -> Callable[[House], Call]:
    return lambda h: call


def _pharao_seance(h: House) -> Shift:
    """A séance at a Pharao table (table 3) with the cast on duty and its single pack in play."""
    table = pharao_table(h.cast)
    count = count_record(actor=h.cast.croupier, table_id=table.pk, moment="opening", chips=FLOAT)
    count_countersign(actor=h.cast.directeur, count_id=count.pk)
    shift = shift_open(
        actor=h.cast.chef,
        table=table,
        count_id=count.pk,
        tailleur=h.cast.tailleur,
        croupiers=[h.cast.croupier],
    )
    single_pack_in_play(h.cast, shift)
    return shift


def _taille(h: House) -> Any:
    """A taille at that séance, the bottom card KS shown."""
    shift = _pharao_seance(h)
    return taille_open(actor=h.cast.tailleur, shift_id=shift.pk, bottom_card="KS")


def _pharao(act: str, body: dict[str, Any] | None = None, *, approve: str = "") -> Any:
    """An act on a stake on the 7 that won the first draw (3C | 7H), or, with ``approve``, the
    act on it the chef de partie approved (or, ``approve="stake"``, the approval itself)."""

    def build(h: House) -> Call:
        taille = _taille(h)
        stake = pharao_stake_place(
            actor=h.cast.croupier, taille_id=taille.pk, ref="m", holder="4", rank="7", amount=1000
        )
        for code in ("3C", "7H"):
            taille_lay_card(actor=h.cast.tailleur, taille_id=taille.pk, code=code)
        if approve == "stake":
            return Call("/api/v1/pharao/approvals", {"stake": stake.pk, "act": "withdraw"})
        if approve:
            pharao_approval_give(actor=h.cast.chef, stake_id=stake.pk, act=approve, **(body or {}))
        return Call(f"/api/v1/pharao/stakes/{stake.pk}/{act}", body or {})

    return build


def _taille_open(h: House) -> Call:
    return Call("/api/v1/pharao/tailles", {"shift": _pharao_seance(h).pk, "bottom_card": "KS"})


def _taille_card(h: House) -> Call:
    return Call(f"/api/v1/pharao/tailles/{_taille(h).pk}/cards", {"code": "3C"})


def _pharao_stake(h: House) -> Call:
    body = {"taille": _taille(h).pk, "ref": "m", "holder": "4", "rank": "5", "amount": 500}
    return Call("/api/v1/pharao/stakes", body)


def _seat_take(h: House) -> Call:
    shift = cercle_ready(h.cast)
    patron_buy_in(actor=h.cast.caissier, patron="emil", amount=1000)
    return Call("/api/v1/alliance/seats", {"shift": shift.pk, "seat": 5, "patron": "emil"})


def _seat_leave(h: House) -> Call:
    seat = CercleSeat.objects.get(shift=cercle_ready(h.cast), seat=1)
    return Call(f"/api/v1/alliance/seats/{seat.pk}/leave", {"reason": "parti"})


def _deal_open(h: House) -> Call:
    dealing = {"dealer": "patron:dora", "cut_by": "patron:carl"}
    return Call("/api/v1/alliance/deals", {"shift": cercle_ready(h.cast).pk, **dealing})


def _deal_act(phase: str, act: str) -> Callable[[House], Call]:
    """The act that the deal waits for in ``phase``, by the player whose turn it is."""

    def build(h: House) -> Call:
        deal, doc = deal_in(h.cast, cercle_ready(h.cast), 2, phase)
        body = {
            "dealing": {"cards": doc["cards"]},
            "auction": {"player": doc["players"][0], "call": doc["auction"][0]},
            "contract": {"contract": doc["contract"]},
            "play": {"player": doc["players"][0], "code": doc["tricks"][0][0]},
        }[phase]
        return Call(f"/api/v1/alliance/deals/{deal.pk}/{act}", body)

    return build


def _deal_sheet(h: House) -> Call:
    shift = cercle_ready(h.cast)
    return Call("/api/v1/alliance/deal-sheets", {"shift": shift.pk, "sheet": sheet(simulated(2))})


def _shift_open_cercle(h: House) -> Call:
    table = cercle_table(h.cast)
    count = count_record(
        actor=h.cast.croupier, table_id=table.pk, moment="opening", chips={"100": 0}
    )
    count_countersign(actor=h.cast.directeur, count_id=count.pk)
    body = {"table": table.number, "count": count.pk, "croupiers": ["croupier"]}
    return Call("/api/v1/shifts", body)


def _cash_out(h: House) -> Call:
    patron_buy_in(actor=h.cast.caissier, patron="zoe", amount=1000)
    return Call("/api/v1/cage/cash-outs", {"patron": "zoe"})


RECEIVE = {
    "kind": "sixain",
    "maker": "Grimaud",
    "maker_pack_numbers": "G-1",
    "seal_number": "RF-2",
    "sealing_authority": "Préfecture de police",
    "store_location": "coffre A",
}
SIXAIN_CARDS = [str(c) for c in SIXAIN.cards]  # a talon from which no card was dealt
TABLE = {
    "number": 2,
    "game": "trente-et-quarante",
    "min_stake": 500,
    "max_stake": 600_000,
}
STAKE = {"ref": "m", "holder": "4", "chance": "noir", "amount": 1000}

SETTINGS: dict[str, Callable[[House], Call]] = {
    "anomaly_acknowledge": lambda h: anomaly(h),
    "anomaly_rule_on_escalated": lambda h: anomaly(h, escalated=True),
    "pack_receive": _fixed(Call("/api/v1/packs", RECEIVE)),
    "pack_store": _received,
    "pack_verify": _verify,
    "pack_destroy": _rejected,
    "register_visa": _fixed(Call("/api/v1/register/visas", {"day": "2026-01-02"})),
    "pack_open": _pack_at_table("verified", "open"),
    "pack_shuffle": _pack_at_table("opened", "shuffles"),
    "pack_cut": _pack_at_table("shuffled", "cut", {"cut_by": "M. Dupont"}),
    "pack_pass": _pack_at_table("cut", "pass", {"undealt": SIXAIN_CARDS}),
    "pack_replacement": _pack_at_table(
        "passed", "replacement", {"demanded_by": "M. Dupont", "side": "players"}
    ),
    "pack_retire": _pack_at_table("cut", "retire", {"counted": {}}),
    "table_create": lambda h: Call("/api/v1/tables", {**TABLE, "reglement": h.posted.pk}),
    "table_settings": lambda h: Call(
        "/api/v1/tables/1/settings",
        {"reglement": h.posted.pk, "min_stake": 1000, "max_stake": 600_000},
    ),
    "reglement_post": _fixed(
        Call(
            "/api/v1/reglements",
            {"name": "baden-1854", "spec": "baden-1854", "effective_from": "2026-06-01"},
        )
    ),
    "count_opening": _fixed(
        Call("/api/v1/counts", {"table": 1, "moment": "opening", "chips": FLOAT})
    ),
    "count_closing": _count_closing,
    "count_countersign": _count_to_sign,
    "shift_open": _shift_open,
    "shift_close": _closing,
    "duty_assign": _duty_assign,
    "duty_end": _duty_end,
    "shift_fill": _transfer("fill"),
    "shift_credit": _transfer("credit"),
    "transfer_countersign_by_table": lambda h: _countersign_transfer(h, "caissier"),
    "transfer_countersign_by_cage": lambda h: _countersign_transfer(h, "chef"),
    "coup_open": _coup_open,
    "coup_batch": _batch,
    "stake_place": _stake_place,
    "stake_withdraw": _stake,
    "coup_close_betting": _coup_act("betting", "close-betting"),
    "coup_card": _coup_act("closed", "cards", {"code": "KS"}),
    "coup_settle": _coup_act("complete", "settle"),
    "coup_cancel": _coup_act("complete", "cancel", {"reason": "a card fell on the floor"}),
    "dispute_raise": _raise,
    "dispute_evidence": _evidence,
    "dispute_review": _dispute_act("open", "review", {"note": "n"}),
    "dispute_decide": _dispute_act("under_review", "decide", {"articles": [], "reasoning": "r"}),
    "dispute_appeal": _dispute_act("decided", "appeal", {"note": "n"}),
    "dispute_decide_on_appeal": _dispute_act(
        "appealed", "decide", {"articles": [], "reasoning": "r"}
    ),
    # Raised by the cashier, who recorded nothing of the coup: the croupier settled it.
    "dispute_withdraw": _dispute_act("open", "withdraw", {"note": "n"}, raiser="caissier"),
    "dispute_approve": _dispute_act("awaiting_approval", "approve", {"note": "n"}),
    "dispute_refuse": _dispute_act("awaiting_approval", "refuse", {"note": "n"}),
    "police_observation": _fixed(
        Call("/api/v1/police/observations", {"visited_at": "2026-01-02T10:00:00Z", "checks": "c"})
    ),
    "police_follow_up": _observation,
    "taille_open": _taille_open,
    "taille_card": _taille_card,
    "pharao_stake_place": _pharao_stake,
    "pharao_stake_raise": _pharao("raise", {"amount": 100}),
    "pharao_stake_mark": _pharao("mark", {"move": "paroli"}),
    "pharao_stake_collect": _pharao("collect"),
    "pharao_stake_reduce": _pharao("reduce", {"amount": 100}, approve="reduce"),
    "pharao_stake_withdraw": _pharao("withdraw", approve="withdraw"),
    "pharao_approval": _pharao("", approve="stake"),
    "seat_take": _seat_take,
    "seat_leave": _seat_leave,
    "deal_open": _deal_open,
    "deal_cards": _deal_act("dealing", "cards"),
    "deal_call": _deal_act("auction", "calls"),
    "deal_declare": _deal_act("contract", "contract"),
    "deal_play": _deal_act("play", "plays"),
    "deal_sheet": _deal_sheet,
    "shift_open_cercle": _shift_open_cercle,
    "cage_buy_in": _fixed(Call("/api/v1/cage/buy-ins", {"patron": "zoe", "amount": 1000})),
    "cage_cash_out": _cash_out,
}
# The url name in casino/urls.py each act posts to.
ROUTE_OF = {
    "anomaly_acknowledge": "anomaly-review",
    "anomaly_rule_on_escalated": "anomaly-review",
    "pack_receive": "packs",
    "pack_store": "pack-store",
    "pack_verify": "pack-verify",
    "pack_destroy": "pack-destroy",
    "register_visa": "register-visas",
    "pack_open": "pack-open",
    "pack_shuffle": "pack-shuffle",
    "pack_cut": "pack-cut",
    "pack_pass": "pack-pass",
    "pack_replacement": "pack-replace",
    "pack_retire": "pack-retire",
    "table_create": "tables",
    "table_settings": "table-settings",
    "reglement_post": "reglements",
    "count_opening": "counts",
    "count_closing": "counts",
    "count_countersign": "count-sign",
    "shift_open": "shifts",
    "shift_close": "shift-close",
    "duty_assign": "duties",
    "duty_end": "duty-end",
    "shift_fill": "transfers",
    "shift_credit": "transfers",
    "transfer_countersign_by_table": "transfer-sign",
    "transfer_countersign_by_cage": "transfer-sign",
    "coup_open": "coups",
    "coup_batch": "coup-batch",
    "stake_place": "stakes",
    "stake_withdraw": "stake-withdraw",
    "coup_close_betting": "coup-close-betting",
    "coup_card": "coup-card",
    "coup_settle": "coup-settle",
    "coup_cancel": "coup-cancel",
    "dispute_raise": "disputes",
    "dispute_evidence": "dispute-evidence",
    "dispute_review": "dispute-review",
    "dispute_decide": "dispute-decide",
    "dispute_appeal": "dispute-appeal",
    "dispute_decide_on_appeal": "dispute-decide",
    "dispute_withdraw": "dispute-withdraw",
    "dispute_approve": "dispute-approve",
    "dispute_refuse": "dispute-refuse",
    "police_observation": "observations",
    "police_follow_up": "observation-follow-up",
    "taille_open": "pharao-tailles",
    "taille_card": "pharao-taille-card",
    "pharao_stake_place": "pharao-stakes",
    "pharao_stake_raise": "pharao-stake-raise",
    "pharao_stake_mark": "pharao-stake-mark",
    "pharao_stake_collect": "pharao-stake-collect",
    "pharao_stake_reduce": "pharao-stake-reduce",
    "pharao_stake_withdraw": "pharao-stake-withdraw",
    "pharao_approval": "pharao-approvals",
    "seat_take": "alliance-seats",
    "seat_leave": "alliance-seat-leave",
    "deal_open": "alliance-deals",
    "deal_cards": "alliance-deal-cards",
    "deal_call": "alliance-deal-calls",
    "deal_declare": "alliance-deal-contract",
    "deal_play": "alliance-deal-plays",
    "deal_sheet": "alliance-deal-sheets",
    "shift_open_cercle": "shifts",
    "cage_buy_in": "cage-buy-ins",
    "cage_cash_out": "cage-cash-outs",
}


@pytest.fixture(scope="module")
def setting(request, house: House, django_db_blocker) -> Iterator[tuple[str, Call]]:  # type: ignore[no-untyped-def]
    """The records one act needs (``request.param`` names the act), kept for all its cases."""
    with django_db_blocker.unblock(), rolled_back():
        with connection.cursor() as cursor:  # a test's teardown may have deferred them again
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        yield request.param, SETTINGS[request.param](house)


# --- nothing recorded: every table of the house's apps, counted in one query ------------------------

COUNTED_APPS = (
    "audit",
    "floor",
    "shoes",
    "disputes",
    "police",
    "reports",
    "outbox",
    "api",
    "people",
)


def _tables() -> list[str]:
    found = []
    for label in COUNTED_APPS:
        found += [m._meta.db_table for m in apps.get_app_config(label).get_models()]
    return sorted(set(found))


def snapshot() -> dict[str, int]:
    tables = _tables()
    query = "SELECT " + ", ".join(f'(SELECT count(*) FROM "{t}")' for t in tables)
    with connection.cursor() as cursor:
        cursor.execute(query)
        return dict(zip(tables, cursor.fetchone(), strict=True))


def post(client, call: Call):  # type: ignore[no-untyped-def]
    key = {"HTTP_IDEMPOTENCY_KEY": f"matrix-{uuid.uuid4()}"}
    if call.multipart:
        for value in call.body.values():
            value.seek(0)
        return client.post(call.path, call.body, format="multipart", **key)
    return client.post(call.path, call.body, format="json", **key)


@pytest.mark.parametrize(("setting", "person"), list(cases()), indirect=["setting"], scope="module")
def test_matrix(api, house, setting, person):
    act, call = setting
    allowed = (person.role, person.duty) in EXPECTED[act]
    client = api(person.user(house))  # logged in (a token issued) before the count is taken
    before = snapshot()
    response = post(client, call)
    body = response.json()
    if allowed:
        assert 200 <= response.status_code < 300, f"{act} by {person} refused: {body}"
        assert AuditEvent.objects.count() > before["audit_auditevent"], f"{act}: nothing audited"
        return
    if person.label == "anonymous":
        assert response.status_code == 401, body
        assert body["code"] in ANONYMOUS_CODES, body
    else:
        assert response.status_code == 403, f"{act} by {person} not refused: {body}"
        assert body["code"] in REFUSAL_CODES, f"{act} by {person}: {body}"
    assert set(body) == {"code", "message", "where"}, body
    after = snapshot()
    changed = {t: (before[t], after[t]) for t in before if before[t] != after[t]}
    assert not changed, f"{act} refused to {person} but recorded: {changed}"


# --- the admin: who sees what, and append-only records never edited there -------------------------

ADMIN_PEOPLE = ["root", "outsider", *(r.value for r in Role)]
# The main changelists: (url, the permission that opens it).
CHANGELISTS = {
    "packs": ("/admin/shoes/pack/", "shoes.view_pack"),
    "coups": ("/admin/floor/coup/", "floor.view_coup"),
    "seances": ("/admin/floor/shift/", "floor.view_shift"),
    "disputes": ("/admin/disputes/dispute/", "disputes.view_dispute"),
    "anomalies": ("/admin/audit/anomaly/", "audit.view_anomaly"),
    "reports": ("/admin/reports/report/", "reports.view_report"),
    "users": ("/admin/auth/user/", "auth.view_user"),
}


def admin_user(h: House, who: str) -> Any:
    return getattr(h.cast, who) if who in NOBODY else h.cast.by_role(Role(who))


def logged_in(client, user):  # type: ignore[no-untyped-def]
    """The Django test client with ``user``'s session; skipped where the admin asks more."""
    if user.is_superuser or needs_second_factor(user):
        login_admin(client, user)  # password and the TOTP code, as a person logs in
    else:
        client.force_login(user)
    response = client.get("/admin/")
    if response.status_code == 302 and "/admin/login" not in response["Location"]:
        pytest.skip(
            f"the admin asks {user.username} for a second factor ({response['Location']}): "
            "log in through it here once it exists"
        )
    return client, response


def may_see(who: str, permission: str) -> bool:
    if who == "root":
        return True  # a superuser opens every menu (and still acts only through roles)
    if who == "outsider":
        return False
    return permission in ROLE_PERMISSIONS[Role(who)]


@pytest.mark.parametrize("who", ADMIN_PEOPLE)
def test_who_sees_what_in_the_admin(client, house, cast, who):
    client, index = logged_in(client, admin_user(house, who))
    assert index.status_code == 200, f"{who}: the admin index answered {index.status_code}"
    wrong = {}
    for name, (url, permission) in CHANGELISTS.items():
        status = client.get(url).status_code
        expected = 200 if may_see(who, permission) else 403
        if status != expected:
            wrong[name] = f"{status}, expected {expected} ({permission})"
    assert not wrong, f"{who} in the admin: {wrong}"


def test_the_admin_is_closed_to_anonymous_visitors(client, cast):
    for url in ["/admin/", *(u for u, _ in CHANGELISTS.values())]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url


@pytest.fixture(scope="module")
def recorded(house: House, django_db_blocker) -> Iterator[None]:
    """One of every record the admin shows: a séance played and closed with its report, a
    pack counted back, a dispute with evidence, an anomaly, a visa, a police visit, a cercle's
    deal."""
    with django_db_blocker.unblock(), rolled_back():
        h = house
        shift = seance(h)
        pack = opened_pack(h, shift, cut=True)
        lay_in_coups(h.cast, shift, COUP_CARDS)
        coup = shift.coups.get()
        found = dispute_raise(actor=h.cast.croupier, subject="coup", subject_id=coup.pk, claim="c")
        evidence_add(
            actor=h.cast.croupier, dispute_id=found.pk, name="p.jpg", content=b"x", content_type=""
        )
        pack_retire(actor=h.cast.chef, pack_id=pack.pk, counted={})
        anomaly(h)
        register_visa(actor=h.cast.commissaire, day=dt.date(2026, 1, 2))
        observation_record(
            actor=h.cast.commissaire, visited_at=dt.datetime.now(dt.UTC), checks="les scellés"
        )
        count = count_record(
            actor=h.cast.croupier, table_id=h.table.pk, moment="closing", chips=FLOAT
        )
        count_countersign(actor=h.cast.directeur, count_id=count.pk)
        shift_close(actor=h.cast.chef, shift=shift, count_id=count.pk)
        # A cercle deal, for the pages of deals.
        cercle = cercle_ready(h.cast)
        play_act_by_act(h.cast, cercle, simulated(7))
        close_cercle(h.cast, cercle)
        # A Pharao taille, for the pages of tailles, their stakes and the banker's approvals.
        play_a_taille(h.cast, open_seance(h.cast, pharao_table(h.cast)))
        chain_verify_and_record()
        yield


def record_admins() -> list[tuple[str, Any]]:
    return sorted(
        (f"{m._meta.app_label}/{m._meta.model_name}", m)
        for m, model_admin in admin.site._registry.items()
        if isinstance(model_admin, RecordAdmin)
    )


@pytest.mark.parametrize("who", ADMIN_PEOPLE)
def test_records_are_never_added_changed_or_deleted_in_the_admin(
    client, house, recorded, cast, who
):
    client, _index = logged_in(client, admin_user(house, who))
    before = snapshot()
    allowed, no_row = [], []
    for name, model in record_admins():
        row = model.objects.order_by("pk").first()
        if row is None:
            no_row.append(name)
        tries = [] if model is Table else [("add", f"/admin/{name}/add/", "get")]
        # Tables are added through the director's service form (table_create), not edited here.
        if row is not None:
            change = f"/admin/{name}/{row.pk}/change/"
            tries += [
                ("change", change, "post"),
                ("delete", f"/admin/{name}/{row.pk}/delete/", "post"),
            ]
        for what, url, method in tries:
            response = getattr(client, method)(url, {"post": "yes"} if method == "post" else None)
            if response.status_code != 403:
                allowed.append(f"{what} {name}: {response.status_code}")
    assert not allowed, f"{who} in the admin: {allowed}"
    assert snapshot() == before
    # Every kind of record was tried, but the daily register's sign-off (a closed gaming day).
    assert no_row == ["reports/registersignoff"], no_row
