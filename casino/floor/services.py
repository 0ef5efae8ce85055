"""Writes of the floor: posted règlements, tables, séances with their counts, and the ledger."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, Model, OuterRef, Q, Sum
from django.utils import translation
from django.utils.translation import gettext as _

from audit.chain import audit_record
from audit.models import Severity
from audit.services import anomaly_raise
from casino import clock
from casino.errors import Conflict, DomainError, NotFound, SegregationViolation
from casino.floor.articles import Article, articles_for
from casino.floor.models import (
    CORRECTION_APPROVAL_THRESHOLD,
    Account,
    CashTransfer,
    CountSignature,
    Duty,
    DutyEnd,
    FloatCount,
    Game,
    Movement,
    PostedReglement,
    Shift,
    Table,
    TableChange,
    TransferSignature,
)
from casino.floor.registry import game_module
from casino.games.errors import GameError
from casino.games.reglement import PRESETS, Reglement, reglement
from casino.i18n import either, game_message
from casino.locks import lock_name
from casino.outbox.outbox import enqueue
from casino.people.roles import Role
from casino.people.services import require_role, roles_of
from casino.prepared import Prepared, PreparedInsert


class InvalidReglementPosting(DomainError):
    """A règlement whose parameters the engine refuses, or whose articles are malformed."""

    code = "invalid_reglement"


# The largest amount any act accepts (minor units): far above any real table, far below what
# PostgreSQL's bigint or a sum of a year of them could overflow.
MAX_AMOUNT = 10**12


class InvalidCount(DomainError):
    """A float count that is not chips by denomination, or signed by the wrong people."""

    code = "invalid_count"


class NotOnDuty(DomainError):
    """The act belongs to someone on duty at this séance in that post."""

    code = "not_on_duty"
    http_status = 403


class StakeRefused(DomainError):
    """A stake the règlement refuses: outside the table's limits, insurance where there is none.
    One code at every game's table (the API's one vocabulary)."""

    code = "stake_refused"


class LateStake(DomainError):
    """A change of stake once the round's cards are coming (Trente-et-Quarante: after the first
    card, RULES.md 1.2.2; Pharao: between a draw's first card and its settlement): refused, and
    recorded as a ``late_stake`` anomaly."""

    code = "late_stake"
    recorded = True


class InvalidMovement(DomainError):
    """A ledger movement that cannot be: a non-positive amount, the same account on both sides."""

    code = "invalid_movement"


# --- posted règlements --------------------------------------------------------------------------


def _check_articles(articles: list[Article]) -> None:
    numbers = set()
    for index, article in enumerate(articles):
        where = f"articles[{index}]"
        if not isinstance(article, dict) or set(article) != {"number", "fr", "en"}:
            raise InvalidReglementPosting(_("un article est {number, fr, en}"), where=where)
        if not all(isinstance(article[k], str) and article[k].strip() for k in article):
            raise InvalidReglementPosting(
                _("le numéro et les textes français et anglais sont obligatoires"), where=where
            )
        if article["number"] in numbers:
            raise InvalidReglementPosting(
                _("l'article %(number)s figure deux fois") % {"number": article["number"]},
                where=where,
            )
        numbers.add(article["number"])
    if not articles:
        raise InvalidReglementPosting(_("un règlement a des articles"), where="articles")


@transaction.atomic
def reglement_post(
    *,
    actor: Any,
    name: str,
    spec: Any,
    effective_from: dt.date,
    articles: list[Article] | None = None,
    correction_approval_threshold: int = CORRECTION_APPROVAL_THRESHOLD,
) -> PostedReglement:
    """Post a new version of the règlement ``name``: the commissioner approves its posting.
    ``correction_approval_threshold`` (minor units): a dispute's corrections moving more need a
    second approver."""
    require_role(actor, Role.COMMISSAIRE, act=_("approuver l'affichage d'un règlement"))
    try:
        engine = reglement(spec)
    except GameError as exc:
        raise InvalidReglementPosting(game_message(exc), where=exc.where) from None
    threshold = correction_approval_threshold
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
        raise InvalidReglementPosting(
            _("%(threshold)r n'est pas un montant positif") % {"threshold": threshold},
            where="correction_approval_threshold",
        )
    articles = (
        articles
        if articles is not None
        else articles_for(engine, correction_approval_threshold=threshold)
    )
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
        correction_approval_threshold=threshold,
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
            "correction_approval_threshold": threshold,
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
            game_message(exc), where=(exc.where or "").replace("reglement.", "")
        ) from None


@transaction.atomic
def table_create(
    *, actor: Any, number: int, game: Game | str, reglement_id: int, min_stake: int, max_stake: int
) -> Table:
    require_role(actor, Role.DIRECTEUR, act=_("créer une table"))
    posted = _posted(reglement_id)
    _limits(posted, min_stake, max_stake)
    if Table.objects.filter(number=number).exists():
        raise Conflict(_("la table %(number)s existe déjà") % {"number": number}, where="number")
    table = Table.objects.create(
        number=number, game=Game(game), reglement=posted, min_stake=min_stake, max_stake=max_stake
    )
    _settings_recorded(table, posted, min_stake, max_stake, actor)
    for kind in map(Account.Kind, game_module(table.game).accounts):
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


def _settings_recorded(
    table: Table, posted: PostedReglement, min_stake: int, max_stake: int, actor: Any
) -> TableChange:
    """The record of who set a table's règlement and limits: PostgreSQL lets the table's row
    carry no other settings than the last such record's."""
    return TableChange.objects.create(
        table=table,
        reglement=posted,
        min_stake=min_stake,
        max_stake=max_stake,
        at=clock.now(),
        by=actor,
    )


