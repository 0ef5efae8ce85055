"""A coup of Trente-et-Quarante, act by act: faites vos jeux, stakes, le jeu est fait, each card,
settlement. Each act is a service; the engine decides, the ledger records the money.

Refusals that are evidence (a stake after the first card) are committed before the error.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils.translation import gettext as _

from audit.chain import audit_record
from audit.models import Severity
from audit.services import anomaly_raise
from casino import clock
from casino.errors import Conflict, DomainError, NotFound, ReasonRequired
from casino.floor.models import Account, Duty, Movement, Shift
from casino.floor.play.trente_et_quarante.models import (
    Coup,
    CoupCancellation,
    CoupPhase,
    CoupResult,
    Settlement,
    Stake,
    StakeWithdrawal,
)
from casino.floor.registry import require_game
from casino.floor.services import (
    Entry,
    LateStake,
    StakeRefused,
    ledger_post,
    open_shift_locked,
    require_on_duty,
    round_locked,
    stake_accounts,
    table_account,
    table_accounts,
)
from casino.games.cards import card
from casino.games.errors import GameError
from casino.games.reglement import Reglement
from casino.games.trente_et_quarante import (
    Chance,
    CoupDeal,
    CoupOutcome,
    Laid,
    Outcome,
    Prisoner,
    RefaitChoice,
    Result,
    check_stake,
    next_coup_begins,
    points,
    refund_at_end,
    settle,
)
from casino.games.trente_et_quarante import Settlement as EngineSettlement
from casino.games.trente_et_quarante import Stake as EngineStake
from casino.i18n import game_message
from casino.people.roles import Role
from casino.people.services import require_role
from casino.prepared import Prepared, PreparedInsert, PreparedUpdate
from casino.round_trips import run
from shoes.errors import CardRefused
from shoes.models import CardLaid, PackEvent, PackState
from shoes.services import card_lay, cards_left, packs_at, taille_ends


class BettingClosed(DomainError):
    """ "Le jeu est fait": no more stakes for this coup."""

    code = "betting_closed"
    http_status = 409


class IllegalCoupPhase(Conflict):
    """The act does not fit the coup's phase."""

    code = "illegal_coup_phase"


GAME = "trente-et-quarante"
TABLE_STAFF = (Role.TAILLEUR, Role.CROUPIER)
FINISHED = (CoupPhase.SETTLED, CoupPhase.CANCELLED)
TAILLEUR = Duty.Post.TAILLEUR
AT_THE_TABLE = (Duty.Post.TAILLEUR, Duty.Post.CROUPIER)
# A stake's own reads and INSERT, prepared once (casino/prepared.py): the act most often sent.
_INSERT_STAKE = PreparedInsert(Stake)
_COUP_IN_PROGRESS = Prepared(
    lambda table_id: Coup.objects.filter(shift__table_id=table_id).exclude(phase__in=FINISHED)[:1]
)
# The table's last result before a bound (every settlement reads the prison): prepared once.
_LAST_RESULT = Prepared(
    lambda table_id, before_id: CoupResult.objects.filter(
        coup__shift__table_id=table_id, id__lt=before_id
    ).order_by("-id")[:1]
)
_NO_RESULT_AFTER = 2**63 - 1  # above every id: the last result of all
# The pack in play at a table, its taille (``current_taille``: one per cut) and the coups opened in
# that taille (the next is numbered after them): one prepared query where opening a coup sent
# three, each built and compiled afresh (issue 17's profile).
_PACK_IN_PLAY = Prepared(
    lambda table_id: (
        packs_at(table_id, PackState.IN_PLAY)
        .annotate(
            taille_now=Coalesce(
                Subquery(
                    PackEvent.objects.filter(pack=OuterRef("pk"), kind=PackEvent.Kind.CUT)
                    .order_by()
                    .values("pack")
                    .annotate(n=Count("pk"))
                    .values("n")
                ),
                0,
            )
        )
        .annotate(
            coups_in_taille=Coalesce(
                Subquery(
                    Coup.objects.filter(pack=OuterRef("pk"), taille=OuterRef("taille_now"))
                    .order_by()
                    .values("pack")
                    .annotate(n=Count("pk"))
                    .values("n")
                ),
                0,
            )
        )[:1]
    )
)
_INSERT_COUP = PreparedInsert(Coup)
# What a settlement reads and writes, and the coup's phase, prepared once (casino/prepared.py).
_STAKES_TO_SETTLE = Prepared(
    lambda coup_id: (
        Stake.objects.filter(coup_id=coup_id, withdrawal__isnull=True)
        .select_related("holder")
        .order_by("id")
    )
)
_INSERT_SETTLEMENTS = PreparedInsert(Settlement)
_INSERT_RESULT = PreparedInsert(CoupResult)
_SET_PHASE = PreparedUpdate(Coup, "phase")


