"""Every act of a dispute: raise, add evidence, review, decide, approve or refuse a decision,
appeal, decide on appeal, withdraw.

Who may do what (RULES.md §4, DESIGN.md Roles): staff raise disputes, for a patron or themselves;
the chef de partie reviews and decides in the first instance, the police commissioner on appeal
(final); nobody reviews, decides or approves a dispute they raised or about an act they recorded.
Corrections move money only between the accounts of the contested record. A decision departing
from the engine's computation, or moving more than the règlement's threshold, waits for a second
approver (the director or the commissioner) before anything moves. Only the raiser withdraws,
unless they recorded the contested act. The inspector only reads.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Any

from django.core.files import File
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from audit.chain import audit_record
from casino import clock
from casino.disputes.games import game_disputes
from casino.disputes.models import (
    SUBJECTS,
    Decision,
    DecisionApproval,
    Dispute,
    DisputeState,
    DisputeStep,
    Evidence,
)
from casino.disputes.recompute import Recomputation, recompute, transfers
from casino.errors import Conflict, DomainError, NotFound, SegregationViolation
from casino.files import sha256_of
from casino.floor.models import Account, Coup, Movement, PostedReglement, Stake
from casino.floor.services import Entry, ledger_post
from casino.people.roles import Role
from casino.people.services import require_role
from shoes.models import CardLaid, Pack

RAISERS = (
    Role.CHEF_DE_PARTIE,
    Role.TAILLEUR,
    Role.CROUPIER,
    Role.CAISSIER,
    Role.DIRECTEUR,
    Role.COMITE,
)
APPROVERS = (Role.DIRECTEUR, Role.COMMISSAIRE)
MAX_EVIDENCE_BYTES = 20 * 1024 * 1024
_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][\w.+-]{0,48}/[A-Za-z0-9][\w.+-]{0,48}")  # fits in 100
FINAL = (DisputeState.DECIDED_BY_COMMISSIONER, DisputeState.WITHDRAWN)
# By instance: where the dispute waits for approval, where it ends, where a refusal sends it back.
PENDING = {
    Decision.Instance.FIRST: DisputeState.AWAITING_APPROVAL,
    Decision.Instance.APPEAL: DisputeState.AWAITING_APPROVAL_APPEAL,
}
DECIDED = {
    Decision.Instance.FIRST: DisputeState.DECIDED,
    Decision.Instance.APPEAL: DisputeState.DECIDED_BY_COMMISSIONER,
}
REFUSED = {
    Decision.Instance.FIRST: DisputeState.UNDER_REVIEW,
    Decision.Instance.APPEAL: DisputeState.APPEALED,
}


class InvalidDispute(DomainError):
    """A dispute, a piece of evidence or a decision that cannot be recorded as given."""

    code = "invalid_dispute"


class CorrectionAccountRefused(DomainError):
    """A correction moving money outside the contested record: the cage, the outside world, or
    another table's or patron's account."""

    code = "correction_account_refused"


class NotTheRaiser(DomainError):
    """Only the person who raised a dispute withdraws it."""

    code = "not_the_raiser"
    http_status = 403


def _text(value: str, where: str, what: str) -> str:
    """``value``, which may not be blank; ``what``: what it is, in words (translated)."""
    value = (value or "").strip()
    if not value:
        raise InvalidDispute(_("il faut %(what)s") % {"what": what}, where=where)
    return value


CORE_SUBJECTS = {"coup": Coup, "stake": Stake, "movement": Movement, "pack": Pack, "card": CardLaid}


def _subject(kind: str, pk: int) -> tuple[dict[str, Any], PostedReglement]:
    """The contested record and the règlement version in force when it was played."""
    game = game_disputes(kind)
    model = game.subjects[kind] if game is not None else CORE_SUBJECTS.get(kind)
    if model is None:
        raise InvalidDispute(
            _("une contestation porte sur : %(subjects)s") % {"subjects": ", ".join(SUBJECTS)},
            where="subject",
        )
    try:
        record = model.objects.get(pk=pk)
    except model.DoesNotExist:
        raise NotFound(
            _("%(kind)s %(id)s n'existe pas") % {"kind": kind, "id": pk}, where="subject_id"
        ) from None
    if game is not None:
        game.check_raisable(kind, record)
        return {kind: record}, game.reglement(kind, record)
    coup = contested_coup_of(kind, record)
    if coup is not None:
        reglement = coup.reglement
    elif kind in ("movement", "card") and record.shift_id is not None:
        reglement = record.shift.reglement  # the version its séance opened under
    else:
        raise InvalidDispute(
            _(
                "%(kind)s %(id)s n'a pas été joué sous un règlement : contestez le coup auquel "
                "il appartient"
            )
            % {"kind": kind, "id": pk},
            where="subject_id",
        )
    return {kind: record}, reglement


def contested_coup_of(kind: str, record: Any) -> Coup | None:
    """The coup a dispute's subject belongs to, if any."""
    if kind == "coup":
        return record  # type: ignore[no-any-return]
    if kind in ("stake", "card"):
        return record.coup  # type: ignore[no-any-return]
    if kind == "movement" and record.reference.startswith("coup:"):
        return Coup.objects.get(pk=int(record.reference.split(":")[1]))
    if kind == "pack":
        return record.coups.order_by("-id").first()  # type: ignore[no-any-return]
    return None


