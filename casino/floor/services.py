"""Writes of the floor: posted règlements, tables, séances with their counts, and the ledger."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction
from django.db.models import Sum

from audit.chain import audit_record
from audit.models import Severity
from audit.services import anomaly_raise
from casino import clock
from casino.errors import Conflict, DomainError, NotFound, SegregationViolation
from casino.floor.articles import Article, articles_for
from casino.floor.models import (
    Account,
    Duty,
    DutyEnd,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Shift,
    Table,
)
from casino.games.errors import GameError
from casino.games.reglement import PRESETS, Reglement, reglement
from casino.locks import lock_name
from casino.people.roles import Role
from casino.people.services import require_role, roles_of


class InvalidReglementPosting(DomainError):
    """A règlement whose parameters the engine refuses, or whose articles are malformed."""

    code = "invalid_reglement"


class InvalidCount(DomainError):
    """A float count that is not chips by denomination, or signed by the wrong people."""

    code = "invalid_count"


class NotOnDuty(DomainError):
    """The act belongs to someone on duty at this séance in that post."""

    code = "not_on_duty"
    http_status = 403


class InvalidMovement(DomainError):
    """A ledger movement that cannot be: a non-positive amount, the same account on both sides."""

    code = "invalid_movement"


# --- posted règlements --------------------------------------------------------------------------


def _check_articles(articles: list[Article]) -> None:
    numbers = set()
    for index, article in enumerate(articles):
        where = f"articles[{index}]"
        if not isinstance(article, dict) or set(article) != {"number", "fr", "en"}:
            raise InvalidReglementPosting("an article is {number, fr, en}", where=where)
        if not all(isinstance(article[k], str) and article[k].strip() for k in article):
            raise InvalidReglementPosting(
                "number, French and English text are required", where=where
            )
        if article["number"] in numbers:
            raise InvalidReglementPosting(f"article {article['number']} twice", where=where)
        numbers.add(article["number"])
    if not articles:
        raise InvalidReglementPosting("a règlement has articles", where="articles")


@transaction.atomic
def reglement_post(
    *,
    actor: Any,
    name: str,
    spec: Any,
    effective_from: dt.date,
    articles: list[Article] | None = None,
) -> PostedReglement:
    """Post a new version of the règlement ``name``: the commissioner approves its posting."""
    require_role(actor, Role.COMMISSAIRE, act="approving the posting of a règlement")
    try:
        engine = reglement(spec)
    except GameError as exc:
        raise InvalidReglementPosting(exc.message, where=exc.where) from None
    articles = articles if articles is not None else articles_for(engine)
    _check_articles(articles)
    lock_name(f"reglement:{name}")  # one version number at a time per règlement
    previous = PostedReglement.objects.filter(name=name).order_by("-version").first()
    posted = PostedReglement.objects.create(
        name=name,
        version=(previous.version + 1) if previous else 1,
        parameters=replace(engine, name=name).to_json(),
        articles=articles,
        effective_from=effective_from,
        approved_by=actor,
        approved_at=clock.now(),
        supersedes=previous,
    )
    audit_record(
        actor=actor,
        action="reglement.posted",
        subject=posted,
        payload={
            "name": name,
            "version": posted.version,
            "parameters": posted.parameters,
            "articles": articles,
            "effective_from": effective_from,
            "supersedes": previous.pk if previous else None,
        },
    )
    return posted


def reglement_load_presets(*, actor: Any, effective_from: dt.date) -> list[PostedReglement]:
    """The four presets of RULES.md, as the initial posted versions (those not posted yet)."""
    return [
        reglement_post(actor=actor, name=name, spec=name, effective_from=effective_from)
        for name in PRESETS
        if not PostedReglement.objects.filter(name=name).exists()
    ]


# --- tables -------------------------------------------------------------------------------------


def _limits(posted: PostedReglement, min_stake: int, max_stake: int) -> Reglement:
    try:
        return posted.with_limits(min_stake=min_stake, max_stake=max_stake)
    except GameError as exc:
        raise InvalidReglementPosting(
            exc.message, where=(exc.where or "").replace("reglement.", "")
        ) from None


@transaction.atomic
def table_create(
    *, actor: Any, number: int, game: Game | str, reglement_id: int, min_stake: int, max_stake: int
) -> Table:
    require_role(actor, Role.DIRECTEUR, act="creating a table")
    try:
        posted = PostedReglement.objects.get(pk=reglement_id)
    except PostedReglement.DoesNotExist:
        raise NotFound(
            f"posted règlement {reglement_id} does not exist", where="reglement"
        ) from None
    _limits(posted, min_stake, max_stake)
    table = Table.objects.create(
        number=number, game=Game(game), reglement=posted, min_stake=min_stake, max_stake=max_stake
    )
    for kind in (Account.Kind.LAYOUT, Account.Kind.BANK, Account.Kind.PRISON):
        Account.objects.create(
            code=f"T{number}:{kind}", kind=kind, table=table, name=f"{table} · {kind}"
        )
    audit_record(
        actor=actor,
        action="table.created",
        subject=table,
        payload={
            "number": number,
            "game": str(game),
            "reglement": f"{posted.name} v{posted.version}",
            "min_stake": min_stake,
            "max_stake": max_stake,
        },
    )
    return table


def table_account(table: Table, kind: Account.Kind) -> Account:
    return Account.objects.get(table=table, kind=kind)


def table_accounts(table: Table) -> dict[str, Account]:
    """The table's layout, bank and prison accounts by kind, in one query."""
    return {a.kind: a for a in Account.objects.filter(table=table).exclude(kind=Account.Kind.SEAT)}