def _lock(coup_id: int, actor: Any, *posts: Duty.Post, act: str) -> Coup:
    """The coup locked for ``act`` by ``actor``, on duty at its table as one of ``posts``."""
    coup: Coup | None = round_locked(Coup, coup_id, actor, *posts, act=act)
    if coup is None:
        raise NotFound(_("le coup %(coup)s n'existe pas") % {"coup": coup_id}, where="coup")
    return coup


def _phase(coup: Coup, *phases: CoupPhase, act: str) -> None:
    if coup.phase not in phases:
        raise IllegalCoupPhase(
            _("%(act)s : le coup %(number)s en est à %(phase)r")
            % {"act": act, "number": coup.number, "phase": coup.get_phase_display()},
            where="phase",
        )


def rules_of(coup: Coup) -> Reglement:
    """The règlement version the coup is played under, with the limits it was played under."""
    return coup.reglement.with_limits(min_stake=coup.min_stake, max_stake=coup.max_stake)


def table_prison(shift: Shift, *, before: CoupResult | None = None) -> list[Prisoner]:
    """The table's prison: what the last settled coup at this table left there (it carries over
    from coup to coup, séance to séance and sixain to sixain); ``before``: as it stood when that
    coup was settled."""
    last = _LAST_RESULT.first(shift.table_id, _NO_RESULT_AFTER if before is None else before.pk)
    if last is None:
        return []
    return [
        Prisoner(p["stake"], Chance(p["chance"]), p["held"], p["level"]) for p in last.prison_after
    ]


@transaction.atomic
def coup_open(*, actor: Any, shift_id: int) -> Coup:
    """ "Messieurs, faites vos jeux": a new coup on the pack in play at this table."""
    require_role(actor, Role.TAILLEUR, act=_("ouvrir un coup"))
    shift = open_shift_locked(shift_id)
    require_game(shift.table, GAME, act=_("ouvrir un coup"))
    require_on_duty(shift, actor, TAILLEUR, act=_("ouvrir un coup"))
    if _COUP_IN_PROGRESS.first(shift.table_id) is not None:
        raise Conflict(_("%(table)s a un coup en cours") % {"table": shift.table}, where="shift")
    pack = _PACK_IN_PLAY.first(shift.table_id)
    if pack is None:
        raise Conflict(
            _("%(table)s n'a pas de jeu en service (mêlé et coupé)") % {"table": shift.table},
            where="pack",
        )
    coup = _INSERT_COUP.create(
        shift=shift,
        pack=pack,
        taille=pack.taille_now,
        number=pack.coups_in_taille + 1,
        reglement=shift.reglement,
        min_stake=shift.min_stake,
        max_stake=shift.max_stake,
        opened_at=clock.now(),
        opened_by=actor,
    )
    audit_record(
        actor=actor,
        action="coup.opened",
        subject=coup,
        payload={
            "table": shift.table.number,
            "pack": pack.seal_number,
            "number": coup.number,
            "reglement": f"{coup.reglement.name} v{coup.reglement.version}",
        },
    )
    return coup


def _late(coup: Coup, actor: Any, what: str, details: dict[str, Any], refused: str) -> LateStake:
    """The refusal, recorded (the anomaly and the audit event keep ``what`` and ``message`` as
    written at the time); ``refused``: its words for the person, ``%(number)s`` the coup."""
    message = (
        f"{what} refused: the first card of coup {coup.number} is on the table "
        "(no stake may be placed, withdrawn or moved after it)"
    )
    anomaly_raise(
        detector="late_stake",
        severity=Severity.CRITICAL,
        subject=coup,
        summary=f"{coup.shift.table}: {message}",
        involved=[actor.pk],
        evidence={"coup": coup.pk, "number": coup.number, "what": what, **details},
    )
    audit_record(
        actor=actor,
        action="coup.late_stake_refused",
        subject=coup,
        payload={"what": what, **details},
    )
    return LateStake(refused % {"number": coup.number}, where="coup")