def recorders(dispute: Dispute) -> set[int]:
    """Who recorded the contested acts: they may not decide on the dispute."""
    kind, record = dispute.subject_name(), dispute.subject()
    game = game_disputes(kind)
    if game is not None:
        return game.recorders(kind, record)
    if kind in ("movement", "card"):
        return {record.actor_id}  # type: ignore[attr-defined]
    if kind == "pack":
        return set(record.events.values_list("actor_id", flat=True))  # type: ignore[attr-defined]
    coup: Coup = record if kind == "coup" else record.coup  # type: ignore[assignment,attr-defined]
    people = {coup.opened_by_id}
    people |= set(coup.cards.values_list("actor_id", flat=True))
    stakes = coup.stakes.all() if kind == "coup" else Stake.objects.filter(pk=record.pk)
    people |= set(stakes.values_list("placed_by_id", flat=True))
    result = getattr(coup, "outcome", None)
    if result is not None:
        people.add(result.settled_by_id)
    return people


def _keep_apart(dispute: Dispute, actor: Any, act: str) -> None:
    """Whoever raised the dispute or recorded the contested acts may not review, decide or
    approve it."""
    if actor.pk == dispute.raised_by_id:
        raise SegregationViolation(
            _("%(user)s a soulevé la contestation %(dispute)s et ne peut pas %(act)s")
            % {"user": actor.username, "dispute": dispute.pk, "act": act},
            where="actor",
        )
    if actor.pk in recorders(dispute):
        raise SegregationViolation(
            _("%(user)s a enregistré l'acte contesté et ne peut pas %(act)s")
            % {"user": actor.username, "act": act},
            where="actor",
        )


def correctable_accounts(dispute: Dispute) -> set[str]:
    """The accounts a correction may move money between: the holders of the contested stakes (for
    a coup, of its stakes and of the prisoners it settled; for a payment, the patron or seat it
    paid or took from) and the bank, layout and prison of the table where it was played; for a
    game's round, what its game says (``games.py``)."""
    kind, record = dispute.subject_name(), dispute.subject()
    shift = dispute.seance()
    game = game_disputes(kind)
    if game is not None:
        return set(
            Account.objects.filter(game.accounts(kind, record, shift)).values_list(
                "code", flat=True
            )
        )
    holders: set[int] = set()
    if kind == "stake":
        holders.add(record.holder_id)  # type: ignore[attr-defined]
    elif kind == "movement":
        holders |= {record.credit_id, record.debit_id}  # type: ignore[attr-defined]
    else:
        if kind == "pack":
            coups = Coup.objects.filter(pack=record)
        else:
            coup = contested_coup_of(kind, record)
            coups = Coup.objects.filter(pk=coup.pk if coup else None)
        holders |= set(
            Stake.objects.filter(Q(coup__in=coups) | Q(settlements__coup__in=coups)).values_list(
                "holder_id", flat=True
            )
        )
    found = Account.objects.filter(
        Q(pk__in=holders, kind__in=(Account.Kind.PATRON, Account.Kind.SEAT))
        | Q(table_id=shift.table_id if shift else None, kind__in=TABLE_KINDS)
    )
    return set(found.values_list("code", flat=True))


TABLE_KINDS = (Account.Kind.BANK, Account.Kind.LAYOUT, Account.Kind.PRISON)