def _posted(reglement_id: int) -> PostedReglement:
    try:
        return PostedReglement.objects.get(pk=reglement_id)
    except PostedReglement.DoesNotExist:
        raise NotFound(
            _("le règlement affiché %(reglement)s n'existe pas") % {"reglement": reglement_id},
            where="reglement",
        ) from None


@transaction.atomic
def table_configure(
    *, actor: Any, table_id: int, reglement_id: int, min_stake: int, max_stake: int
) -> TableChange:
    """The director moves a table to another posted règlement version or changes its limits.
    It takes effect at the table's next séance: a séance keeps what it opened under."""
    require_role(actor, Role.DIRECTEUR, act=_("changer le règlement ou les limites d'une table"))
    try:
        table = Table.objects.select_for_update().get(pk=table_id)
    except Table.DoesNotExist:
        raise NotFound(
            _("la table %(table)s n'existe pas") % {"table": table_id}, where="table"
        ) from None
    posted = _posted(reglement_id)
    _limits(posted, min_stake, max_stake)
    before = (
        f"{table.reglement.name} v{table.reglement.version} {table.min_stake}-{table.max_stake}"
    )
    change = _settings_recorded(table, posted, min_stake, max_stake, actor)
    table.reglement, table.min_stake, table.max_stake = posted, min_stake, max_stake
    table.save(update_fields=["reglement", "min_stake", "max_stake"])
    audit_record(
        actor=actor,
        action="table.changed",
        subject=table,
        payload={
            "before": before,
            "reglement": f"{posted.name} v{posted.version}",
            "min_stake": min_stake,
            "max_stake": max_stake,
            "change": change.pk,
        },
    )
    return change


def table_account(table: Table, kind: Account.Kind) -> Account:
    return Account.objects.get(table=table, kind=kind)


def till_account(table: Table) -> Account:
    """The account the séance's rundown counts: a banking table's bank, a cercle's fee box."""
    return table_account(table, Account.Kind(game_module(table.game).till))


# Every settlement reads them: prepared once (casino/prepared.py).
_TABLE_ACCOUNTS = Prepared(
    lambda table_id: Account.objects.filter(table_id=table_id).exclude(kind=Account.Kind.SEAT)
)


def table_accounts(table: Table) -> dict[str, Account]:
    """The table's layout, bank and prison accounts by kind, in one query."""
    return {a.kind: a for a in _TABLE_ACCOUNTS.all(table.pk)}


def _holder_code(table: Table, holder: str) -> tuple[str, Account.Kind] | None:
    holder = holder.strip()
    if not holder or len(holder) > 40:
        return None
    if holder.startswith("patron:"):
        return holder, Account.Kind.PATRON
    return f"T{table.number}:seat:{holder}", Account.Kind.SEAT


def holder_account(table: Table, holder: str) -> Account | None:
    """Whose stake it is: a patron's account (``patron:<id>``), or the anonymous seat marker at
    this table (any other 1 to 40 characters), made on first use; None for anything else."""
    coded = _holder_code(table, holder)
    if coded is None:
        return None
    code, kind = coded
    account, _created = Account.objects.get_or_create(
        code=code,
        defaults={
            "kind": kind,
            "table": table if kind == Account.Kind.SEAT else None,
            "name": holder.strip(),
        },
    )
    return account


# Every stake reads its accounts here, per game's round: prepared once (casino/prepared.py).
_STAKE_ACCOUNTS: dict[type[Model], Prepared] = {}