def _on_refait(value: str | None) -> RefaitChoice | None:
    if not value:
        return None
    if value in ("prison", "half"):
        return value  # type: ignore[return-value]
    if value.startswith("move:") and value[5:] in {c.value for c in Chance}:
        return ("move", Chance(value[5:]))
    raise StakeRefused(
        _("%(value)r n'est ni prison, ni half, ni move:<chance>") % {"value": value},
        where="on_refait",
    )


def stake_place(
    *,
    actor: Any,
    coup_id: int,
    ref: str,
    holder: str,
    chance: str,
    amount: int,
    insured: bool = False,
    on_refait: str | None = None,
) -> Stake:
    """A stake on rouge, noir, couleur or inverse, while betting is open."""
    require_role(actor, *TABLE_STAFF, act=_("poser une mise"))
    with transaction.atomic():
        coup = _lock(coup_id, actor, *AT_THE_TABLE, act=_("poser une mise"))
        if coup.phase in (CoupPhase.DEALING, CoupPhase.COMPLETE, CoupPhase.SETTLED):
            late = _late(
                coup,
                actor,
                "a stake",
                {"ref": ref, "holder": holder, "chance": chance, "amount": amount},
                _(
                    "une mise refusée : la première carte du coup %(number)s est sur la table "
                    "(aucune mise ne peut être posée, retirée ni déplacée après elle)"
                ),
            )
        else:
            late = None
            if coup.phase == CoupPhase.CLOSED:
                raise BettingClosed(
                    _("le jeu est fait : le coup %(number)s ne prend plus de mises")
                    % {"number": coup.number},
                    where="coup",
                )
            if chance not in {c.value for c in Chance}:
                raise StakeRefused(
                    _("%(chance)r n'est pas rouge, noir, couleur ou inverse") % {"chance": chance},
                    where="chance",
                )
            engine_stake = EngineStake(ref, Chance(chance), amount, insured, _on_refait(on_refait))
            try:
                check_stake(engine_stake, rules_of(coup))
            except GameError as exc:
                raise StakeRefused(game_message(exc), where=exc.where) from None
            account, layout = stake_accounts(
                coup.shift.table,
                holder,
                round_=coup,
                ref=ref,
                taken=_("la mise %(ref)r est déjà sur le coup %(number)s"),
                no_holder=StakeRefused,
            )
            stake = _INSERT_STAKE.create(
                coup=coup,
                ref=ref,
                holder=account,
                chance=chance,
                amount=amount,
                insured=insured,
                on_refait=on_refait or "",
                placed_at=clock.now(),
                placed_by=actor,
            )
            ledger_post(
                actor=actor,
                shift=coup.shift,
                entries=[
                    Entry(
                        Movement.Kind.STAKE_PLACED,
                        account,
                        layout,
                        amount,
                        f"coup:{coup.pk}:stake:{stake.pk}",
                        f"stake:{stake.pk}:placed",
                    )
                ],
            )
            audit_record(
                actor=actor,
                action="stake.placed",
                subject=stake,
                payload={
                    "coup": coup.pk,
                    "ref": ref,
                    "holder": account.code,
                    "chance": chance,
                    "amount": amount,
                    "insured": insured,
                    "on_refait": on_refait or "",
                },
            )
            return stake
    raise late


