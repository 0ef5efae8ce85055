"""What disputes ask of Pharao (``casino/disputes/games.py``): a stake or a draw contested, the
taille replayed by the engine with the stakes and the draws' cards as found, beside the taille as
recorded; the difference in money, account by account, is the correction."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _

from casino.disputes.games import GameDisputes
from casino.disputes.recompute import InvalidFinding, Recomputation, transfers
from casino.errors import Conflict
from casino.floor.models import Account
from casino.floor.play.pharao import tailles as pharao
from casino.floor.play.pharao.models import (
    PharaoDraw,
    PharaoStake,
    PharaoStakeAct,
    Taille,
    TaillePhase,
)
from casino.floor.services import table_accounts
from casino.games import pharao as engine
from casino.games.cards import Card, card
from casino.games.cards import rank as rank_of
from casino.games.errors import GameError, PharaoRefusal
from casino.games.pharao import settlement_dict
from casino.i18n import game_message
from shoes.models import CardLaid

PHARAO_AMENDABLE = {"rank", "amount"}
SIDES = ("bank", "players")


def _pharao_findings(
    taille: Taille, findings: list[dict[str, Any]], stakes: dict[int, PharaoStake]
) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, str]]]:
    """The findings of a taille: a stake as found (``{"stake": id, "rank"|"amount": …}``) or a
    draw's cards as found (``{"draw": n, "bank"|"players": code}``), each once."""
    if not isinstance(findings, list):
        raise InvalidFinding(
            _("les constats sont une liste de {stake, …} ou de {draw, …}"), where="findings"
        )
    amended: dict[int, dict[str, Any]] = {}
    draws: dict[int, dict[str, str]] = {}
    for index, finding in enumerate(findings):
        where = f"findings[{index}]"
        if not isinstance(finding, dict) or ("stake" in finding) == ("draw" in finding):
            raise InvalidFinding(_("un constat est un objet {stake, …} ou {draw, …}"), where=where)
        if "stake" in finding:
            key, fields, found = finding["stake"], PHARAO_AMENDABLE, amended
            known = key in stakes and not isinstance(key, bool)
            unknown = _("la taille %(number)s n'a pas de mise %(ref)r")
        else:
            key, fields, found = finding["draw"], set(SIDES), draws  # type: ignore[assignment]
            known = isinstance(key, int) and not isinstance(key, bool)
            known = known and taille.draws.filter(number=key).exists()
            unknown = _("la taille %(number)s n'a pas de tirage %(ref)r")
        name = "stake" if "stake" in finding else "draw"
        if not known:
            raise InvalidFinding(
                unknown % {"number": taille.number, "ref": key}, where=f"{where}.{name}"
            )
        if key in found:
            twice = (
                _("la mise %(stake)s est constatée deux fois") % {"stake": key}
                if name == "stake"
                else _("le tirage %(draw)s est constaté deux fois") % {"draw": key}
            )
            raise InvalidFinding(twice, where=f"{where}.{name}")
        changes = {k: v for k, v in finding.items() if k != name}
        if not changes or set(changes) - fields:
            raise InvalidFinding(
                _("un constat corrige %(fields)s") % {"fields": sorted(fields)}, where=where
            )
        found[key] = changes
    return amended, draws


def _cards_as_found(
    taille: Taille, cards: list[Card], draws: dict[int, dict[str, str]]
) -> list[Card]:
    """The taille's cards with each draw's cards as found: a card found in a place swaps with
    the card recorded there (a card misread is another card's place), so the pack stays whole."""
    order = list(cards)
    for number, found in sorted(draws.items()):
        for side, code in found.items():
            position = 2 * number - 2 + SIDES.index(side)
            try:
                wanted = card(code)
            except (GameError, TypeError):
                raise InvalidFinding(
                    _("%(code)r n'est pas une carte") % {"code": code},
                    where=f"findings.draw.{side}",
                ) from None
            other = order.index(wanted)
            order[position], order[other] = order[other], order[position]
    if order[-1] != cards[-1]:
        raise InvalidFinding(
            _("la carte de dessous montrée à l'ouverture, %(card)s, ne change pas de place")
            % {"card": taille.bottom_card},
            where="findings",
        )
    return order