def _within_record(dispute: Dispute, ordered: list[tuple[str, str, int]]) -> None:
    allowed = correctable_accounts(dispute)
    for i, (source, target, _amount) in enumerate(ordered):
        outside = [code for code in (source, target) if code not in allowed]
        if outside:
            raise CorrectionAccountRefused(
                _(
                    "%(accounts)s n'est pas un compte de l'enregistrement contesté "
                    "(seulement %(allowed)s)"
                )
                % {"accounts": ", ".join(outside), "allowed": ", ".join(sorted(allowed))},
                where=f"corrections[{i}]",
            )


def _lock(dispute_id: int) -> Dispute:
    try:
        return Dispute.objects.select_for_update(of=("self",)).get(pk=dispute_id)
    except Dispute.DoesNotExist:
        raise NotFound(
            _("la contestation %(dispute)s n'existe pas") % {"dispute": dispute_id},
            where="dispute",
        ) from None


def _step(
    dispute: Dispute,
    actor: Any,
    to: DisputeState,
    note: str,
    action: str = "",
    **payload: Any,
) -> None:
    step = DisputeStep.objects.create(
        dispute=dispute,
        at=clock.now(),
        actor=actor,
        from_state=dispute.state,
        to_state=to,
        note=note,
    )
    dispute.state = to
    dispute.save(update_fields=["state"])
    audit_record(
        actor=actor,
        action=action or f"dispute.{to}",
        subject=dispute,
        payload={"from": step.from_state, "to": to.value, "note": note, **payload},
    )


def _expect(dispute: Dispute, *states: DisputeState, act: str) -> None:
    if dispute.state not in states:
        raise Conflict(
            _("%(act)s : la contestation %(dispute)s est %(state)r")
            % {"act": act, "dispute": dispute.pk, "state": dispute.get_state_display()},
            where="state",
        )


@transaction.atomic
def dispute_raise(
    *,
    actor: Any,
    subject: str,
    subject_id: int,
    claim: str,
    on_behalf_of: str = "",
    statement: str = "",
) -> Dispute:
    """Contest a recorded coup, stake, payment (movement), pack or card."""
    require_role(actor, *RAISERS, act=_("soulever une contestation"))
    record, reglement = _subject(subject, subject_id)
    dispute = Dispute.objects.create(
        raised_at=clock.now(),
        raised_by=actor,
        on_behalf_of=on_behalf_of.strip(),
        reglement=reglement,
        claim=_text(claim, "claim", "the claim"),
        statement=statement.strip(),
        **record,
    )
    audit_record(
        actor=actor,
        action="dispute.raised",
        subject=dispute,
        payload={
            "subject": subject,
            "subject_id": subject_id,
            "reglement": f"{reglement.name} v{reglement.version}",
            "on_behalf_of": dispute.on_behalf_of,
            "claim": dispute.claim,
            "statement": dispute.statement,
        },
    )
    return dispute


@transaction.atomic
def evidence_add(
    *, actor: Any, dispute_id: int, name: str, content: bytes | File, content_type: str
) -> Evidence:
    """Attach a photo or a scan; the file is stored and its SHA-256 enters the audit chain.

    ``content`` is the bytes or an uploaded file, which is read a chunk at a time, never whole.
    """
    require_role(actor, *RAISERS, Role.COMMISSAIRE, act=_("ajouter une pièce à une contestation"))
    dispute = _lock(dispute_id)
    if dispute.state in FINAL:
        raise Conflict(
            _("la contestation %(dispute)s est close") % {"dispute": dispute.pk}, where="state"
        )
    upload = content if isinstance(content, File) else ContentFile(content)
    if not upload.size:
        raise InvalidDispute(_("le fichier est vide"), where="file")
    if upload.size > MAX_EVIDENCE_BYTES:
        raise InvalidDispute(
            _("un fichier fait au plus %(maximum)s octets, pas %(size)s")
            % {"maximum": MAX_EVIDENCE_BYTES, "size": upload.size},
            where="file",
        )
    name = _text(name, "name", _("le nom du fichier"))
    if any(unicodedata.category(c) == "Cc" for c in name):
        raise InvalidDispute(
            _("le nom du fichier %(name)r contient des caractères de contrôle")
            % {"name": name[:60]},
            where="name",
        )
    content_type = content_type.strip() or "application/octet-stream"
    if not _MEDIA_TYPE.fullmatch(content_type):
        raise InvalidDispute(
            _("%(type)r n'est pas un type de média (type/sous-type, au plus 100 caractères)")
            % {"type": content_type[:60]},
            where="file",
        )
    digest = sha256_of(upload)
    evidence = Evidence(
        dispute=dispute,
        name=name[:200],
        content_type=content_type,
        size=upload.size,
        sha256=digest,
        added_by=actor,
        added_at=clock.now(),
    )
    evidence.file.save(f"{dispute.pk}-{digest[:16]}", upload, save=False)
    evidence.save()
    audit_record(
        actor=actor,
        action="dispute.evidence_added",
        subject=dispute,
        payload={"name": evidence.name, "sha256": digest, "size": evidence.size},
    )
    return evidence