def stake_withdraw(*, actor: Any, stake_id: int) -> StakeWithdrawal:
    """A stake taken back before the first card; after it, a late stake."""
    require_role(actor, *TABLE_STAFF, act=_("retirer une mise"))
    with transaction.atomic():
        try:
            stake = Stake.objects.select_related("coup").get(pk=stake_id)
        except Stake.DoesNotExist:
            raise NotFound(
                _("la mise %(stake)s n'existe pas") % {"stake": stake_id}, where="stake"
            ) from None
        coup = _lock(stake.coup_id, actor, *AT_THE_TABLE, act=_("retirer une mise"))
        if coup.phase not in (CoupPhase.BETTING, CoupPhase.CLOSED):
            late = _late(
                coup,
                actor,
                "a withdrawal",
                {"stake": stake.pk, "ref": stake.ref},
                _(
                    "un retrait refusé : la première carte du coup %(number)s est sur la table "
                    "(aucune mise ne peut être posée, retirée ni déplacée après elle)"
                ),
            )
        else:
            if StakeWithdrawal.objects.filter(stake=stake).exists():
                raise Conflict(
                    _("la mise %(ref)s a déjà été retirée") % {"ref": stake.ref}, where="stake"
                )
            withdrawal = StakeWithdrawal.objects.create(stake=stake, at=clock.now(), actor=actor)
            ledger_post(
                actor=actor,
                shift=coup.shift,
                entries=[
                    Entry(
                        Movement.Kind.STAKE_RETURNED,
                        table_account(coup.shift.table, Account.Kind.LAYOUT),
                        stake.holder,
                        stake.amount,
                        f"coup:{coup.pk}:stake:{stake.pk}",
                        f"stake:{stake.pk}:withdrawn",
                    )
                ],
            )
            audit_record(
                actor=actor,
                action="stake.withdrawn",
                subject=stake,
                payload={"coup": coup.pk, "ref": stake.ref, "amount": stake.amount},
            )
            return withdrawal
    raise late


@transaction.atomic
def coup_close_betting(*, actor: Any, coup_id: int) -> Coup:
    """ "Le jeu est fait"."""
    require_role(actor, Role.TAILLEUR, act=_("clore les mises"))
    coup = _lock(coup_id, actor, TAILLEUR, act=_("clore les mises"))
    _phase(coup, CoupPhase.BETTING, act=_("clore les mises"))
    coup.phase = CoupPhase.CLOSED
    _SET_PHASE.save(coup)
    audit_record(
        actor=actor,
        action="coup.betting_closed",
        subject=coup,
        payload={"stakes": coup.stakes.count()},
    )
    return coup


def deal_of(coup: Coup, rules: Reglement) -> CoupDeal:
    # Every settlement replays the coup's cards: one fixed statement, where the ORM built and
    # compiled the same values query for each (issue 17's profile). A card reads them with the
    # card (``card_lay``'s ``coup_cards``).
    rows = run(
        f"SELECT card FROM {CardLaid._meta.db_table} WHERE coup_id = %s ORDER BY seq", [coup.pk]
    )
    return _replayed(rules, [code for (code,) in rows])


def _replayed(rules: Reglement, codes: list[str]) -> CoupDeal:
    deal = CoupDeal(rules)
    for code in codes:
        deal.lay(card(code))
    return deal


def coup_lay_card(*, actor: Any, coup_id: int, code: str) -> Laid:
    """The tailleur lays the next card: checked by the pack (a foreign card is refused and
    recorded) and by the engine (which row, is it closed, is the coup complete)."""
    require_role(actor, Role.TAILLEUR, act=_("poser une carte"))
    with transaction.atomic():
        coup = _lock(coup_id, actor, TAILLEUR, act=_("poser une carte"))
        _phase(coup, CoupPhase.CLOSED, CoupPhase.DEALING, act=_("poser une carte"))
        rules = rules_of(coup)
        if cut_card_is_next(coup, rules):
            raise IllegalCoupPhase(
                _(
                    "la carte de coupe est sortie au coup %(number)s : le coup est nul, "
                    "réglez-le avec cut_card"
                )
                % {"number": coup.number},
                where="phase",
            )
        try:
            laid_card = card_lay(
                actor=actor,
                pack_id=coup.pack_id,
                code=code,
                coup_id=coup.pk,
                taille=coup.taille,
                shift=coup.shift,
            )
        except CardRefused as exc:
            refused = exc  # recorded; committed with this block, raised after it
        else:
            *before, this = laid_card.coup_cards
            laid = _replayed(rules, before).lay(card(this))
            phase = CoupPhase.COMPLETE if laid.coup_complete else CoupPhase.DEALING
            if coup.phase != phase:  # the first card and the last change it; the others do not
                coup.phase = phase
                _SET_PHASE.save(coup)
            audit_record(
                actor=actor,
                action="coup.card_laid",
                subject=coup,
                payload={
                    "card": laid_card.card,
                    "seq": laid_card.seq,
                    "row": laid.row,
                    "row_total": laid.row_total,
                    "complete": laid.coup_complete,
                },
            )
            return laid
    raise refused