def stake_accounts(
    table: Table,
    holder: str,
    *,
    round_: Model,
    ref: str,
    taken: str,
    no_holder: type[DomainError],
) -> tuple[Account, Account]:
    """A stake's two accounts: its holder's (as ``holder_account``) and the table's layout. One
    query where the holder's account exists (every stake is placed through here), which also asks
    whether the stake's reference ``ref`` is already on its round (a coup, a taille: their
    ``stakes``), read after the round's lock: the reference and the accounts were two queries
    (issue 17, tenth round). Refused, in this order: a reference already there (``Conflict``,
    ``taken`` said with the reference and the round's number), then a holder who is nobody
    (``no_holder``, each game's own code); a refused stake makes no account."""
    prepared = _STAKE_ACCOUNTS.get(type(round_))
    if prepared is None:
        key = type(round_).stakes.field  # the stake's foreign key to its round

        prepared = _STAKE_ACCOUNTS[type(round_)] = Prepared(
            lambda table_id, code, round_id, ref: Account.objects.filter(
                Q(table_id=table_id, kind=Account.Kind.LAYOUT) | Q(code=code)
            ).annotate(
                ref_taken=Exists(key.model.objects.filter(**{key.attname: round_id, "ref": ref}))
            )
        )
    coded = _holder_code(table, holder)
    code = coded[0] if coded else None
    both = prepared.all(table.pk, code or "", round_.pk, ref)  # every account has a code
    layout = next(a for a in both if a.kind == Account.Kind.LAYOUT and a.table_id == table.pk)
    if layout.ref_taken:
        raise Conflict(taken % {"ref": ref, "number": round_.number}, where="ref")
    held = next((a for a in both if a.code == code), None)  # no code: nobody
    account = held or holder_account(table, holder)
    if account is None:
        raise no_holder(
            _("une mise appartient à un joueur ou à une place (1 à 40 caractères)"),
            where="holder",
        )
    return account, layout


def house_account(kind: Account.Kind) -> Account:
    """The cage or the outside world (one each for the house), made on first use."""
    # A record's words are the house's, whichever language the request that made it spoke.
    with translation.override(settings.LANGUAGE_CODE):
        name = str(kind.label)
    account, _created = Account.objects.get_or_create(
        code=str(kind), defaults={"kind": kind, "name": name}
    )
    return account


# --- the ledger ---------------------------------------------------------------------------------


_INSERT_MOVEMENT = PreparedInsert(Movement)


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
                _("%(kind)s : le montant %(amount)r n'est pas un entier positif")
                % {"kind": e.kind, "amount": e.amount},
                where=f"entries[{index}].amount",
            )
        if e.credit.pk == e.debit.pk:
            raise InvalidMovement(
                _("%(kind)s : %(account)s des deux côtés") % {"kind": e.kind, "account": e.credit},
                where=f"entries[{index}]",
            )
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
    return _INSERT_MOVEMENT.insert_all(movements)


def balance(account: Account, *, shift: Shift | None = None) -> int:
    """What the account holds: what came in (debits) less what went out (credits)."""
    movements = Movement.objects.all() if shift is None else Movement.objects.filter(shift=shift)
    came_in = movements.filter(debit=account).aggregate(s=Sum("amount"))["s"] or 0
    went_out = movements.filter(credit=account).aggregate(s=Sum("amount"))["s"] or 0
    return int(came_in - went_out)


# --- the carnet d'avances ------------------------------------------------------------------------

# The house's chips, largest first (minor units): the rows of a count on the séance's page (the
# simulator counts in the same values). A count of another value is still accepted: a count
# records what was found.
CHIP_VALUES = (10000, 2500, 500, 100, 50, 10, 5, 1)


def _chips(chips: Mapping[str, int]) -> tuple[dict[str, int], int]:
    """Chips by denomination, checked: the clean form and the total."""
    if not isinstance(chips, Mapping) or not chips:
        raise InvalidCount(_('des jetons par valeur : {"10000": 20, ...}'), where="chips")
    total = 0
    clean: dict[str, int] = {}
    for denomination, number in chips.items():
        try:
            value = int(denomination)
        except (TypeError, ValueError):
            raise InvalidCount(
                _("%(denomination)r n'est pas une valeur de jeton en unités mineures")
                % {"denomination": denomination},
                where=f"chips.{denomination}",
            ) from None
        if not 0 < value <= MAX_AMOUNT or not _is_count(number):
            raise InvalidCount(
                _("%(denomination)s : %(number)r n'est pas un nombre de jetons")
                % {"denomination": denomination, "number": number},
                where=f"chips.{denomination}",
            )
        clean[str(value)] = number
        total += value * number
    if total > MAX_AMOUNT:
        raise InvalidCount(
            _("%(total)s dépasse ce qu'une table peut contenir") % {"total": total}, where="chips"
        )
    return clean, total


def _is_count(number: object) -> bool:
    return isinstance(number, int) and not isinstance(number, bool) and 0 <= number <= 1_000_000