def house_account(kind: Account.Kind) -> Account:
    """The cage or the outside world (one each for the house), made on first use."""
    account, _ = Account.objects.get_or_create(
        code=str(kind), defaults={"kind": kind, "name": kind.label}
    )
    return account


# --- the ledger ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    kind: Movement.Kind
    credit: Account  # where the money comes from
    debit: Account  # where it goes
    amount: int
    reference: str = ""
    key: str = ""


def ledger_post(*, actor: Any, shift: Shift | None, entries: Iterable[Entry]) -> list[Movement]:
    """Write movements in the caller's transaction. Each balances by construction; a repeated
    idempotency key is refused by the database (a retried act cannot pay twice)."""
    movements = []
    at = clock.now()
    for index, e in enumerate(entries):
        if not isinstance(e.amount, int) or isinstance(e.amount, bool) or e.amount <= 0:
            raise InvalidMovement(
                f"{e.kind}: amount {e.amount!r} is not a positive integer",
                where=f"entries[{index}].amount",
            )
        if e.credit.pk == e.debit.pk:
            raise InvalidMovement(f"{e.kind}: {e.credit} on both sides", where=f"entries[{index}]")
        movements.append(
            Movement(
                at=at,
                debit=e.debit,
                credit=e.credit,
                amount=e.amount,
                kind=e.kind,
                shift=shift,
                reference=e.reference,
                idempotency_key=e.key or f"{e.kind}:{uuid.uuid4()}",
                actor=actor,
            )
        )
    return Movement.objects.bulk_create(movements)


def balance(account: Account, *, shift: Shift | None = None) -> int:
    """What the account holds: what came in (debits) less what went out (credits)."""
    movements = Movement.objects.all() if shift is None else Movement.objects.filter(shift=shift)
    came_in = movements.filter(debit=account).aggregate(s=Sum("amount"))["s"] or 0
    went_out = movements.filter(credit=account).aggregate(s=Sum("amount"))["s"] or 0
    return int(came_in - went_out)


# --- the carnet d'avances ------------------------------------------------------------------------