def settlement_entries(
    coup: Coup, s: EngineSettlement, stake: Stake, accounts: dict[str, Account]
) -> tuple[list[Entry], list[Entry]]:
    """The movements of one settlement: (collections, payments), so that losers are collected
    before winners are paid (1.2.9)."""
    layout = accounts[Account.Kind.LAYOUT]
    bank = accounts[Account.Kind.BANK]
    prison = accounts[Account.Kind.PRISON]
    holder = stake.holder
    ref = f"coup:{coup.pk}:stake:{stake.pk}"
    key = f"coup:{coup.pk}:stake:{stake.pk}:{s.outcome.value}"
    placed_now = stake.coup_id == coup.pk
    # Where the stake's money stood when this coup began: on the layout, or in prison.
    source = layout if placed_now else prison
    collect: list[Entry] = []
    pay: list[Entry] = []
    if s.premium:
        collect.append(
            Entry(Movement.Kind.INSURANCE_PREMIUM, holder, bank, s.premium, ref, f"{key}:premium")
        )
    kind_to_bank = {
        Outcome.LOST: Movement.Kind.LOSS_COLLECTED,
        Outcome.HALF_LOST: Movement.Kind.HALF_TAKEN,
        Outcome.PRISON_LOST: Movement.Kind.PRISON_LOST,
        Outcome.REFUNDED: Movement.Kind.HALF_TAKEN,
        # A prisoner halved by another refait (prison_repeat: halve) stays in prison.
        Outcome.STILL_IMPRISONED: Movement.Kind.HALF_TAKEN,
    }
    kind_returned = {
        Outcome.WON: Movement.Kind.STAKE_RETURNED,
        Outcome.PUSH: Movement.Kind.PUSH_RETURNED,
        Outcome.HALF_LOST: Movement.Kind.HALF_RETURNED,
        Outcome.FREED: Movement.Kind.FREED,
        Outcome.VOID: Movement.Kind.VOID_RETURNED,
        Outcome.REFUNDED: Movement.Kind.REFUNDED,
    }
    if s.outcome is Outcome.REFUNDED:
        source = prison
    if s.to_bank:
        collect.append(
            Entry(kind_to_bank[s.outcome], source, bank, s.to_bank, ref, f"{key}:to_bank")
        )
    if s.outcome is Outcome.IMPRISONED:
        collect.append(
            Entry(Movement.Kind.IMPRISONED, layout, prison, s.held, ref, f"{key}:imprisoned")
        )
    if s.returned:
        pay.append(
            Entry(kind_returned[s.outcome], source, holder, s.returned, ref, f"{key}:returned")
        )
    if s.paid:
        pay.append(Entry(Movement.Kind.WIN_PAID, bank, holder, s.paid, ref, f"{key}:paid"))
    return collect, pay


def _taille_over(coup: Coup, rules: Reglement, *, cut_card: bool) -> bool:
    """Does another coup follow from this pack (RULES.md 1.3, REPLAY.md's settled readings)?
    Under the cut-card rule no coup begins once the cut card is the next card."""
    if cut_card:
        return True
    left, codes = cards_left(coup.pack)
    points_left = sum(points(card(c), rules) * n for c, n in Counter(codes).items())
    return not next_coup_begins(left, points_left, rules)


def cut_card_is_next(coup: Coup, rules: Reglement) -> bool:
    """The red card lies before the last ``cut_card_from_end`` cards: the pack knows its count,
    so whether it is the next card is a fact, not the tailleur's word."""
    if rules.end_rule != "cut_card" or rules.cut_card_from_end is None:
        return False
    return cards_left(coup.pack)[0] == rules.cut_card_from_end


