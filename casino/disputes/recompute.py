"""What the règlement says a contested round should have paid, beside what was recorded: what
every game's recomputation shares (``Recomputation``, the findings' refusals, ``transfers``) and
Trente-et-Quarante's coups; each other game replays its rounds in its package's ``disputes`` part
(``games.py``).

The coup is replayed through the engine from its recorded cards, the prison as it stood before it,
and its stakes as the decider found them (a stake recorded on the wrong chance, say). Both the
recorded and the computed settlements are turned into movements by the same function as at the
table, so the difference between them is exactly what the rule says is owed.
"""

from __future__ import annotations

from collections import Counter
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
from casino.floor.services import table_accounts
from casino.games.errors import GameError
from casino.games.replay import settlement_json
from casino.games.trente_et_quarante import Outcome, check_stake
from casino.games.trente_et_quarante import Settlement as EngineSettlement
from casino.i18n import game_message

AMENDABLE = {"chance", "amount", "insured", "on_refait"}


class InvalidFinding(DomainError):
    """A finding of fact the recomputation cannot use."""

    code = "invalid_finding"


class RefusedAsFound(InvalidFinding):
    """The round as found breaks the game's rules (a card not in the player's hand, a call too
    low): refused under the engine's own code, ``where`` naming the place in the round as found
    as the replay names it (``tricks[3][1]``, ``auction[2]``, ``contract.called``)."""

    def __init__(self, exc: GameError) -> None:
        super().__init__(
            _("telle que constatée, la partie est refusée par la règle (%(where)s) : %(rule)s")
            % {"where": exc.where or "-", "rule": game_message(exc)},
            where=exc.where,
        )
        self.code = exc.code


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
