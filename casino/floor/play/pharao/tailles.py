"""A taille of Pharao, act by act (RULES.md §2; REPLAY.md, Pharao): the taille opened on a single
pack shuffled and cut, its bottom card shown; between draws, stakes placed on ranks, raised,
marked, collected, and reduced or withdrawn with the banker's approval; each draw's two cards laid,
the draw settled by the engine; at the last draw the bottom card checked and the standing stakes
returned. Each act is a service; the engine decides (``casino.games.pharao``), the ledger records
the money, the audit chain the act.

What stands on the layout is never stored: every act reads the taille's records through the
engine (``deal_of``) in the order its replay document gives them, so the floor and the replay
cannot disagree. Refusals that are evidence (a change of stake while a draw is being dealt, a
false paroli, a card the pack cannot hold, the bottom card out of its place) are committed before
the error.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, NoReturn

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.translation import gettext as _

from audit.chain import audit_record
from audit.models import Severity
from audit.services import anomaly_raise
from casino import clock
from casino.errors import Conflict, DomainError, NotFound, SegregationViolation
from casino.floor.models import Account, Duty, Movement
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    PharaoStakeAct,
    Taille,
    TaillePhase,
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
    table_accounts,
)
from casino.games import errors as engine_errors
from casino.games import pharao as engine
from casino.games.cards import ONE_PACK, Card, card
from casino.games.cards import rank as rank_of
from casino.games.errors import GameError, IllegalCard, IllegalRank
from casino.games.reglement import Reglement
from casino.i18n import game_message
from casino.people.roles import Role
from casino.people.services import require_role
from casino.prepared import Prepared, PreparedInsert, quoted_table
from casino.round_trips import run
from shoes.errors import CardRefused, NotACard
from shoes.models import CardLaid, PackState
from shoes.services import (
    card_lay,
    cards_laid_in,
    cards_left,
    current_taille,
    packs_at,
    taille_ends,
)

GAME = "pharao"
TABLE_STAFF = (Role.TAILLEUR, Role.CROUPIER)
AT_THE_TABLE = (Duty.Post.TAILLEUR, Duty.Post.CROUPIER)
TAILLEUR = Duty.Post.TAILLEUR
CHEF_DE_PARTIE = Duty.Post.CHEF_DE_PARTIE
# The acts' own lines (the money moved at the act); a draw's lines are the cards'.
ACT_OUTCOMES = (engine.Outcome.COLLECTED, engine.Outcome.WITHDRAWN, engine.Outcome.REDUCED)


class IllegalTaillePhase(Conflict):
    """The act does not fit the taille: it has ended, or a draw is half dealt."""

    code = "illegal_taille_phase"


class WrongSide(Conflict):
    """A card laid for one side when the other's is next: a draw's first card goes left, for the
    bank, its second right, for the players."""

    code = "wrong_side"


class BottomCardOutOfPlace(DomainError):
    """The card shown as the bottom card comes out before the last draw, or the last card is
    another: refused, and recorded as a ``bottom_card`` anomaly."""

    code = "bottom_card"
    recorded = True


class NotARank(DomainError):
    """A string that is no rank code (``A 2 … 9 T J Q K``, or ``10``): a malformed request."""

    code = "not_a_rank"
    http_status = 400


class StakeNotStanding(Conflict):
    """The stake does not stand on the layout: it ended, or it was placed for the draw to come
    (nothing changes it before that draw)."""

    code = "unknown_stake"


class FalseParoli(DomainError):
    """A mark on a stake that did not win the draw just made, or a second mark after one win (the
    classic false paroli): refused, and recorded as a ``false_paroli`` anomaly."""

    code = "false_paroli"
    recorded = True


class BadMark(DomainError):
    """The act does not fit the stake: no such step in the marks table, a marked stake raised or
    reduced, a reduction leaving less than 1."""

    code = "bad_mark"


class NotApproved(DomainError):
    """A reduction or withdrawal without the approval of the chef de partie on duty, or a collect
    that is not right after a win (that would be a withdrawal)."""

    code = "not_approved"
    http_status = 403


class RankExhausted(DomainError):
    """A stake, or a raise, on a rank none of whose cards is left to draw."""

    code = "rank_exhausted"


class NoHolder(DomainError):
    """A stake is a patron's (``patron:<id>``) or a seat marker's: 1 to 40 characters."""

    code = "no_holder"


class NotApprovable(DomainError):
    """The banker approves reductions (with the amount taken off) and withdrawals, nothing else."""

    code = "not_approvable"


def _refuse(exc: GameError, *, where: str) -> NoReturn:
    """The engine's refusal as the floor's, under the same code (REPLAY.md's reasons)."""
    message = game_message(exc)
    if isinstance(exc, engine_errors.UnknownStake):
        raise StakeNotStanding(message, where=where)
    if isinstance(exc, engine_errors.BadMark):
        raise BadMark(message, where=where)
    if isinstance(exc, engine_errors.NotApproved):
        raise NotApproved(message, where=where)
    if isinstance(exc, engine_errors.RankExhausted):
        raise RankExhausted(message, where="rank")
    if isinstance(
        exc, (engine_errors.OverLimit, engine_errors.UnderLimit, engine_errors.StakeRefused)
    ):
        # The replay names the limit (over_limit, under_limit); the floor says it as at every
        # table, in one code, the message telling which limit.
        raise StakeRefused(message, where="amount")
    raise IllegalTaillePhase(message, where=where)


# --- the taille as the engine sees it ------------------------------------------------------------


def rules_of(taille: Taille) -> Reglement:
    """The règlement version the taille is played under, with the limits of its séance."""
    return taille.reglement.with_limits(min_stake=taille.min_stake, max_stake=taille.max_stake)


def laid_cards(taille: Taille) -> list[str]:
    """The taille's cards laid so far, in order: the pack's, in the taille of its cut."""
    return cards_laid_in(taille.pack_id, taille.pack_taille)


# Every act reads the taille's records (``deal_of``): its stakes, the acts on them with who
# approved each, and its cards. One fixed statement, one round trip: as three ORM queries, built
# and compiled afresh at every act, they cost more than the engine's whole replay (issue 17's
# profile). Each row is (what, its order, the stake's id, rank or act or card, amount, draw, the
# approver); ``tests/floor/test_pharao_records.py`` holds it to the ORM's reading.
_RECORDS = f"""
SELECT 0, s.id, s.id, s.rank, s.amount, s.draw, NULL
  FROM {quoted_table(PharaoStake)} s WHERE s.taille_id = %(taille)s
UNION ALL
SELECT 1, a.id, a.stake_id, a.act, a.amount, a.draw, u.username
  FROM {quoted_table(PharaoStakeAct)} a
  JOIN {quoted_table(PharaoStake)} s ON s.id = a.stake_id
  LEFT JOIN {quoted_table(PharaoApproval)} p ON p.id = a.approval_id
  LEFT JOIN {quoted_table(get_user_model())} u ON u.id = p.approved_by_id
 WHERE s.taille_id = %(taille)s
UNION ALL
SELECT 2, c.seq, NULL, c.card, NULL, NULL, NULL
  FROM {quoted_table(CardLaid)} c
 WHERE c.pack_id = %(pack)s AND c.taille = %(pack_taille)s AND NOT c.burned
ORDER BY 1, 2
"""


def taille_records(
    taille: Taille,
) -> tuple[dict[int, list[engine.Stake]], dict[int, list[engine.Action]], list[str]]:
    """The taille's stakes and the acts on them, each by the draw it comes before, in the order
    recorded, and its cards laid in order: what ``deal_of`` replays."""
    stakes: dict[int, list[engine.Stake]] = defaultdict(list)
    acts: dict[int, list[engine.Action]] = defaultdict(list)
    cards: list[str] = []
    rows = run(
        _RECORDS, {"taille": taille.pk, "pack": taille.pack_id, "pack_taille": taille.pack_taille}
    )
    for what, _order, stake, word, amount, draw, approved_by in rows:
        if what == 0:
            stakes[draw].append(engine.Stake(str(stake), rank_of(word), amount))
        elif what == 1:
            acts[draw].append(engine.Action(str(stake), engine.Act(word), amount, approved_by))
        else:
            cards.append(word)
    return stakes, acts, cards


def deal_of(taille: Taille, *, new_stakes: bool = True) -> engine.TailleDeal:
    """The taille as the engine sees it, from its records in the order of its replay document:
    before each draw the acts made before it in their order, then the stakes placed for it, then
    its cards. Engine stake ids are the stakes' references (``str(pk)``). ``new_stakes=False``:
    without the stakes placed for the draw to come, which no act touches before that draw (as in
    the replay, where a stake's acts come after its draw)."""
    deal = engine.TailleDeal(card(taille.bottom_card), rules_of(taille))
    stakes, acts, cards = taille_records(taille)
    for number in range(1, engine.DRAWS + 1):
        for action in acts[number]:
            deal.act(action)
        coming = len(cards) < 2 * number - 1  # no card of this draw is laid yet
        if new_stakes or not coming:
            for stake in stakes[number]:
                deal.place(stake)
        if coming:
            break
        deal.lay(card(cards[2 * number - 2]))
        if len(cards) < 2 * number:
            break
        deal.lay(card(cards[2 * number - 1]))
    return deal


def _lock(taille_id: int, actor: Any, *posts: Duty.Post, act: str) -> Taille:
    """The taille locked for ``act`` by ``actor``, on duty at its table as one of ``posts``."""
    taille: Taille | None = round_locked(Taille, taille_id, actor, *posts, act=act)
    if taille is None:
        raise NotFound(
            _("la taille %(taille)s n'existe pas") % {"taille": taille_id}, where="taille"
        )
    return taille


# The acts' reads and writes, each prepared once (``casino.prepared``): built and compiled at every
# act, they cost more than running them (issue 17's profile).
_STAKE = Prepared(lambda pk: PharaoStake.objects.select_related("holder").filter(pk=pk))
_STAKES_WITH_HOLDERS = Prepared(
    lambda taille: PharaoStake.objects.select_related("holder").filter(taille_id=taille)
)
_INSERT_STAKE = PreparedInsert(PharaoStake)
_INSERT_ACT = PreparedInsert(PharaoStakeAct)
_INSERT_DRAW = PreparedInsert(PharaoDraw)
_INSERT_SETTLEMENTS = PreparedInsert(PharaoSettlement)


def _stake(stake_id: int, actor: Any, *posts: Duty.Post, act: str) -> tuple[PharaoStake, Taille]:
    """The stake, and its taille locked for ``act`` by ``actor`` on duty as one of ``posts``."""
    stake = _STAKE.first(stake_id)
    if stake is None:
        raise NotFound(_("la mise %(stake)s n'existe pas") % {"stake": stake_id}, where="stake")
    return stake, _lock(stake.taille_id, actor, *posts, act=act)


def _dealing(taille: Taille, *, act: str) -> None:
    if taille.phase != TaillePhase.DEALING:
        raise IllegalTaillePhase(
            _("%(act)s : la taille %(number)s est finie") % {"act": act, "number": taille.number},
            where="taille",
        )


def _late(
    taille: Taille, actor: Any, exc: GameError, what: str, details: dict[str, Any]
) -> LateStake:
    """A change of stake while a draw is being dealt, refused and recorded (the anomaly and the
    audit event keep ``what`` as written at the time)."""
    draw = len(laid_cards(taille)) // 2 + 1
    anomaly_raise(
        detector="late_stake",
        severity=Severity.CRITICAL,
        subject=taille,
        summary=f"{taille.shift.table}: {what} refused while draw {draw} of taille "
        f"{taille.number} was being dealt ({exc.message})",
        involved=[actor.pk],
        evidence={
            "taille": taille.pk,
            "number": taille.number,
            "draw": draw,
            "what": what,
            **details,
        },
    )
    audit_record(
        actor=actor,
        action="taille.late_stake_refused",
        subject=taille,
        payload={"what": what, "draw": draw, **details},
    )
    return LateStake(game_message(exc), where="taille")


def _ref(taille: Taille, stake: PharaoStake) -> str:
    return f"taille:{taille.pk}:pharao_stake:{stake.pk}"


def line_entries(
    taille: Taille,
    line: engine.Settlement,
    stake: PharaoStake,
    accounts: dict[str, Account],
    key: str,
) -> tuple[list[Entry], list[Entry]]:
    """The movements of one line: (collections, payments), so that losers are collected before
    winners are paid. ``to_bank`` goes from the layout to the bank (a loss, or a plié's share),
    ``returned`` from the layout to the holder, ``paid`` from the bank to the holder."""
    layout, bank = accounts[Account.Kind.LAYOUT], accounts[Account.Kind.BANK]
    ref = _ref(taille, stake)
    collect: list[Entry] = []
    pay: list[Entry] = []
    if line.to_bank:
        kind = (
            Movement.Kind.PLIE_TAKEN
            if line.outcome is engine.Outcome.PLIE
            else Movement.Kind.LOSS_COLLECTED
        )
        collect.append(Entry(kind, layout, bank, line.to_bank, ref, f"{key}:to_bank"))
    if line.returned:
        pay.append(
            Entry(
                Movement.Kind.STAKE_RETURNED,
                layout,
                stake.holder,
                line.returned,
                ref,
                f"{key}:returned",
            )
        )
    if line.paid:
        pay.append(Entry(Movement.Kind.WIN_PAID, bank, stake.holder, line.paid, ref, f"{key}:paid"))
    return collect, pay


# --- the taille opened, its bottom card shown ------------------------------------------------------


@transaction.atomic
def taille_open(*, actor: Any, shift_id: int, bottom_card: str) -> Taille:
    """The tailleur on duty begins a taille on the single pack in play at his table (verified by
    the commissioner, opened, shuffled and cut: ``shoes.services``), showing and recording its
    bottom card, which counts for nobody and is checked when it comes out at the last draw."""
    act = _("ouvrir une taille")
    require_role(actor, Role.TAILLEUR, act=act)
    shift = open_shift_locked(shift_id)
    require_game(shift.table, GAME, act=act)
    require_on_duty(shift, actor, TAILLEUR, act=act)
    if Taille.objects.filter(shift__table=shift.table, phase=TaillePhase.DEALING).exists():
        raise Conflict(_("%(table)s a une taille en cours") % {"table": shift.table}, where="shift")
    pack = packs_at(shift.table_id, PackState.IN_PLAY).first()
    if pack is None:
        raise Conflict(
            _("%(table)s n'a pas de jeu en service (mêlé et coupé)") % {"table": shift.table},
            where="pack",
        )
    pack_taille = current_taille(pack)
    if Taille.objects.filter(pack=pack, pack_taille=pack_taille).exists():
        raise Conflict(
            _("le jeu %(pack)s a donné sa taille depuis sa dernière coupe : mêlez et coupez-le")
            % {"pack": pack.seal_number},
            where="pack",
        )
    left, _codes = cards_left(pack)
    if left != len(ONE_PACK):
        raise Conflict(
            _("une taille se donne d'un jeu entier : le jeu %(pack)s a %(left)s cartes")
            % {"pack": pack.seal_number, "left": left},
            where="pack",
        )
    try:
        bottom = str(card(bottom_card))
    except IllegalCard as exc:
        raise NotACard(game_message(exc), where="bottom_card") from None
    taille = Taille.objects.create(
        shift=shift,
        pack=pack,
        pack_taille=pack_taille,
        number=shift.tailles.count() + 1,
        reglement=shift.reglement,
        min_stake=shift.min_stake,
        max_stake=shift.max_stake,
        bottom_card=bottom,
        opened_at=clock.now(),
        opened_by=actor,
    )
    audit_record(
        actor=actor,
        action="taille.opened",
        subject=taille,
        payload={
            "table": shift.table.number,
            "pack": pack.seal_number,
            "pack_taille": pack_taille,
            "number": taille.number,
            "bottom_card": bottom,
            "reglement": f"{taille.reglement.name} v{taille.reglement.version}",
        },
    )
    return taille


# --- stakes, between draws -----------------------------------------------------------------------


def pharao_stake_place(
    *, actor: Any, taille_id: int, ref: str, holder: str, rank: str, amount: int
) -> PharaoStake:
    """A croupier (or the tailleur) on duty places a stake on a rank for a patron or a seat,
    between draws: it stands from the next draw on. While a draw is being dealt it is refused and
    recorded (``late_stake``)."""
    doing = _("poser une mise")
    require_role(actor, *TABLE_STAFF, act=doing)
    refused: DomainError
    with transaction.atomic():
        taille = _lock(taille_id, actor, *AT_THE_TABLE, act=doing)
        _dealing(taille, act=doing)
        try:
            on = rank_of(rank)
        except IllegalRank as exc:
            raise NotARank(game_message(exc), where="rank") from None
        deal = deal_of(taille)
        try:
            deal.place(engine.Stake(f"new:{ref}", on, amount))
        except engine_errors.DrawInProgress as exc:
            refused = _late(
                taille,
                actor,
                exc,
                "a stake",
                {"ref": ref, "holder": holder, "rank": on.value, "amount": amount},
            )
        except engine_errors.PharaoRefusal as exc:
            _refuse(exc, where="ref")
        else:
            account, layout = stake_accounts(
                taille.shift.table,
                holder,
                round_=taille,
                ref=ref,
                taken=_("la mise %(ref)r est déjà dans la taille %(number)s"),
                no_holder=NoHolder,
            )
            stake = _INSERT_STAKE.create(
                taille=taille,
                ref=ref,
                holder=account,
                rank=on.value,
                amount=amount,
                draw=deal.completed + 1,
                placed_at=clock.now(),
                placed_by=actor,
            )
            ledger_post(
                actor=actor,
                shift=taille.shift,
                entries=[
                    Entry(
                        Movement.Kind.STAKE_PLACED,
                        account,
                        layout,
                        amount,
                        _ref(taille, stake),
                        f"pharao_stake:{stake.pk}:placed",
                    )
                ],
            )
            audit_record(
                actor=actor,
                action="pharao.stake_placed",
                subject=stake,
                payload={
                    "taille": taille.pk,
                    "ref": ref,
                    "holder": account.code,
                    "rank": on.value,
                    "amount": amount,
                    "draw": stake.draw,
                },
            )
            return stake
    raise refused


def _act(
    *,
    actor: Any,
    stake_id: int,
    act: engine.Act,
    doing: str,
    amount: int | None = None,
) -> PharaoStakeAct:
    """One act on a standing stake between draws, through the engine (refusals in REPLAY.md's
    order); a reduction or a withdrawal uses the approval the chef de partie gave for it."""
    require_role(actor, *TABLE_STAFF, act=doing)
    refused: DomainError
    with transaction.atomic():
        stake, taille = _stake(stake_id, actor, *AT_THE_TABLE, act=doing)
        _dealing(taille, act=doing)
        deal = deal_of(taille, new_stakes=False)
        draw = deal.completed + 1
        approval = None
        if act in (engine.Act.WITHDRAW, engine.Act.REDUCE):
            approval = (
                PharaoApproval.objects.filter(
                    stake=stake, act=act.value, amount=amount, draw=draw, used_by__isnull=True
                )
                .select_related("approved_by")
                .order_by("id")
                .first()
            )
        approver = approval.approved_by.username if approval is not None else None
        details = {"stake": stake.pk, "ref": stake.ref, "act": act.value, "amount": amount}
        try:
            acted = deal.act(engine.Action(str(stake.pk), act, amount, approver))
        except engine_errors.DrawInProgress as exc:
            refused = _late(taille, actor, exc, f"a {act.value}", details)
        except engine_errors.FalseParoli as exc:
            refused = _false_paroli(taille, stake, actor, exc, act)
        except engine_errors.PharaoRefusal as exc:
            _refuse(exc, where="stake")
        else:
            return _record_act(taille, stake, actor, acted, draw, approval)
    raise refused


def _false_paroli(
    taille: Taille, stake: PharaoStake, actor: Any, exc: GameError, act: engine.Act
) -> FalseParoli:
    draw = len(laid_cards(taille)) // 2
    anomaly_raise(
        detector="false_paroli",
        severity=Severity.CRITICAL,
        subject=taille,
        summary=f"{taille.shift.table}, taille {taille.number}: {act.value} on stake "
        f"{stake.ref} refused ({exc.message})",
        involved=[actor.pk],
        evidence={
            "taille": taille.pk,
            "stake": stake.pk,
            "ref": stake.ref,
            "rank": stake.rank,
            "move": act.value,
            "after_draw": draw,
        },
    )
    audit_record(
        actor=actor,
        action="pharao.false_paroli_refused",
        subject=stake,
        payload={"taille": taille.pk, "ref": stake.ref, "move": act.value, "after_draw": draw},
    )
    return FalseParoli(game_message(exc), where="stake")


def _record_act(
    taille: Taille,
    stake: PharaoStake,
    actor: Any,
    acted: engine.Acted,
    draw: int,
    approval: PharaoApproval | None,
) -> PharaoStakeAct:
    action = acted.action
    line = acted.settlement
    record = _INSERT_ACT.create(
        stake=stake,
        act=action.act.value,
        amount=action.amount,
        draw=draw,
        approval=approval,
        by=actor,
        at=clock.now(),
        mark=acted.stake.mark if acted.stake is not None else line.mark if line else "",
        put=acted.put,
        returned=line.returned if line is not None else 0,
    )
    accounts = table_accounts(taille.shift.table)
    entries: list[Entry] = []
    if acted.put:
        kind = (
            Movement.Kind.STAKE_PLACED
            if action.act is engine.Act.RAISE
            else Movement.Kind.WINNINGS_RIDDEN
        )
        entries.append(
            Entry(
                kind,
                stake.holder,
                accounts[Account.Kind.LAYOUT],
                acted.put,
                _ref(taille, stake),
                f"pharao_act:{record.pk}:put",
            )
        )
    if line is not None:
        collect, pay = line_entries(taille, line, stake, accounts, f"pharao_act:{record.pk}")
        entries += collect + pay
    ledger_post(actor=actor, shift=taille.shift, entries=entries)
    audit_record(
        actor=actor,
        action=f"pharao.stake_{action.act.value}",
        subject=stake,
        payload={
            "taille": taille.pk,
            "ref": stake.ref,
            "amount": action.amount,
            "draw": draw,
            "approval": approval.pk if approval is not None else None,
            "approved_by": approval.approved_by.username if approval is not None else None,
            "mark": record.mark,
            "put": record.put,
            "returned": record.returned,
        },
    )
    return record


def pharao_stake_raise(*, actor: Any, stake_id: int, amount: int) -> PharaoStakeAct:
    """Add ``amount`` to an unmarked stake, up to the table's maximum, on a rank with cards left."""
    return _act(
        actor=actor,
        stake_id=stake_id,
        act=engine.Act.RAISE,
        amount=amount,
        doing=_("augmenter une mise"),
    )


def pharao_stake_mark(*, actor: Any, stake_id: int, move: str) -> PharaoStakeAct:
    """Bend the card: ``paroli`` (everything rides) or ``appe`` (the winnings ride, the stake is
    protected), along the marks table, on a stake that won the draw just made, once per win. A
    false paroli is refused and recorded."""
    try:
        act = engine.Act(move)
    except ValueError:
        act = None
    if act not in (engine.Act.PAROLI, engine.Act.APPE):
        raise BadMark(_("%(move)r n'est ni paroli ni appe") % {"move": move}, where="move")
    return _act(actor=actor, stake_id=stake_id, act=act, doing=_("marquer une mise"))


def pharao_stake_collect(*, actor: Any, stake_id: int) -> PharaoStakeAct:
    """The player takes back all that stands on a card right after it won (no approval)."""
    return _act(actor=actor, stake_id=stake_id, act=engine.Act.COLLECT, doing=_("retirer un gain"))


def pharao_stake_reduce(*, actor: Any, stake_id: int, amount: int) -> PharaoStakeAct:
    """Take ``amount`` off an unmarked stake, with the banker's approval of that reduction."""
    return _act(
        actor=actor,
        stake_id=stake_id,
        act=engine.Act.REDUCE,
        amount=amount,
        doing=_("réduire une mise"),
    )


def pharao_stake_withdraw(*, actor: Any, stake_id: int) -> PharaoStakeAct:
    """Take a stake off the layout, with the banker's approval."""
    return _act(
        actor=actor, stake_id=stake_id, act=engine.Act.WITHDRAW, doing=_("retirer une mise")
    )


# --- the banker's approval ----------------------------------------------------------------------


@transaction.atomic
def pharao_approval_give(
    *, actor: Any, stake_id: int, act: str, amount: int | None = None
) -> PharaoApproval:
    """The chef de partie on duty approves, in his own act, a reduction (by ``amount``) or a
    withdrawal of a standing stake before the next draw; never a stake he recorded himself."""
    doing = _("approuver une réduction ou un retrait de mise")
    require_role(actor, Role.CHEF_DE_PARTIE, act=doing)
    stake, taille = _stake(stake_id, actor, CHEF_DE_PARTIE, act=doing)
    _dealing(taille, act=doing)
    if act not in ("withdraw", "reduce") or (act == "reduce") != (amount is not None):
        raise NotApprovable(
            _("le banquier approuve une réduction (avec son montant) ou un retrait, pas %(act)r")
            % {"act": act},
            where="act",
        )
    if stake.placed_by_id == actor.pk:
        raise SegregationViolation(
            _("%(person)s a posé la mise %(ref)s : un autre l'approuve")
            % {"person": actor.username, "ref": stake.ref},
            where="actor",
        )
    deal = deal_of(taille, new_stakes=False)
    if not deal.between_draws:
        raise IllegalTaillePhase(
            _("le tirage %(draw)s est commencé : l'approbation attend qu'il soit réglé")
            % {"draw": deal.completed + 1},
            where="taille",
        )
    if str(stake.pk) not in deal.standing:
        raise StakeNotStanding(
            _("la mise %(ref)s ne tient pas sur le tapis avant ce tirage") % {"ref": stake.ref},
            where="stake",
        )
    approval = PharaoApproval.objects.create(
        stake=stake,
        act=act,
        amount=amount,
        draw=deal.completed + 1,
        approved_by=actor,
        at=clock.now(),
    )
    audit_record(
        actor=actor,
        action="pharao.approval_given",
        subject=stake,
        payload={
            "taille": taille.pk,
            "ref": stake.ref,
            "act": act,
            "amount": amount,
            "draw": approval.draw,
            "placed_by": stake.placed_by.username,
        },
    )
    return approval


# --- the cards ----------------------------------------------------------------------------------


def taille_lay_card(
    *, actor: Any, taille_id: int, code: str, side: str | None = None
) -> engine.Laid:
    """The tailleur lays the next card: left for the bank, then right for the players (``side``,
    when the terminal gives it, is checked). A card the pack cannot hold is refused and recorded
    (``foreign_card``), and so is the bottom card out of its place (``bottom_card``). The second
    card settles the draw through the engine; the last draw ends the taille: the standing stakes
    are returned and the cards pass."""
    doing = _("poser une carte")
    require_role(actor, Role.TAILLEUR, act=doing)
    refused: DomainError
    with transaction.atomic():
        taille = _lock(taille_id, actor, TAILLEUR, act=doing)
        _dealing(taille, act=doing)
        try:
            laying = card(code)
        except IllegalCard as exc:
            raise NotACard(game_message(exc), where="code") from None
        deal = deal_of(taille)
        _check_side(deal, side)
        position = len(deal.laid)
        laid, bottom = None, None
        # A card already out in this taille is left to the pack's own check, which refuses it and
        # records it as a foreign card; any other goes to the engine first, which knows where the
        # bottom card must come out.
        if laying not in deal.laid:
            try:
                laid = deal.lay(laying)
            except engine_errors.ForeignCard as exc:
                bottom = _bottom_out_of_place(taille, actor, exc, laying, position)
        if bottom is not None:
            refused = bottom
        else:
            try:
                card_laid = card_lay(
                    actor=actor,
                    pack_id=taille.pack_id,
                    code=str(laying),
                    taille=taille.pack_taille,
                    shift=taille.shift,
                )
            except CardRefused as exc:
                refused = exc  # recorded; committed with this block, raised after it
            else:
                assert laid is not None, "the pack held it, so it was not out: the engine laid it"
                _record_card(taille, actor, laid, card_laid.seq)
                return laid
    raise refused


def _check_side(deal: engine.TailleDeal, side: str | None) -> None:
    if side is None or deal.next_side is None or side == deal.next_side.value:
        return
    waits = (
        _("le tirage %(draw)s attend sa carte de gauche, celle de la banque")
        if deal.next_side is engine.Side.BANK
        else _("le tirage %(draw)s attend sa carte de droite, celle des joueurs")
    )
    raise WrongSide(waits % {"draw": deal.completed + 1}, where="side")


def _bottom_out_of_place(
    taille: Taille, actor: Any, exc: GameError, laying: Card, position: int
) -> BottomCardOutOfPlace:
    anomaly_raise(
        detector="bottom_card",
        severity=Severity.CRITICAL,
        subject=taille,
        summary=f"{taille.shift.table}, taille {taille.number}: {laying} refused as card "
        f"{position + 1} ({exc.message})",
        involved=[actor.pk, taille.opened_by_id],
        evidence={
            "taille": taille.pk,
            "card": str(laying),
            "position": position + 1,
            "bottom_card": taille.bottom_card,
            "pack": taille.pack.seal_number,
        },
    )
    audit_record(
        actor=actor,
        action="taille.bottom_card_refused",
        subject=taille,
        payload={"card": str(laying), "position": position + 1, "bottom_card": taille.bottom_card},
    )
    return BottomCardOutOfPlace(game_message(exc), where="code")


def _record_card(taille: Taille, actor: Any, laid: engine.Laid, seq: int) -> None:
    audit_record(
        actor=actor,
        action="taille.card_laid",
        subject=taille,
        payload={"card": str(laid.card), "seq": seq, "side": laid.side.value, "draw": laid.draw},
    )
    if laid.settled is not None:
        _settle_draw(taille, actor, laid.settled)
    if laid.end is not None:
        _end(taille, actor, laid.end)


def _stakes_by_id(taille: Taille) -> dict[str, PharaoStake]:
    return {str(s.pk): s for s in _STAKES_WITH_HOLDERS.all(taille.pk)}


def _settle_draw(taille: Taille, actor: Any, settled: engine.Draw) -> PharaoDraw:
    """What the draw did to the stakes on its ranks, as the engine says: its lines, losers
    collected before winners are paid. The acts' lines before it were recorded at the acts."""
    draw = _INSERT_DRAW.create(
        taille=taille,
        number=settled.number,
        bank_card=str(settled.bank),
        players_card=str(settled.players),
        plie=settled.plie,
        settled_at=clock.now(),
        settled_by=actor,
    )
    lines = [s for s in settled.settlements if s.outcome not in ACT_OUTCOMES]
    _write_lines(taille, actor, lines, draw=draw, key=f"pharao_draw:{draw.pk}")
    audit_record(
        actor=actor,
        action="taille.draw_settled",
        subject=taille,
        payload={
            "number": draw.number,
            "bank": draw.bank_card,
            "players": draw.players_card,
            "plie": draw.plie,
            "settlements": [_line(s) for s in lines],
        },
    )
    return draw


def _line(s: engine.Settlement) -> list[Any]:
    return [int(s.stake), s.outcome.value, s.paid, s.returned, s.to_bank, s.mark]


def _write_lines(
    taille: Taille,
    actor: Any,
    lines: list[engine.Settlement],
    *,
    draw: PharaoDraw | None,
    key: str,
) -> None:
    if not lines:  # a draw on ranks nobody holds: nothing to write, nothing to read for it
        return
    by_id = _stakes_by_id(taille)
    accounts = table_accounts(taille.shift.table)
    _INSERT_SETTLEMENTS.insert_all(
        [
            PharaoSettlement(
                taille=taille,
                draw=draw,
                stake=by_id[s.stake],
                outcome=s.outcome.value,
                paid=s.paid,
                returned=s.returned,
                to_bank=s.to_bank,
                mark=s.mark,
            )
            for s in lines
        ]
    )
    collections: list[Entry] = []
    payments: list[Entry] = []
    for s in lines:
        collect, pay = line_entries(taille, s, by_id[s.stake], accounts, f"{key}:stake:{s.stake}")
        collections += collect
        payments += pay
    ledger_post(actor=actor, shift=taille.shift, entries=[*collections, *payments])


def _end(taille: Taille, actor: Any, lines: tuple[engine.Settlement, ...]) -> None:
    """After the last draw the standing stakes are returned, the taille ends and the cards pass
    (a talon of none: nothing is left to count)."""
    _write_lines(taille, actor, list(lines), draw=None, key=f"taille:{taille.pk}:end")
    taille.phase = TaillePhase.ENDED
    taille.save(update_fields=["phase"])
    audit_record(
        actor=actor,
        action="taille.ended",
        subject=taille,
        payload={"bottom_card": taille.bottom_card, "returned": [_line(s) for s in lines]},
    )
    taille_ends(actor=actor, pack=taille.pack, reason="taille")