class VoidAttempt(DomainError):
    """A coup declared void by the cut card when the pack says the cut card is not out:
    refused, and recorded as a ``void_attempt`` anomaly."""

    code = "void_attempt"
    http_status = 422
    recorded = True


def _void_attempt(coup: Coup, actor: Any, rules: Reglement) -> VoidAttempt:
    left = cards_left(coup.pack)[0]
    # The record keeps the words of the time (anomaly and audit event); the person reads them in
    # their language.
    if rules.end_rule != "cut_card":
        why = f"the règlement {rules.name} has no cut card (end rule {rules.end_rule})"
        said = _("le règlement %(reglement)s n'a pas de carte de coupe (règle de fin %(rule)s)")
    elif coup.phase == CoupPhase.COMPLETE:
        why = f"coup {coup.number} is complete: its rows closed before the cut card"
        said = _("le coup %(number)s est complet : ses rangées ont fermé avant la carte de coupe")
    else:
        why = f"{left} cards are left; the cut card lies before the last {rules.cut_card_from_end}"
        said = _(
            "il reste %(left)s cartes ; la carte de coupe est placée avant les %(position)s "
            "dernières"
        )
    message = f"coup {coup.number} void by the cut card refused: {why}"
    refused = _("le coup %(number)s nul par la carte de coupe est refusé : %(why)s") % {
        "number": coup.number,
        "why": said
        % {
            "reglement": rules.name,
            "rule": rules.end_rule,
            "number": coup.number,
            "left": left,
            "position": rules.cut_card_from_end,
        },
    }
    anomaly_raise(
        detector="void_attempt",
        severity=Severity.CRITICAL,
        subject=coup,
        summary=f"{coup.shift.table}: {message}",
        involved=[actor.pk],
        evidence={
            "coup": coup.pk,
            "number": coup.number,
            "phase": coup.phase,
            "cards_left": left,
            "end_rule": rules.end_rule,
            "cut_card_from_end": rules.cut_card_from_end,
        },
    )
    audit_record(
        actor=actor, action="coup.void_attempt_refused", subject=coup, payload={"why": why}
    )
    return VoidAttempt(refused, where="cut_card")


def engine_stake(stake: Stake, **amended: Any) -> EngineStake:
    """The engine's view of a recorded stake (``amended``: chance, amount, insured, on_refait as
    found in a dispute)."""
    fields = {
        "chance": stake.chance,
        "amount": stake.amount,
        "insured": stake.insured,
        "on_refait": stake.on_refait,
        **amended,
    }
    return engine_stake_of(stake.pk, **fields)


def engine_stake_of(
    pk: int, *, chance: str, amount: int, insured: bool, on_refait: str | None
) -> EngineStake:
    """The engine's view of a stake read as values rather than as a model row."""
    return EngineStake(str(pk), Chance(chance), amount, insured, _on_refait(on_refait))


def engine_settle(
    outcome: CoupOutcome,
    rules: Reglement,
    *,
    void: bool,
    last: bool,
    stakes: list[EngineStake],
    prison: list[Prisoner],
) -> tuple[list[EngineSettlement], list[Prisoner]]:
    """What the règlement says a coup does to its stakes and the prison (at the end of the
    taille, prisoners are refunded or carried as the règlement says)."""
    settled = settle(outcome, void=void, stakes=stakes, prison=prison, reglement=rules)
    results = list(settled.settlements)
    prison_after = list(settled.prison)
    if last:
        refunds, carried = refund_at_end(prison_after, rules)
        results.extend(refunds)
        prison_after = list(carried)
    return results, prison_after