@transaction.atomic
def dispute_review(*, actor: Any, dispute_id: int, note: str) -> Dispute:
    """The chef de partie takes the dispute up."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("examiner une contestation"))
    dispute = _lock(dispute_id)
    _expect(dispute, DisputeState.OPEN, act=_("examiner"))
    _keep_apart(dispute, actor, _("l'examiner"))
    _step(dispute, actor, DisputeState.UNDER_REVIEW, _text(note, "note", _("une note")))
    return dispute


def _applied(dispute: Dispute) -> Counter[str]:
    """What the dispute's earlier decisions already moved, net per account."""
    net: Counter[str] = Counter()
    for m in Movement.objects.filter(reference=dispute.reference).select_related("credit", "debit"):
        net[m.debit.code] += m.amount
        net[m.credit.code] -= m.amount
    return net


def recomputation(
    dispute: Dispute, findings: list[dict[str, Any]] | None = None
) -> Recomputation | None:
    """The engine's answer for the contested coup or game's round (None when the subject is in
    no round)."""
    kind = dispute.subject_name()
    game = game_disputes(kind)
    if game is not None:
        return game.recompute(kind, dispute.subject(), findings)  # type: ignore[no-any-return]
    coup = contested_coup_of(kind, dispute.subject())
    if coup is None or not hasattr(coup, "outcome"):
        return None
    return recompute(coup, findings)


def _corrections(raw: Any) -> list[tuple[str, str, int]]:
    if not isinstance(raw, list):
        raise InvalidDispute(
            _("les corrections sont [[from, to, amount], ...]"), where="corrections"
        )
    clean = []
    for i, item in enumerate(raw):
        where = f"corrections[{i}]"
        if not (isinstance(item, (list, tuple)) and len(item) == 3):
            raise InvalidDispute(
                _("une correction est [compte de départ, compte d'arrivée, montant]"), where=where
            )
        source, target, amount = item
        if not isinstance(amount, int) or isinstance(amount, bool) or amount <= 0:
            raise InvalidDispute(
                _("%(amount)r n'est pas un montant positif") % {"amount": amount}, where=where
            )
        if not Account.objects.filter(code=source).exists():
            raise NotFound(_("aucun compte %(account)r") % {"account": source}, where=where)
        if not Account.objects.filter(code=target).exists():
            raise NotFound(_("aucun compte %(account)r") % {"account": target}, where=where)
        clean.append((str(source), str(target), amount))
    return clean