def _taille_money(
    taille: Taille,
    cards: list[Card],
    stakes: dict[int, PharaoStake],
    found: dict[int, engine.Stake],
    accounts: dict[str, Account],
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """Play the taille through the engine as recorded (its acts in order, its stakes as
    ``found``, its cards as laid) and return its lines and what moved, net per account. An act
    the engine refuses on the stakes as found is left out, as the table would have refused it."""
    deal = engine.TailleDeal(cards[-1], pharao.rules_of(taille))
    acts: dict[int, list[engine.Action]] = defaultdict(list)
    for stake_id, act, amount, draw, approved_by in (
        PharaoStakeAct.objects.filter(stake__taille=taille)
        .order_by("id")
        .values_list("stake_id", "act", "amount", "draw", "approval__approved_by__username")
    ):
        acts[draw].append(engine.Action(str(stake_id), engine.Act(act), amount, approved_by))
    lines: list[dict[str, Any]] = []
    net: Counter[str] = Counter()
    layout = accounts[Account.Kind.LAYOUT].code

    def put(stake: PharaoStake, amount: int) -> None:
        net[stake.holder.code] -= amount
        net[layout] += amount

    def settle(line: engine.Settlement, draw: int | None) -> None:
        stake = stakes[int(line.stake)]
        lines.append({**settlement_dict(line), "stake": stake.pk, "draw": draw})
        collect, pay = pharao.line_entries(taille, line, stake, accounts, "recompute")
        for entry in (*collect, *pay):
            net[entry.debit.code] += entry.amount
            net[entry.credit.code] -= entry.amount

    for number in range(1, engine.DRAWS + 1):
        for action in acts[number]:
            try:
                acted = deal.act(action)
            except PharaoRefusal:
                continue
            put(stakes[int(action.stake)], acted.put)
            if acted.settlement is not None:
                settle(acted.settlement, number)
        for stake in sorted((s for s in stakes.values() if s.draw == number), key=lambda s: s.pk):
            try:
                deal.place(found[stake.pk])
            except PharaoRefusal:
                continue
            put(stake, found[stake.pk].amount)
        deal.lay(cards[2 * number - 2])
        done = deal.lay(cards[2 * number - 1])
        assert done.settled is not None
        for line in done.settled.settlements:
            if line.outcome not in pharao.ACT_OUTCOMES:  # the acts' lines were settled at the acts
                settle(line, number)
        for line in done.end or ():
            settle(line, None)
    return lines, net


def recompute_taille(taille: Taille, findings: list[dict[str, Any]] | None = None) -> Recomputation:
    """Replay the contested taille through the engine with its stakes and its draws' cards as
    found (``[{"stake": id, "rank"|"amount": …}, {"draw": n, "bank"|"players": code}]``) beside
    the taille as recorded: the difference in money, account by account, is the correction.
    Both sides are the engine's reading of the records, as the table's was (``deal_of``)."""
    stakes = {s.pk: s for s in taille.stakes.select_related("holder").order_by("id")}
    amended, draws = _pharao_findings(taille, findings or [], stakes)
    # Decided on the whole taille, as a coup is once settled: while it is dealt, a stake the
    # findings leave standing would be money on the layout the table's records do not hold.
    if taille.phase != TaillePhase.ENDED:
        raise Conflict(
            _("la taille %(number)s n'est pas finie : la contestation se décide à sa fin")
            % {"number": taille.number},
            where="taille",
        )
    recorded_cards = [card(c) for c in pharao.laid_cards(taille)]
    as_recorded = {
        s.pk: engine.Stake(str(s.pk), rank_of(s.rank), s.amount) for s in stakes.values()
    }
    as_found = dict(as_recorded)
    for pk, changes in amended.items():
        try:
            as_found[pk] = engine.Stake(
                str(pk),
                rank_of(changes.get("rank", stakes[pk].rank)),
                changes.get("amount", stakes[pk].amount),
            )
            if not isinstance(as_found[pk].amount, int) or as_found[pk].amount < 1:
                raise InvalidFinding(
                    _("%(amount)r n'est pas un montant positif") % {"amount": as_found[pk].amount},
                    where="findings",
                )
        except GameError as exc:
            raise InvalidFinding(game_message(exc), where="findings") from None
    cards = _cards_as_found(taille, recorded_cards, draws)
    accounts = table_accounts(taille.shift.table)
    recorded, before = _taille_money(taille, recorded_cards, stakes, as_recorded, accounts)
    computed, after = _taille_money(taille, cards, stakes, as_found, accounts)
    after.subtract(before)
    return Recomputation(
        recorded=recorded, computed=computed, corrections=transfers(after), touches_prison=False
    )


class PharaoDisputes(GameDisputes):
    subjects = {"pharao_stake": PharaoStake, "pharao_draw": PharaoDraw}

    def reglement(self, kind: str, record: Any) -> Any:
        return record.taille.reglement  # the version the taille was dealt under

    def seance(self, kind: str, record: Any) -> Any:
        return record.taille.shift

    def about_seances(self, shift_ids: list[int]) -> Q:
        return Q(pharao_stake__taille__shift__in=shift_ids) | Q(
            pharao_draw__taille__shift__in=shift_ids
        )

    def recorders(self, kind: str, record: Any) -> set[int]:
        """For a stake: who placed it, acted on it or approved an act on it; for a draw: who
        opened the taille, laid its cards and settled the draw."""
        if kind == "pharao_stake":
            people = {record.placed_by_id}
            people |= set(record.acts.values_list("by_id", flat=True))
            people |= set(record.approvals.values_list("approved_by_id", flat=True))
            return people
        taille = record.taille
        laid = CardLaid.objects.filter(pack_id=taille.pack_id, taille=taille.pack_taille)
        return {taille.opened_by_id, record.settled_by_id, *laid.values_list("actor_id", flat=True)}

    def accounts(self, kind: str, record: Any, seance: Any) -> Q:
        """The stake's holder (for a draw, every stake's of the taille: its cards as found change
        what each won or lost) and the table's bank, layout and prison."""
        if kind == "pharao_stake":
            holders = {record.holder_id}
        else:
            holders = set(record.taille.stakes.values_list("holder_id", flat=True))
        return Q(pk__in=holders, kind__in=(Account.Kind.PATRON, Account.Kind.SEAT)) | Q(
            table_id=seance.table_id,
            kind__in=(Account.Kind.BANK, Account.Kind.LAYOUT, Account.Kind.PRISON),
        )

    def recompute(self, kind: str, record: Any, findings: list[dict[str, Any]] | None) -> Any:
        # Read afresh: the taille may have ended since the dispute's draw or stake was read.
        return recompute_taille(Taille.objects.get(pk=record.taille_id), findings)

    def finding_rows(self, dispute: Any, data: Any) -> list[Any]:
        from casino.floor.play.pharao.dispute_form import finding_rows

        return finding_rows(dispute, data)


DISPUTES = PharaoDisputes()