@transaction.atomic
def count_record(
    *, actor: Any, table_id: int, moment: FloatCount.Moment | str, chips: Mapping[str, int]
) -> FloatCount:
    """A croupier counts the float, chips by denomination: before a séance opens (opening), or
    at its end, on duty there (closing). The count stands once countersigned."""
    require_role(actor, Role.CROUPIER, act=_("compter le fonds de table"))
    try:
        table = Table.objects.select_for_update().get(pk=table_id)
    except Table.DoesNotExist:
        raise NotFound(
            _("la table %(table)s n'existe pas") % {"table": table_id}, where="table"
        ) from None
    moment = FloatCount.Moment(moment)
    shift = open_shift_at(table.pk)
    if moment == FloatCount.Moment.OPENING and shift is not None:
        raise Conflict(
            _("%(table)s est en séance : comptez sa fermeture") % {"table": table}, where="moment"
        )
    if moment == FloatCount.Moment.CLOSING:
        if shift is None:
            raise Conflict(
                _("%(table)s n'a pas de séance ouverte à fermer") % {"table": table},
                where="moment",
            )
        require_on_duty(
            shift, actor, Duty.Post.CROUPIER, act=_("compter le fonds de table à la fermeture")
        )
    clean, total = _chips(chips)
    count = FloatCount.objects.create(
        table=table,
        shift=shift if moment == FloatCount.Moment.CLOSING else None,
        moment=moment,
        chips=clean,
        total=total,
        counted_by=actor,
        at=clock.now(),
    )
    audit_record(
        actor=actor,
        action="count.recorded",
        subject=count,
        payload={"table": table.number, "moment": moment.value, "chips": clean, "total": total},
    )
    return count


@transaction.atomic
def count_countersign(*, actor: Any, count_id: int) -> CountSignature:
    """The director or a comité member countersigns a count, in their own act: never the person
    who counted, never twice."""
    require_role(actor, Role.DIRECTEUR, Role.COMITE, act=_("contresigner un comptage"))
    lock_name(f"count:{count_id}")  # one countersignature at a time (append-only: no row lock)
    try:
        count = FloatCount.objects.get(pk=count_id)
    except FloatCount.DoesNotExist:
        raise NotFound(
            _("le comptage %(count)s n'existe pas") % {"count": count_id}, where="count"
        ) from None
    if count.counted_by_id == actor.pk:
        raise SegregationViolation(
            _("le comptage demande deux signatures différentes"), where="actor"
        )
    if CountSignature.objects.filter(count=count).exists():
        raise Conflict(
            _("le comptage %(count)s est déjà contresigné") % {"count": count.pk}, where="count"
        )
    signature = CountSignature.objects.create(count=count, by=actor, at=clock.now())
    audit_record(
        actor=actor,
        action="count.countersigned",
        subject=count,
        payload={"total": count.total, "counted_by": count.counted_by.username},
    )
    return signature


def _signed_count(count_id: int, table: Table, moment: FloatCount.Moment) -> FloatCount:
    """A countersigned count of that table and moment, not used by another séance."""
    try:
        count = FloatCount.objects.select_related("counted_by", "countersignature__by").get(
            pk=count_id
        )
    except FloatCount.DoesNotExist:
        raise NotFound(
            _("le comptage %(count)s n'existe pas") % {"count": count_id}, where="count"
        ) from None
    if count.table_id != table.pk or count.moment != moment:
        wrong = (
            _("le comptage %(count)s n'est pas le comptage d'ouverture de %(table)s")
            if moment == FloatCount.Moment.OPENING
            else _("le comptage %(count)s n'est pas le comptage de fermeture de %(table)s")
        )
        raise InvalidCount(wrong % {"count": count.pk, "table": table}, where="count")
    if not hasattr(count, "countersignature"):
        raise Conflict(
            _("le comptage %(count)s attend sa contresignature") % {"count": count.pk},
            where="count",
        )
    return count


# --- who is on duty -----------------------------------------------------------------------------


_ON_DUTY: dict[tuple[Duty.Post, ...], Prepared] = {}


def on_duty(shift_id: int, person: Any, *posts: Duty.Post) -> bool:
    """Is ``person`` on duty at the séance as one of ``posts``? Asked by every act that opens a
    round: prepared once per posts."""
    if person.pk is None:  # nobody, or not yet saved: on duty nowhere
        return False
    prepared = _ON_DUTY.get(posts)
    if prepared is None:
        prepared = _ON_DUTY[posts] = Prepared(
            lambda shift_id, person_id: Duty.objects.filter(
                shift_id=shift_id, person_id=person_id, post__in=posts, end__isnull=True
            )[:1]
        )
    return prepared.first(shift_id, person.pk) is not None


def require_on_duty(shift: Shift, person: Any, *posts: Duty.Post, act: str) -> None:
    """Holding the role is not enough: the act belongs to whoever is on duty at this séance."""
    if not on_duty(shift.pk, person, *posts):
        raise _not_on_duty(shift, person, posts, act)


def _not_on_duty(shift: Shift, person: Any, posts: tuple[Duty.Post, ...], act: str) -> NotOnDuty:
    return NotOnDuty(
        _("%(act)s à %(table)s : %(person)s n'y est pas de service comme %(posts)s")
        % {
            "act": act,
            "table": shift.table,
            "person": person,
            "posts": either(str(p) for p in posts),
        },
        where="actor",
    )