@transaction.atomic
def dispute_decide(
    *,
    actor: Any,
    dispute_id: int,
    articles: list[str],
    reasoning: str,
    findings: list[dict[str, Any]] | None = None,
    corrections: list[Any] | None = None,
    override_reason: str = "",
) -> Decision:
    """Rule on the dispute: the chef de partie in the first instance, the commissioner on appeal.

    The engine replays the contested coup with the stakes as found; its difference with the
    recorded settlement is the correction ordered, unless the decider orders other ``corrections``
    and says why. On appeal, the new ruling's corrections net what the first one moved. Corrections
    departing from the engine, or moving more than the règlement's threshold, wait for a second
    approver: until then nothing moves."""
    dispute = _lock(dispute_id)
    if dispute.state == DisputeState.APPEALED:
        require_role(actor, Role.COMMISSAIRE, act=_("décider d'une contestation en appel"))
        instance = Decision.Instance.APPEAL
    else:
        require_role(actor, Role.CHEF_DE_PARTIE, act=_("décider d'une contestation"))
        _expect(dispute, DisputeState.UNDER_REVIEW, act=_("décider"))
        instance = Decision.Instance.FIRST
    _keep_apart(dispute, actor, _("en décider"))
    numbers = {a["number"] for a in dispute.reglement.articles}
    if not isinstance(articles, list) or not articles:
        raise InvalidDispute(_("citez les articles appliqués"), where="articles")
    unknown = [a for a in articles if a not in numbers]
    if unknown:
        raise InvalidDispute(
            _("%(reglement)s n'a pas d'article %(articles)s")
            % {"reglement": dispute.reglement, "articles": ", ".join(map(str, unknown))},
            where="articles",
        )
    reasoning = _text(reasoning, "reasoning", _("le raisonnement"))
    computed = recomputation(dispute, findings)
    if findings and computed is None:
        raise InvalidDispute(_("les constats s'appliquent à un coup réglé"), where="findings")
    engine = computed.corrections if computed else []
    override = False
    if corrections is None:
        if computed is not None and computed.touches_prison:
            raise InvalidDispute(
                _(
                    "le paiement selon la règle fait entrer ou sortir de l'argent de la prison, "
                    "que les coups suivants ont reporté : ordonnez vous-même les corrections, "
                    "avec une raison"
                ),
                where="corrections",
            )
        ordered = engine
    else:
        ordered = _corrections(corrections)
        override = sorted(ordered) != sorted(engine)
        if override:
            override_reason = _text(
                override_reason, "override_reason", _("une raison de s'écarter du calcul")
            )
    _within_record(dispute, ordered)
    moved = sum(amount for *_, amount in _net(dispute, ordered))
    threshold = dispute.reglement.correction_approval_threshold
    grounds = []
    if override:
        grounds.append("s'écarte du calcul / departs from the engine's computation")
    if moved > threshold:
        grounds.append(f"déplace / moves {moved} > seuil / threshold {threshold}")
    decision = Decision.objects.create(
        dispute=dispute,
        instance=instance,
        attempt=dispute.decisions.filter(instance=instance).count() + 1,
        decided_by=actor,
        decided_at=clock.now(),
        articles=articles,
        reasoning=reasoning,
        findings=findings or [],
        computed=computed.as_json() if computed else {},
        corrections=[list(c) for c in ordered],
        override_reason=override_reason.strip(),
        approval_grounds="; ".join(grounds),
    )
    ruling = {
        "decision": decision.pk,
        "articles": articles,
        "findings": decision.findings,
        "corrections": decision.corrections,
        "override_reason": decision.override_reason,
    }
    if grounds:
        _step(dispute, actor, PENDING[instance], reasoning, **ruling, awaiting_approval=grounds)
        return decision
    movements = _post(dispute, decision, actor)
    _step(dispute, actor, DECIDED[instance], reasoning, **ruling, movements=movements)
    _addendum(dispute, decision, actor, movements)
    return decision