def _count(
    shift: Shift,
    moment: FloatCount.Moment,
    chips: Mapping[str, int],
    counted_by: Any,
    countersigned_by: Any,
) -> FloatCount:
    """The carnet d'avances: chips by denomination, a counting croupier and a countersignature
    by the director or a comité member (two different people)."""
    if Role.CROUPIER not in roles_of(counted_by):
        raise InvalidCount(
            f"{counted_by} is not a croupier: a croupier counts the float", where="counted_by"
        )
    if not roles_of(countersigned_by) & {Role.DIRECTEUR, Role.COMITE}:
        raise InvalidCount(
            f"{countersigned_by} may not countersign: the director or a comité member does",
            where="countersigned_by",
        )
    if counted_by.pk == countersigned_by.pk:
        raise SegregationViolation(
            "the count needs two different signatures", where="countersigned_by"
        )
    total = 0
    clean: dict[str, int] = {}
    if not isinstance(chips, Mapping) or not chips:
        raise InvalidCount('chips by denomination: {"10000": 20, ...}', where="chips")
    for denomination, number in chips.items():
        try:
            value = int(denomination)
        except (TypeError, ValueError):
            raise InvalidCount(
                f"{denomination!r} is not a denomination in minor units",
                where=f"chips.{denomination}",
            ) from None
        if value <= 0 or not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise InvalidCount(
                f"{denomination}: {number!r} is not a count of chips", where=f"chips.{denomination}"
            )
        clean[str(value)] = number
        total += value * number
    return FloatCount.objects.create(
        shift=shift,
        moment=moment,
        chips=clean,
        total=total,
        counted_by=counted_by,
        countersigned_by=countersigned_by,
        at=clock.now(),
    )


# --- who is on duty -----------------------------------------------------------------------------


def on_duty(shift_id: int, person: Any, *posts: Duty.Post) -> bool:
    return Duty.objects.filter(
        shift_id=shift_id, person=person, post__in=posts, end__isnull=True
    ).exists()


def require_on_duty(shift: Shift, person: Any, *posts: Duty.Post, act: str) -> None:
    """Holding the role is not enough: the act belongs to whoever is on duty at this séance."""
    if not on_duty(shift.pk, person, *posts):
        wanted = " or ".join(str(p) for p in posts)
        raise NotOnDuty(
            f"{act} at {shift.table}: {person} is not on duty there as {wanted}", where="actor"
        )


def _duty_end(duty: Duty, actor: Any, reason: str) -> DutyEnd:
    end = DutyEnd.objects.create(duty=duty, at=clock.now(), by=actor, reason=reason)
    audit_record(
        actor=actor,
        action="duty.ended",
        subject=duty.shift,
        payload={"person": duty.person.username, "post": duty.post, "reason": reason},
    )
    return end


def _duty_start(shift: Shift, person: Any, post: Duty.Post, actor: Any) -> Duty:
    """Put someone on duty: they hold the role, and are on duty nowhere else. A new tailleur
    relieves the one dealing (one tailleur at a time)."""
    post = Duty.Post(post)
    if Role(post) not in roles_of(person):
        raise NotOnDuty(f"{person} does not hold the role {post}", where="person")
    busy = Duty.objects.filter(person=person, end__isnull=True).select_related("shift__table")
    if busy.exists():
        raise Conflict(f"{person} is already on duty at {busy[0].shift.table}", where="person")
    if post == Duty.Post.TAILLEUR:
        for dealing in Duty.objects.filter(shift=shift, post=post, end__isnull=True):
            _duty_end(dealing, actor, f"relieved by {person.username}")
    duty = Duty.objects.create(
        shift=shift, person=person, post=post, started_at=clock.now(), assigned_by=actor
    )
    audit_record(
        actor=actor,
        action="duty.started",
        subject=shift,
        payload={"person": person.username, "post": post.value, "duty": duty.pk},
    )
    return duty


def open_shift_locked(shift_id: int) -> Shift:
    """The séance, locked for this transaction, refused if it is closed."""
    try:
        shift = (
            Shift.objects.select_for_update(of=("self",)).select_related("table").get(pk=shift_id)
        )
    except Shift.DoesNotExist:
        raise NotFound(f"séance {shift_id} does not exist", where="shift") from None
    if shift.closed_at is not None:
        raise Conflict(f"séance {shift.pk} is closed", where="shift")
    return shift


@transaction.atomic
def duty_assign(*, actor: Any, shift_id: int, person: Any, post: Duty.Post | str) -> Duty:
    """The chef de partie puts a tailleur or a croupier on duty (a relief, a reinforcement)."""
    require_role(actor, Role.CHEF_DE_PARTIE, act="assigning staff to a séance")
    return _duty_start(open_shift_locked(shift_id), person, Duty.Post(post), actor)