_ROUND_LOCKS: dict[tuple[type[Model], tuple[Duty.Post, ...]], Prepared] = {}
# What no table act reads of the round's pack and règlement: the pack's custody (the card room's),
# the règlement's articles (its text, for disputes and the reports). Read and built into every
# act's instances, they were 15 to 35% of the lock's CPU (issue 17, two A/B runs).
_NOT_FOR_ACTS = (
    "pack__maker",
    "pack__maker_pack_numbers",
    "pack__sealing_authority",
    "pack__received_at",
    "pack__received_by",
    "pack__store_location",
    "reglement__articles",
)


def round_locked(model: type[Model], pk: int, person: Any, *posts: Duty.Post, act: str) -> Any:
    """A round (a coup, a Pharao taille, a cercle deal) locked for an act, with its séance, table,
    pack and règlement, once ``person`` is known to be on duty at its séance as one of ``posts``;
    None if there is no such round. Every table act begins here, so it is one prepared statement
    (``casino.prepared``), where it was a lock and a duty query, each built and compiled afresh."""
    prepared = _ROUND_LOCKS.get((model, posts))
    if prepared is None:
        prepared = _ROUND_LOCKS[(model, posts)] = Prepared(
            lambda pk, person_id: (
                model._default_manager.select_for_update(of=("self",))
                .select_related("shift__table", "pack", "reglement")
                .defer(*_NOT_FOR_ACTS)
                .annotate(
                    actor_on_duty=Exists(
                        Duty.objects.filter(
                            shift_id=OuterRef("shift_id"),
                            person_id=person_id,
                            post__in=posts,
                            end__isnull=True,
                        )
                    )
                )
                .filter(pk=pk)
            )
        )
    found = prepared.first(pk, person.pk)
    if found is not None and not found.actor_on_duty:
        raise _not_on_duty(found.shift, person, posts, act)
    return found


def open_shift_at(table_id: int) -> Shift | None:
    return Shift.objects.filter(table_id=table_id, closed_at__isnull=True).first()


def require_duty_at_table(table_id: int, person: Any, *posts: Duty.Post, act: str) -> Shift:
    """The act happens at a table: by someone on duty in the séance open there. Returns it."""
    shift = open_shift_at(table_id)
    if shift is None:
        raise NotOnDuty(
            _("%(act)s : aucune séance n'est ouverte à cette table") % {"act": act}, where="actor"
        )
    require_on_duty(shift, person, *posts, act=act)
    return shift


def _duty_end(duty: Duty, actor: Any, reason: str) -> DutyEnd:
    end = DutyEnd.objects.create(duty=duty, at=clock.now(), by=actor, reason=reason)
    audit_record(
        actor=actor,
        action="duty.ended",
        subject=duty.shift,
        payload={"person": duty.person.username, "post": duty.post, "reason": reason},
    )
    return end


def lock_people(*people: Any) -> None:
    """Hold the people's rows until the transaction ends, in id order (so two acts naming the
    same people never wait for each other in a circle), before the audit chain's lock. The
    database's duty trigger takes the same lock (docs/uniqueness.md); taking it here first makes
    the checks of ``_duty_start`` exact, and keeps every act's order: séance or table, people,
    then the chain."""
    ids = sorted({person.pk for person in people})
    list(User.objects.select_for_update(no_key=True).filter(pk__in=ids).order_by("pk"))


def _duty_start(shift: Shift, person: Any, post: Duty.Post, actor: Any) -> Duty:
    """Put someone on duty: they hold the role, and are on duty nowhere else. A new tailleur
    relieves the one dealing (one tailleur at a time)."""
    post = Duty.Post(post)
    lock_people(person)
    if Role(post) not in roles_of(person):
        raise NotOnDuty(
            _("%(person)s n'a pas le rôle %(post)s") % {"person": person, "post": post},
            where="person",
        )
    busy = Duty.objects.filter(person=person, end__isnull=True).select_related("shift__table")
    if busy.exists():
        raise Conflict(
            _("%(person)s est déjà de service à %(table)s")
            % {"person": person, "table": busy[0].shift.table},
            where="person",
        )
    if post in (Duty.Post.TAILLEUR, Duty.Post.CHEF_DE_PARTIE):  # one at a time: a relief
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


# Every act that opens a round (a coup, a taille, a deal) locks its séance: prepared once.
_SHIFT_LOCK = Prepared(
    lambda pk: (
        Shift.objects.select_for_update(of=("self",))
        .select_related("table", "reglement")
        .filter(pk=pk)
    )
)


def open_shift_locked(shift_id: int) -> Shift:
    """The séance, locked for this transaction, refused if it is closed."""
    shift = _SHIFT_LOCK.first(shift_id)
    if shift is None:
        raise NotFound(_("la séance %(shift)s n'existe pas") % {"shift": shift_id}, where="shift")
    if shift.closed_at is not None:
        raise Conflict(_("la séance %(shift)s est fermée") % {"shift": shift.pk}, where="shift")
    return shift