def coup_settle(
    *,
    actor: Any,
    coup_id: int,
    spoken: str = "",
    cut_card: bool = False,
) -> CoupResult:
    """Settle the coup through the engine: losers collected first, then winners paid; the
    prison carries over; at the end of the taille the cards pass. ``cut_card``: the red card came
    out, so the coup is void and the taille ends. A spoken announcement that differs from the
    engine's raises ``announcement_mismatch``."""
    require_role(actor, *TABLE_STAFF, act=_("régler un coup"))
    refused: VoidAttempt | None = None
    with transaction.atomic():
        coup = _lock(coup_id, actor, *AT_THE_TABLE, act=_("régler un coup"))
        rules = rules_of(coup)
        deal = deal_of(coup, rules)
        if not cut_card:
            _phase(coup, CoupPhase.COMPLETE, CoupPhase.DEALING, act=_("régler"))
            if coup.phase == CoupPhase.DEALING and cards_left(coup.pack)[0] > 0:
                raise IllegalCoupPhase(
                    _("le coup %(number)s n'est pas complet : posez la carte suivante")
                    % {"number": coup.number},
                    where="phase",
                )
        else:
            _phase(coup, CoupPhase.CLOSED, CoupPhase.DEALING, act=_("régler à la carte de coupe"))
            if not cut_card_is_next(coup, rules):
                refused = _void_attempt(coup, actor, rules)  # recorded; committed, then raised
        if refused is None:
            return _settle(coup, actor, rules, deal, spoken=spoken, cut_card=cut_card)
    raise refused


@dataclass(frozen=True)
class SettlementPlan:
    """What settling a coup does, as the engine decides it: the outcome, whether the coup is void
    and the last of its taille, each stake's settlement (the prisoners it began with first) and
    the prison it leaves. ``stakes``: every stake settled, by its id (prisoners of earlier coups
    included)."""

    outcome: CoupOutcome
    void: bool
    last: bool
    results: list[EngineSettlement]
    prison_after: list[Prisoner]
    stakes: dict[int, Stake]


def settlement_plan(
    coup: Coup, rules: Reglement, deal: CoupDeal, *, cut_card: bool
) -> SettlementPlan:
    """The settlement of ``coup`` as it stands, written nowhere: the act writes this plan, and the
    table page shows it stake by stake before the act (one computation, so what was shown is
    what is recorded)."""
    outcome = deal.outcome()
    last = _taille_over(coup, rules, cut_card=cut_card)
    void = (
        cut_card
        or outcome.result is Result.INCOMPLETE
        or (outcome.result is Result.REFAIT and last and rules.refait_void_on_last_coup)
    )
    stakes = _STAKES_TO_SETTLE.all(coup.pk)
    prison = table_prison(coup.shift)
    engine_stakes = [engine_stake(s) for s in stakes]
    results, prison_after = engine_settle(
        outcome, rules, void=void, last=last, stakes=engine_stakes, prison=prison
    )
    by_pk = {s.pk: s for s in stakes}
    prisoners = {int(r.stake) for r in results} - set(by_pk)  # staked on earlier coups
    if prisoners:
        by_pk.update(
            (s.pk, s) for s in Stake.objects.select_related("holder").filter(pk__in=prisoners)
        )
    return SettlementPlan(outcome, void, last, results, prison_after, by_pk)