@transaction.atomic
def duty_end(*, actor: Any, duty_id: int, reason: str) -> DutyEnd:
    """The chef de partie takes someone off duty (a break, the end of their hours)."""
    require_role(actor, Role.CHEF_DE_PARTIE, act="taking staff off duty")
    reason = reason.strip()
    if not reason:
        raise NotOnDuty("say why the duty ends", where="reason")
    try:
        duty = Duty.objects.select_related("person", "shift").get(pk=duty_id)
    except Duty.DoesNotExist:
        raise NotFound(f"duty {duty_id} does not exist", where="duty") from None
    open_shift_locked(duty.shift_id)
    if hasattr(duty, "end"):
        raise Conflict(f"{duty} already ended", where="duty")
    return _duty_end(duty, actor, reason)


# --- séances and the cash rundown ---------------------------------------------------------------


@transaction.atomic
def shift_open(
    *,
    actor: Any,
    table: Table,
    chips: Mapping[str, int],
    counted_by: Any,
    countersigned_by: Any,
    tailleur: Any,
    croupiers: Iterable[Any],
) -> Shift:
    """Open a séance with the table's float counted and its staff on duty (a tailleur and at
    least one croupier); the float comes from the cage."""
    require_role(actor, Role.CHEF_DE_PARTIE, act="opening a séance")
    croupiers = list(croupiers)
    if not croupiers:
        raise NotOnDuty("a séance opens with at least one croupier on duty", where="croupiers")
    Table.objects.select_for_update().get(pk=table.pk)
    if Shift.objects.filter(table=table, closed_at__isnull=True).exists():
        raise Conflict(f"{table} already has an open séance", where="table")
    shift = Shift.objects.create(table=table, opened_at=clock.now(), opened_by=actor)
    count = _count(shift, FloatCount.Moment.OPENING, chips, counted_by, countersigned_by)
    _duty_start(shift, tailleur, Duty.Post.TAILLEUR, actor)
    for croupier in croupiers:
        _duty_start(shift, croupier, Duty.Post.CROUPIER, actor)
    if count.total:
        ledger_post(
            actor=actor,
            shift=shift,
            entries=[
                Entry(
                    Movement.Kind.FLOAT,
                    house_account(Account.Kind.CAGE),
                    table_account(table, Account.Kind.BANK),
                    count.total,
                    f"shift:{shift.pk}:float",
                    f"shift:{shift.pk}:float",
                )
            ],
        )
    audit_record(
        actor=actor,
        action="shift.opened",
        subject=shift,
        payload={
            "table": table.number,
            "float": count.total,
            "chips": count.chips,
            "counted_by": counted_by.username,
            "countersigned_by": countersigned_by.username,
        },
    )
    return shift


def _cash_transfer(
    actor: Any, shift_id: int, amount: int, table_party: Any, kind: Movement.Kind
) -> Movement:
    require_role(actor, Role.CAISSIER, act=f"recording a {kind}")
    require_role(table_party, Role.CHEF_DE_PARTIE, act=f"receiving a {kind} at the table")
    shift = open_shift_locked(shift_id)
    cage = house_account(Account.Kind.CAGE)
    bank = table_account(shift.table, Account.Kind.BANK)
    credit, debit = (cage, bank) if kind == Movement.Kind.FILL else (bank, cage)
    (movement,) = ledger_post(
        actor=actor,
        shift=shift,
        entries=[
            Entry(
                kind,
                credit,
                debit,
                amount,
                f"{kind} by {actor.username} with {table_party.username}",
            )
        ],
    )
    audit_record(
        actor=actor,
        action=f"shift.{kind}",
        subject=shift,
        payload={
            "amount": amount,
            "cashier": actor.username,
            "table_party": table_party.username,
            "movement": movement.pk,
        },
    )
    return movement