@transaction.atomic
def duty_assign(*, actor: Any, shift_id: int, person: Any, post: Duty.Post | str) -> Duty:
    """The chef de partie on duty puts a tailleur or a croupier on duty (a relief, a
    reinforcement), or hands the table over to another chef de partie (ending his own duty)."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("mettre du personnel de service à une séance"))
    shift = open_shift_locked(shift_id)
    require_on_duty(shift, actor, Duty.Post.CHEF_DE_PARTIE, act=_("mettre du personnel de service"))
    post = Duty.Post(post)
    # As at the opening (``shift_open``): a relief must not bring a tailleur to a cercle, where
    # he could then do a tailleur's acts on the table's pack.
    if post == Duty.Post.TAILLEUR and not game_module(shift.table.game).tailleur:
        raise NotOnDuty(
            _("%(table)s : au cercle, les joueurs donnent ; pas de tailleur")
            % {"table": shift.table},
            where="post",
        )
    return _duty_start(shift, person, post, actor)


@transaction.atomic
def duty_end(*, actor: Any, duty_id: int, reason: str) -> DutyEnd:
    """The chef de partie takes someone off duty (a break, the end of their hours)."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("relever quelqu'un de son service"))
    reason = reason.strip()
    if not reason:
        raise NotOnDuty(_("dites pourquoi le service prend fin"), where="reason")
    try:
        duty = Duty.objects.select_related("person", "shift").get(pk=duty_id)
    except Duty.DoesNotExist:
        raise NotFound(
            _("le service %(duty)s n'existe pas") % {"duty": duty_id}, where="duty"
        ) from None
    shift = open_shift_locked(duty.shift_id)
    require_on_duty(
        shift, actor, Duty.Post.CHEF_DE_PARTIE, act=_("relever quelqu'un de son service")
    )
    if hasattr(duty, "end"):
        raise Conflict(
            _("le service de %(person)s comme %(post)s a déjà pris fin")
            % {"person": duty.person, "post": duty.post},
            where="duty",
        )
    if duty.post == Duty.Post.CHEF_DE_PARTIE:
        raise Conflict(
            _("une table n'est jamais laissée sans son chef de partie : passez-la à un autre"),
            where="duty",
        )
    return _duty_end(duty, actor, reason)


# --- séances and the cash rundown ---------------------------------------------------------------