def _settle(
    coup: Coup, actor: Any, rules: Reglement, deal: CoupDeal, *, spoken: str, cut_card: bool
) -> CoupResult:
    """The settlement itself, in the caller's transaction, the coup locked."""
    plan = settlement_plan(coup, rules, deal, cut_card=cut_card)
    outcome, void, last = plan.outcome, plan.void, plan.last
    results, prison_after, by_pk = plan.results, plan.prison_after, plan.stakes
    accounts = table_accounts(coup.shift.table)
    collections: list[Entry] = []
    payments: list[Entry] = []
    for r in results:
        collect, pay = settlement_entries(coup, r, by_pk[int(r.stake)], accounts)
        collections += collect
        payments += pay
    _INSERT_SETTLEMENTS.insert_all(
        [
            Settlement(
                coup=coup,
                stake=by_pk[int(r.stake)],
                outcome=r.outcome.value,
                paid=r.paid,
                returned=r.returned,
                to_bank=r.to_bank,
                premium=r.premium,
                held=r.held,
                level=r.level,
            )
            for r in results
        ]
    )
    ledger_post(actor=actor, shift=coup.shift, entries=[*collections, *payments])
    announcement = outcome.announcement
    result = _INSERT_RESULT.create(
        coup=coup,
        noir_cards=[str(c) for c in outcome.noir.cards],
        rouge_cards=[str(c) for c in outcome.rouge.cards],
        noir_total=outcome.noir.total,
        rouge_total=outcome.rouge.total,
        result=outcome.result.value,
        couleur=outcome.couleur.value if outcome.couleur else "",
        void=void,
        last=last,
        announcement={
            "noir": announcement.noir,
            "rouge": announcement.rouge,
            "result": announcement.result,
        },
        spoken=spoken,
        settled_at=clock.now(),
        settled_by=actor,
        prison_after=[
            {"stake": p.stake, "chance": p.chance.value, "held": p.held, "level": p.level}
            for p in prison_after
        ],
    )
    coup.phase = CoupPhase.SETTLED
    _SET_PHASE.save(coup)
    audit_record(
        actor=actor,
        action="coup.settled",
        subject=coup,
        payload={
            "result": result.result,
            "noir": outcome.noir.total,
            "rouge": outcome.rouge.total,
            "couleur": result.couleur,
            "void": void,
            "last": last,
            "settlements": [
                [
                    r.stake,
                    r.outcome.value,
                    r.paid,
                    r.returned,
                    r.to_bank,
                    r.premium,
                    r.held,
                    r.level,
                ]
                for r in results
            ],
            "prison_after": result.prison_after,
            "spoken": spoken,
        },
    )
    if spoken and spoken.strip() != (announcement.result or ""):
        anomaly_raise(
            detector="announcement_mismatch",
            severity=Severity.WARNING,
            subject=coup,
            involved=[actor.pk],
            summary=f"{coup.shift.table} coup {coup.number}: announced "
            f"{spoken!r}, the cards say {announcement.result!r}",
            evidence={
                "spoken": spoken,
                "computed": announcement.result,
                "noir": outcome.noir.total,
                "rouge": outcome.rouge.total,
            },
        )
    if last:
        taille_ends(actor=actor, pack=coup.pack, reason="cut_card" if cut_card else rules.end_rule)
    return result


@transaction.atomic
def coup_cancel(*, actor: Any, coup_id: int, reason: str) -> CoupCancellation:
    """The chef de partie on duty cancels a coup that cannot go on (a misdeal, a card on the
    floor): every stake still on it is returned, prisoners stay as they were, no premium is
    charged, and a ``coup_cancelled`` anomaly asks for review."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("annuler un coup"))
    coup = _lock(coup_id, actor, Duty.Post.CHEF_DE_PARTIE, act=_("annuler un coup"))
    reason = (reason or "").strip()
    if not reason:
        raise ReasonRequired(_("dites pourquoi le coup est annulé"), where="reason")
    _phase(
        coup,
        CoupPhase.BETTING,
        CoupPhase.CLOSED,
        CoupPhase.DEALING,
        CoupPhase.COMPLETE,
        act=_("annuler"),
    )
    stakes = list(coup.stakes.filter(withdrawal__isnull=True).select_related("holder"))
    layout = table_account(coup.shift.table, Account.Kind.LAYOUT)
    ledger_post(
        actor=actor,
        shift=coup.shift,
        entries=[
            Entry(
                Movement.Kind.VOID_RETURNED,
                layout,
                stake.holder,
                stake.amount,
                f"coup:{coup.pk}:stake:{stake.pk}",
                f"coup:{coup.pk}:stake:{stake.pk}:cancelled",
            )
            for stake in stakes
        ],
    )
    cancellation = CoupCancellation.objects.create(
        coup=coup, at=clock.now(), by=actor, reason=reason
    )
    phase_before = coup.phase
    coup.phase = CoupPhase.CANCELLED
    _SET_PHASE.save(coup)
    cards = list(coup.cards.order_by("seq").values_list("card", flat=True))
    audit_record(
        actor=actor,
        action="coup.cancelled",
        subject=coup,
        payload={"reason": reason, "phase": phase_before, "cards": cards, "returned": len(stakes)},
    )
    anomaly_raise(
        detector="coup_cancelled",
        severity=Severity.WARNING,
        subject=coup,
        summary=f"{coup.shift.table} coup {coup.number} cancelled by {actor.username}: {reason}",
        involved=sorted({actor.pk, coup.opened_by_id}),
        evidence={
            "coup": coup.pk,
            "phase": phase_before,
            "cards": cards,
            "stakes_returned": [[s.ref, s.amount] for s in stakes],
            "reason": reason,
        },
    )
    return cancellation