def _net(dispute: Dispute, ordered: list[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """The transfers that bring the dispute's corrections to ``ordered``: on appeal, net of what
    the first decision moved."""
    target: Counter[str] = Counter()
    for source, destination, amount in ordered:
        target[source] -= amount
        target[destination] += amount
    target.subtract(_applied(dispute))
    return transfers(target)


def _post(dispute: Dispute, decision: Decision, actor: Any) -> list[list[Any]]:
    """Post the decision's corrections, as ``[from, to, amount]``."""
    net = _net(dispute, [(a, b, n) for a, b, n in decision.corrections])
    by_code = {a.code: a for a in Account.objects.filter(code__in=[c for m in net for c in m[:2]])}
    movements = ledger_post(
        actor=actor,
        shift=None,  # after the séance's count: the séance's rundown stays as certified
        entries=[
            Entry(
                Movement.Kind.DISPUTE_CORRECTION,
                by_code[source],
                by_code[destination],
                amount,
                dispute.reference,
                f"{decision.key_prefix}{i}",
            )
            for i, (source, destination, amount) in enumerate(net)
        ],
    )
    return [[m.credit.code, m.debit.code, m.amount] for m in movements]


def _addendum(dispute: Dispute, decision: Decision, actor: Any, movements: list[Any]) -> None:
    """Corrections about a closed séance's play are reported in an addendum to its report (an open
    séance's report will show them at its close)."""
    shift = dispute.seance()
    if movements and shift is not None and shift.closed_at is not None:
        from casino.reports.services import addendum_request

        addendum_request(
            shift=shift,
            decision=decision,
            actor=actor,
            reason=f"corrections sur contestation / dispute corrections ({dispute.reference})",
        )


def _awaiting(dispute_id: int, actor: Any, act: str) -> tuple[Dispute, Decision]:
    """The dispute and its decision awaiting a second approver, who may give it."""
    require_role(actor, *APPROVERS, act=_("%(act)s la décision d'une contestation") % {"act": act})
    dispute = _lock(dispute_id)
    _expect(dispute, DisputeState.AWAITING_APPROVAL, DisputeState.AWAITING_APPROVAL_APPEAL, act=act)
    _keep_apart(
        dispute, actor, _("être le second approbateur de sa décision (%(act)s)") % {"act": act}
    )
    decision = dispute.decisions.order_by("-id").first()
    assert decision is not None  # the state says one waits
    if actor.pk in set(dispute.decisions.values_list("decided_by_id", flat=True)):
        raise SegregationViolation(
            _(
                "%(user)s a décidé de la contestation %(dispute)s et ne peut pas approuver une "
                "décision à son sujet"
            )
            % {"user": actor.username, "dispute": dispute.pk},
            where="actor",
        )
    return dispute, decision


@transaction.atomic
def decision_approve(*, actor: Any, dispute_id: int, note: str) -> Decision:
    """The second approver (director or commissioner) approves the decision: its corrections are
    posted, and the dispute is decided."""
    dispute, decision = _awaiting(dispute_id, actor, _("approuver"))
    note = _text(note, "note", _("une note"))
    DecisionApproval.objects.create(
        decision=decision, approved=True, by=actor, at=clock.now(), note=note
    )
    movements = _post(dispute, decision, actor)
    _step(
        dispute,
        actor,
        DECIDED[Decision.Instance(decision.instance)],
        note,
        action="dispute.decision_approved",
        decision=decision.pk,
        movements=movements,
    )
    _addendum(dispute, decision, actor, movements)
    return decision


@transaction.atomic
def decision_refuse(*, actor: Any, dispute_id: int, note: str) -> Decision:
    """The second approver refuses the decision: nothing moves, and the dispute goes back to be
    decided again (under review, or on appeal)."""
    dispute, decision = _awaiting(dispute_id, actor, _("refuser"))
    note = _text(note, "note", _("la raison du refus"))
    DecisionApproval.objects.create(
        decision=decision, approved=False, by=actor, at=clock.now(), note=note
    )
    _step(
        dispute,
        actor,
        REFUSED[Decision.Instance(decision.instance)],
        note,
        action="dispute.decision_refused",
        decision=decision.pk,
    )
    return decision


@transaction.atomic
def dispute_appeal(*, actor: Any, dispute_id: int, note: str) -> Dispute:
    """The patron (through staff) or the staff appeal the first decision to the commissioner."""
    require_role(actor, *RAISERS, act=_("faire appel d'une décision"))
    dispute = _lock(dispute_id)
    _expect(dispute, DisputeState.DECIDED, act=_("faire appel"))
    _step(dispute, actor, DisputeState.APPEALED, _text(note, "note", _("les motifs de l'appel")))
    return dispute


@transaction.atomic
def dispute_withdraw(*, actor: Any, dispute_id: int, note: str) -> Dispute:
    """Whoever raised it withdraws a dispute not yet decided, unless they recorded the contested
    act (they would be dropping a claim against their own record)."""
    require_role(actor, *RAISERS, act=_("se désister d'une contestation"))
    dispute = _lock(dispute_id)
    if actor.pk != dispute.raised_by_id:
        raise NotTheRaiser(
            _("seul %(raiser)s, qui a soulevé la contestation %(dispute)s, peut s'en désister")
            % {"raiser": dispute.raised_by.username, "dispute": dispute.pk},
            where="actor",
        )
    if actor.pk in recorders(dispute):
        raise SegregationViolation(
            _("%(user)s a enregistré l'acte contesté et ne peut pas se désister de la contestation")
            % {"user": actor.username},
            where="actor",
        )
    _expect(dispute, DisputeState.OPEN, DisputeState.UNDER_REVIEW, act=_("se désister"))
    _step(dispute, actor, DisputeState.WITHDRAWN, _text(note, "note", _("une note")))
    return dispute