@transaction.atomic
def shift_fill(*, actor: Any, shift_id: int, amount: int, table_party: Any) -> Movement:
    """Chips brought from the cage to the table: the cashier and the chef de partie both sign."""
    return _cash_transfer(actor, shift_id, amount, table_party, Movement.Kind.FILL)


@transaction.atomic
def shift_credit(*, actor: Any, shift_id: int, amount: int, table_party: Any) -> Movement:
    """Chips taken from the table back to the cage, signed by both."""
    return _cash_transfer(actor, shift_id, amount, table_party, Movement.Kind.CREDIT)


@dataclass(frozen=True)
class Rundown:
    """closing = opening + fills - credits + net result of play; anything else is a variance."""

    opening: int
    fills: int
    credits: int
    result: int
    closing: int | None

    @property
    def expected(self) -> int:
        return self.opening + self.fills - self.credits + self.result

    @property
    def variance(self) -> int | None:
        return None if self.closing is None else self.closing - self.expected


def rundown(shift: Shift) -> Rundown:
    bank = table_account(shift.table, Account.Kind.BANK)
    movements = Movement.objects.filter(shift=shift)

    def total(**filters: Any) -> int:
        return int(movements.filter(**filters).aggregate(s=Sum("amount"))["s"] or 0)

    opening = total(kind=Movement.Kind.FLOAT, debit=bank)
    fills = total(kind=Movement.Kind.FILL, debit=bank)
    credits = total(kind=Movement.Kind.CREDIT, credit=bank)
    play = movements.exclude(
        kind__in=[Movement.Kind.FLOAT, Movement.Kind.FILL, Movement.Kind.CREDIT]
    )
    result = int(play.filter(debit=bank).aggregate(s=Sum("amount"))["s"] or 0) - int(
        play.filter(credit=bank).aggregate(s=Sum("amount"))["s"] or 0
    )
    closing = (
        FloatCount.objects.filter(shift=shift, moment=FloatCount.Moment.CLOSING)
        .values_list("total", flat=True)
        .first()
    )
    return Rundown(opening, fills, credits, result, closing)


@transaction.atomic
def shift_close(
    *, actor: Any, shift: Shift, chips: Mapping[str, int], counted_by: Any, countersigned_by: Any
) -> Rundown:
    """Close the séance with the closing count certified; a difference with the rundown raises
    a ``cash_variance`` anomaly with the exact amount."""
    require_role(actor, Role.CHEF_DE_PARTIE, act="closing a séance")
    shift = Shift.objects.select_for_update(of=("self",)).select_related("table").get(pk=shift.pk)
    if shift.closed_at is not None:
        raise Conflict(f"séance {shift.pk} is already closed", where="shift")
    count = _count(shift, FloatCount.Moment.CLOSING, chips, counted_by, countersigned_by)
    for duty in Duty.objects.filter(shift=shift, end__isnull=True).select_related("person"):
        _duty_end(duty, actor, "séance closed")
    shift.closed_at = clock.now()
    shift.save(update_fields=["closed_at"])
    figures = rundown(shift)
    audit_record(
        actor=actor,
        action="shift.closed",
        subject=shift,
        payload={
            "opening": figures.opening,
            "fills": figures.fills,
            "credits": figures.credits,
            "result": figures.result,
            "expected": figures.expected,
            "closing": count.total,
            "variance": figures.variance,
        },
    )
    if figures.variance:
        anomaly_raise(
            detector="cash_variance",
            severity=Severity.CRITICAL,
            subject=shift,
            summary=f"{shift.table}: closing count {count.total} differs from the rundown "
            f"{figures.expected} by {figures.variance}",
            evidence={
                "opening": figures.opening,
                "fills": figures.fills,
                "credits": figures.credits,
                "result": figures.result,
                "expected": figures.expected,
                "closing": count.total,
                "variance": figures.variance,
                "chips": count.chips,
            },
            involved=[counted_by.pk, actor.pk],
            dedup_key=f"cash_variance:{shift.pk}",
        )
    # The séance's signed report: asked for now, rendered by a worker after commit.
    from casino.reports.services import shift_report_request

    shift_report_request(shift=shift, actor=actor, reason="séance fermée / shift closed")
    return figures
