"""What the règlement says a contested coup should have paid, beside what was recorded.

The coup is replayed through the engine from its recorded cards, the prison as it stood before it,
and its stakes as the decider found them (a stake recorded on the wrong chance, say). Both the
recorded and the computed settlements are turned into movements by the same function as at the
table, so the difference between them is exactly what the rule says is owed.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext as _

from casino.errors import Conflict, DomainError
from casino.floor.coups import (
    deal_of,
    engine_settle,
    engine_stake,
    rules_of,
    settlement_entries,
    table_prison,
)
from casino.floor.models import Account, Coup, CoupResult, Stake
from casino.floor.play.pharao import tailles as pharao
from casino.floor.play.pharao.models import PharaoStake, PharaoStakeAct, Taille, TaillePhase
from casino.floor.services import table_accounts
from casino.games import pharao as engine
from casino.games.cards import Card, card
from casino.games.cards import rank as rank_of
from casino.games.errors import GameError, PharaoRefusal
from casino.games.pharao import settlement_dict
from casino.games.replay import settlement_json
from casino.games.trente_et_quarante import Outcome, check_stake
from casino.games.trente_et_quarante import Settlement as EngineSettlement
from casino.i18n import game_message

AMENDABLE = {"chance", "amount", "insured", "on_refait"}


class InvalidFinding(DomainError):
    """A finding of fact the recomputation cannot use."""

    code = "invalid_finding"


@dataclass(frozen=True)
class Recomputation:
    recorded: list[dict[str, Any]]
    computed: list[dict[str, Any]]
    corrections: list[tuple[str, str, int]]  # (from account code, to account code, amount)
    touches_prison: bool

    def as_json(self) -> dict[str, Any]:
        return {
            "recorded": self.recorded,
            "computed": self.computed,
            "corrections": [list(c) for c in self.corrections],
            "touches_prison": self.touches_prison,
        }


def _row(s: EngineSettlement, coup: Coup) -> dict[str, Any]:
    """As the API writes a settlement: the stake and the coup each by its reference."""
    return {**settlement_json(s), "stake": int(s.stake), "coup": coup.pk}


def _findings(
    coup: Coup, findings: list[dict[str, Any]], stakes: set[int]
) -> dict[int, tuple[int, dict[str, Any]]]:
    """The findings by stake: (its index in ``findings``, the fields it corrects)."""
    if not isinstance(findings, list):
        raise InvalidFinding(_("les constats sont une liste de {stake, …}"), where="findings")
    amended: dict[int, tuple[int, dict[str, Any]]] = {}
    for index, finding in enumerate(findings):
        where = f"findings[{index}]"
        if not isinstance(finding, dict):
            raise InvalidFinding(_("un constat est un objet {stake, …}"), where=where)
        changes = {k: v for k, v in finding.items() if k != "stake"}
        stake = finding.get("stake")
        if stake not in stakes or isinstance(stake, bool):
            raise InvalidFinding(
                _("le coup %(number)s n'a pas de mise %(ref)r")
                % {"number": coup.number, "ref": stake},
                where=f"{where}.stake",
            )
        if stake in amended:
            raise InvalidFinding(
                _("la mise %(stake)s est constatée deux fois") % {"stake": stake},
                where=f"{where}.stake",
            )
        if not changes or set(changes) - AMENDABLE:
            raise InvalidFinding(
                _("un constat corrige %(fields)s") % {"fields": sorted(AMENDABLE)}, where=where
            )
        amended[stake] = (index, changes)
    return amended


def transfers(net: Counter[str]) -> list[tuple[str, str, int]]:
    """Balanced net changes per account as plain transfers, largest amounts first."""
    give = sorted(([-v, a] for a, v in net.items() if v < 0), reverse=True)
    take = sorted(([v, a] for a, v in net.items() if v > 0), reverse=True)
    moves = []
    while give and take:
        amount = min(give[0][0], take[0][0])
        moves.append((str(give[0][1]), str(take[0][1]), int(amount)))
        for side in (give, take):
            side[0][0] -= amount
            if side[0][0] == 0:
                side.pop(0)
    return moves


def recompute(coup: Coup, findings: list[dict[str, Any]] | None = None) -> Recomputation:
    """Replay ``coup`` with its stakes as found: ``[{"stake": id, "chance"|"amount"|"insured"|
    "on_refait": …}]``, each stake named by its reference."""
    result = CoupResult.objects.filter(coup=coup).first()
    if result is None:
        raise Conflict(
            _("le coup %(number)s n'est pas encore réglé") % {"number": coup.number}, where="coup"
        )
    rules = rules_of(coup)
    stakes = list(coup.stakes.filter(withdrawal__isnull=True).select_related("holder"))
    amended = _findings(coup, findings or [], {s.pk for s in stakes})
    net: Counter[str] = Counter()
    engine_stakes = []
    for stake in stakes:
        try:
            index, changes = amended.get(stake.pk, (None, {}))
            found = engine_stake(stake, **changes)
            check_stake(found, rules)
        except (GameError, ValueError, DomainError) as exc:
            if isinstance(exc, GameError):
                message = game_message(exc)
            elif isinstance(exc, DomainError):
                message = exc.message
            else:  # an unknown chance (Chance(...)): the finding names it
                message = _("%(chance)r n'est pas rouge, noir, couleur ou inverse") % {
                    "chance": changes.get("chance")
                }
            where = "findings" if index is None else f"findings[{index}]"
            raise InvalidFinding(message, where=where) from None
        engine_stakes.append(found)
        if found.amount != stake.amount:  # the placement itself was recorded wrong
            net[stake.holder.code] -= found.amount - stake.amount
            net[f"T{coup.shift.table.number}:{Account.Kind.LAYOUT}"] += found.amount - stake.amount
    computed, _prison = engine_settle(
        deal_of(coup, rules).outcome(),
        rules,
        void=result.void,
        last=result.last,
        stakes=engine_stakes,
        prison=table_prison(coup.shift, before=result),
    )
    recorded = [
        EngineSettlement(
            str(s.stake_id),
            Outcome(s.outcome),
            s.paid,
            s.returned,
            s.to_bank,
            s.premium,
            s.held,
            s.level,
        )
        for s in coup.settlements.order_by("id")
    ]
    involved = {int(s.stake) for s in [*computed, *recorded]}
    by_pk: dict[int, Stake] = {
        s.pk: s for s in Stake.objects.select_related("holder").filter(pk__in=involved)
    }
    accounts = table_accounts(coup.shift.table)
    for sign, settlements in ((1, computed), (-1, recorded)):
        for s in settlements:
            collect, pay = settlement_entries(coup, s, by_pk[int(s.stake)], accounts)
            for entry in (*collect, *pay):
                net[entry.debit.code] += sign * entry.amount
                net[entry.credit.code] -= sign * entry.amount
    prison = accounts[Account.Kind.PRISON].code
    return Recomputation(
        recorded=[_row(s, coup) for s in recorded],
        computed=[_row(s, coup) for s in computed],
        corrections=transfers(net),
        touches_prison=bool(net[prison]),
    )


# --- Pharao ---------------------------------------------------------------------------------------

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