@transaction.atomic
def shift_open(
    *,
    actor: Any,
    table: Table,
    count_id: int,
    tailleur: Any | None,
    croupiers: Iterable[Any],
) -> Shift:
    """Open a séance with its countersigned opening count and its staff on duty (the chef de
    partie who opens it, a tailleur at a banking game, and at least one croupier); the float
    comes from the cage. At a cercle the players deal: no tailleur, and the count is the fee
    box's, empty."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("ouvrir une séance"))
    croupiers = list(croupiers)
    if not croupiers:
        raise NotOnDuty(
            _("une séance s'ouvre avec au moins un croupier de service"), where="croupiers"
        )
    table = (
        Table.objects.select_for_update(of=("self",)).select_related("reglement").get(pk=table.pk)
    )
    if Shift.objects.filter(table=table, closed_at__isnull=True).exists():
        raise Conflict(_("%(table)s a déjà une séance ouverte") % {"table": table}, where="table")
    dealt_by_tailleur = game_module(table.game).tailleur
    if dealt_by_tailleur and tailleur is None:
        raise NotOnDuty(_("une séance s'ouvre avec son tailleur"), where="tailleur")
    if not dealt_by_tailleur and tailleur is not None:
        raise NotOnDuty(
            _("%(table)s : au cercle, les joueurs donnent ; pas de tailleur") % {"table": table},
            where="tailleur",
        )
    lock_people(actor, *([tailleur] if tailleur is not None else []), *croupiers)
    count = _signed_count(count_id, table, FloatCount.Moment.OPENING)
    if Shift.objects.filter(opening_count=count).exists():
        raise Conflict(
            _("le comptage %(count)s a déjà ouvert une séance") % {"count": count.pk},
            where="count",
        )
    shift = Shift.objects.create(
        table=table,
        opened_at=clock.now(),
        opened_by=actor,
        reglement=table.reglement,
        min_stake=table.min_stake,
        max_stake=table.max_stake,
        opening_count=count,
    )
    _duty_start(shift, actor, Duty.Post.CHEF_DE_PARTIE, actor)
    if tailleur is not None:
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
                    till_account(table),
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
            "count": count.pk,
            "counted_by": count.counted_by.username,
            "countersigned_by": count.countersignature.by.username,
        },
    )
    return shift


CAGE_SIDE = (Role.CAISSIER,)


def _transfer_party(shift: Shift, person: Any, act: str) -> str:
    """Which side of a fill or credit the person signs for: the cage (a cashier) or the table
    (the chef de partie on duty there)."""
    if Role.CAISSIER in roles_of(person):
        return "cage"
    require_role(person, Role.CAISSIER, Role.CHEF_DE_PARTIE, act=act)
    require_on_duty(shift, person, Duty.Post.CHEF_DE_PARTIE, act=act)
    return "table"


@transaction.atomic
def transfer_record(
    *, actor: Any, shift_id: int, kind: CashTransfer.Kind | str, amount: int
) -> CashTransfer:
    """One side records a fill (cage → table) or a credit (table → cage): the cashier, or the
    chef de partie on duty. Nothing moves until the other side countersigns."""
    kind = CashTransfer.Kind(kind)
    shift = open_shift_locked(shift_id)
    fill = kind == CashTransfer.Kind.FILL
    side = _transfer_party(
        shift, actor, _("enregistrer un apport") if fill else _("enregistrer un retour")
    )
    if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount <= MAX_AMOUNT:
        raise InvalidMovement(
            _("%(amount)r n'est pas un montant (1..%(maximum)s)")
            % {"amount": amount, "maximum": MAX_AMOUNT},
            where="amount",
        )
    transfer = CashTransfer.objects.create(
        shift=shift, kind=kind, amount=amount, recorded_by=actor, at=clock.now()
    )
    audit_record(
        actor=actor,
        action=f"shift.{kind}_recorded",
        subject=shift,
        payload={"transfer": transfer.pk, "amount": amount, "side": side},
    )
    return transfer


@transaction.atomic
def transfer_countersign(
    *, actor: Any, transfer_id: int, signed: bool = True, remark: str = ""
) -> TransferSignature:
    """The other side signs the fill or credit (the money moves now) or declines it."""
    lock_name(f"transfer:{transfer_id}")  # one signature at a time (append-only: no row lock)
    try:
        transfer = CashTransfer.objects.select_related("shift__table", "recorded_by").get(
            pk=transfer_id
        )
    except CashTransfer.DoesNotExist:
        raise NotFound(
            _("le transfert %(transfer)s n'existe pas") % {"transfer": transfer_id},
            where="transfer",
        ) from None
    shift = open_shift_locked(transfer.shift_id)
    fill = transfer.kind == CashTransfer.Kind.FILL
    side = _transfer_party(
        shift, actor, _("contresigner un apport") if fill else _("contresigner un retour")
    )
    if side == _transfer_party(shift, transfer.recorded_by, _("enregistrer")):
        twice = (
            _(
                "un apport est signé par la caisse et par la table : %(person)s a déjà signé pour %(side)s"
            )
            if fill
            else _(
                "un retour est signé par la caisse et par la table : %(person)s a déjà signé pour %(side)s"
            )
        )
        raise SegregationViolation(
            twice
            % {
                "person": transfer.recorded_by.username,
                "side": _("la caisse") if side == "cage" else _("la table"),
            },
            where="actor",
        )
    if TransferSignature.objects.filter(transfer=transfer).exists():
        signed_already = (
            _("l'apport %(transfer)s est déjà signé")
            if fill
            else _("le retour %(transfer)s est déjà signé")
        )
        raise Conflict(signed_already % {"transfer": transfer.pk}, where="transfer")
    remark = (remark or "").strip()[:200]
    if not signed and not remark:
        raise InvalidMovement(_("dites pourquoi le transfert est refusé"), where="remark")
    signature = TransferSignature.objects.create(
        transfer=transfer, by=actor, at=clock.now(), signed=signed, remark=remark
    )
    movement_id = None
    if signed:
        cage = house_account(Account.Kind.CAGE)
        bank = till_account(shift.table)
        fill = transfer.kind == CashTransfer.Kind.FILL
        credit, debit = (cage, bank) if fill else (bank, cage)
        (movement,) = ledger_post(
            actor=actor,
            shift=shift,
            entries=[
                Entry(
                    Movement.Kind.FILL if fill else Movement.Kind.CREDIT,
                    credit,
                    debit,
                    transfer.amount,
                    f"transfer:{transfer.pk}",
                    f"transfer:{transfer.pk}",
                )
            ],
        )
        movement_id = movement.pk
    audit_record(
        actor=actor,
        action=f"shift.{transfer.kind}" if signed else f"shift.{transfer.kind}_declined",
        subject=shift,
        payload={
            "transfer": transfer.pk,
            "amount": transfer.amount,
            "recorded_by": transfer.recorded_by.username,
            "countersigned_by": actor.username,
            "movement": movement_id,
            "remark": remark,
        },
    )
    return signature


def signers(shift: Shift) -> set[int]:
    """Everyone who signed the séance's cash: both counts, both sides of every fill and credit."""
    people: set[int] = set()
    counts = [shift.opening_count_id, *shift.closing_counts.values_list("id", flat=True)]
    for count in FloatCount.objects.filter(pk__in=counts).select_related("countersignature"):
        people.add(count.counted_by_id)
        if hasattr(count, "countersignature"):
            people.add(count.countersignature.by_id)
    for transfer in shift.transfers.select_related("countersignature"):
        people.add(transfer.recorded_by_id)
        if hasattr(transfer, "countersignature"):
            people.add(transfer.countersignature.by_id)
    return people


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
    return rundowns([shift])[shift.pk]


def rundowns(shifts: Sequence[Shift]) -> dict[int, Rundown]:
    """Each séance's rundown by its id, in three queries however many séances: a séance's figures
    are read at every close, report and terminal restart, and a list's page or the day's register
    reads them for tens of séances. ``rundown`` is this, for one."""
    tills = {
        (account.table_id, account.kind): account.pk
        for account in Account.objects.filter(
            table_id__in={s.table_id for s in shifts},
            kind__in={game_module(s.table.game).till for s in shifts},
        )
    }
    till_of = {s.pk: tills[s.table_id, game_module(s.table.game).till] for s in shifts}
    cash = {Movement.Kind.FLOAT, Movement.Kind.FILL, Movement.Kind.CREDIT}
    figures = {pk: dict.fromkeys(("opening", "fills", "credits", "result"), 0) for pk in till_of}
    # One pass over the séances' movements that enter or leave a till, summed by séance, kind and
    # accounts; each is counted only where the till is its own séance's.
    accounts = list(till_of.values())
    moved = (
        Movement.objects.filter(shift_id__in=till_of)
        .filter(Q(debit_id__in=accounts) | Q(credit_id__in=accounts))
        .values_list("shift_id", "kind", "debit_id", "credit_id")
        .annotate(total=Sum("amount"))
        .order_by()
    )
    for shift_id, kind, debit, credit, total in moved:
        f, till, total = figures[shift_id], till_of[shift_id], int(total)
        if kind == Movement.Kind.FLOAT and debit == till:
            f["opening"] += total
        elif kind == Movement.Kind.FILL and debit == till:
            f["fills"] += total
        elif kind == Movement.Kind.CREDIT and credit == till:
            f["credits"] += total
        elif kind not in cash:  # play: what entered the till, less what left it
            f["result"] += total * ((debit == till) - (credit == till))
    # The last countersigned closing count of each closed séance.
    closing = dict(
        FloatCount.objects.filter(
            shift_id__in=till_of,
            moment=FloatCount.Moment.CLOSING,
            countersignature__isnull=False,
            shift__closed_at__isnull=False,
        )
        .order_by("shift_id", "-id")
        .distinct("shift_id")
        .values_list("shift_id", "total")
    )
    return {
        pk: Rundown(f["opening"], f["fills"], f["credits"], f["result"], closing.get(pk))
        for pk, f in figures.items()
    }


@transaction.atomic
def shift_close(*, actor: Any, shift: Shift, count_id: int) -> Rundown:
    """Close the séance with its countersigned closing count; a difference with the rundown
    raises a ``cash_variance`` anomaly with the exact amount, involving everyone who signed."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("fermer une séance"))
    shift = Shift.objects.select_for_update(of=("self",)).select_related("table").get(pk=shift.pk)
    if shift.closed_at is not None:
        raise Conflict(
            _("la séance %(shift)s est déjà fermée") % {"shift": shift.pk}, where="shift"
        )
    require_on_duty(shift, actor, Duty.Post.CHEF_DE_PARTIE, act=_("fermer une séance"))
    game_module(shift.table.game).check_closable(shift)
    if shift.transfers.filter(countersignature__isnull=True).exists():
        raise Conflict(
            _("la séance %(shift)s a un apport ou un retour en attente de sa seconde signature")
            % {"shift": shift.pk},
            where="shift",
        )
    count = _signed_count(count_id, shift.table, FloatCount.Moment.CLOSING)
    if count.shift_id != shift.pk:
        raise InvalidCount(
            _("le comptage %(count)s n'est pas celui de cette séance") % {"count": count.pk},
            where="count",
        )
    if shift.closing_counts.filter(id__gt=count.pk).exists():
        raise InvalidCount(
            _("le comptage %(count)s n'est pas le dernier comptage de la séance")
            % {"count": count.pk},
            where="count",
        )
    game_module(shift.table.game).closing(shift, actor)
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
            "count": count.pk,
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
            involved=signers(shift) | {actor.pk},
            dedup_key=f"cash_variance:{shift.pk}",
        )
    # The statistical detectors look at the séance once it has closed (docs/detectors.md).
    enqueue("detectors.seance_closed", shift_id=shift.pk)
    # The séance's signed report: asked for now, rendered by a worker after commit.
    from casino.reports.services import shift_report_request

    shift_report_request(shift=shift, actor=actor, reason="séance fermée / shift closed")
    return figures
