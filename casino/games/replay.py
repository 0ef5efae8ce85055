"""The replay contract (REPLAY.md): a recorded talon and its stakes in, every coup settled out.

Input is checked field by field; the first offending field is named in a ``ReplayError`` (the CLI
prints it as ``{"error": {"code", "message", "where"}}`` with exit status 2).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from casino.games.cards import SIXAIN, Card, card
from casino.games.errors import GameError
from casino.games.reglement import Reglement, reglement
from casino.games.trente_et_quarante import (
    Chance,
    CoupRecord,
    Prisoner,
    RefaitChoice,
    Settlement,
    Stake,
    Taille,
    check_stake,
    play_talon,
)


class ReplayError(GameError):
    """Malformed replay input; ``where`` names the first offending field."""

    code = "invalid"


def _fail(code: str, message: str, where: str) -> ReplayError:
    error = ReplayError(message, where=where or None)  # "" is the document itself
    error.code = code
    return error


def _object(value: Any, where: str, allowed: set[str], required: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail("invalid", "expected an object", where)
    for key in value:
        if key not in allowed:
            raise _fail("unknown_field", f"unknown field {key!r}", f"{where}.{key}".lstrip("."))
    for key in sorted(required):
        if key not in value:
            raise _fail("missing_field", f"missing field {key!r}", f"{where}.{key}".lstrip("."))
    return value


def _integer(value: Any, where: str, *, minimum: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail("invalid", f"{value!r} is not an integer", where)
    if value < minimum:
        raise _fail("invalid", f"{value} is below {minimum}", where)
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail("invalid", f"{value!r} is not a non-empty string", where)
    return value


def _chance(value: Any, where: str) -> Chance:
    try:
        return Chance(value)
    except ValueError:
        raise _fail(
            "invalid", f"{value!r} is not a chance (rouge, noir, couleur, inverse)", where
        ) from None


def _rules(value: Any) -> Reglement:
    try:
        return reglement(value)
    except GameError as exc:
        raise _fail(exc.code, exc.message, exc.where or "reglement") from None


def _cards(value: Any, where: str = "cards") -> list[Card]:
    if not isinstance(value, list):
        raise _fail("invalid", "cards is a list of card codes", where)
    cards = []
    for index, code in enumerate(value):
        try:
            cards.append(card(code))
        except GameError as exc:
            raise _fail(exc.code, exc.message, f"{where}[{index}]") from None
    return cards


def _on_refait(value: Any, where: str) -> RefaitChoice:
    if value in ("prison", "half"):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str) and value.startswith("move:"):
        return ("move", _chance(value.removeprefix("move:"), where))
    raise _fail("invalid", f"{value!r} is not prison, half or move:<chance>", where)


def _stakes(value: Any, rules: Reglement) -> tuple[list[tuple[int, Stake]], dict[str, int]]:
    if not isinstance(value, list):
        raise _fail("invalid", "stakes is a list", "stakes")
    stakes: list[tuple[int, Stake]] = []
    order: dict[str, int] = {}
    for index, raw in enumerate(value):
        where = f"stakes[{index}]"
        fields = _object(
            raw,
            where,
            {"id", "coup", "chance", "amount", "insured", "on_refait"},
            {"id", "coup", "chance", "amount"},
        )
        stake_id = _string(fields["id"], f"{where}.id")
        if stake_id in order:
            raise _fail("invalid", f"stake id {stake_id!r} is used twice", f"{where}.id")
        coup = _integer(fields["coup"], f"{where}.coup", minimum=1)
        amount = _integer(fields["amount"], f"{where}.amount", minimum=1)
        insured = fields.get("insured", False)
        if not isinstance(insured, bool):
            raise _fail("invalid", f"{insured!r} is not true or false", f"{where}.insured")
        on_refait = (
            _on_refait(fields["on_refait"], f"{where}.on_refait") if "on_refait" in fields else None
        )
        stake = Stake(
            stake_id, _chance(fields["chance"], f"{where}.chance"), amount, insured, on_refait
        )
        try:
            check_stake(stake, rules)
        except GameError as exc:
            raise _fail(exc.code, exc.message, f"{where}.{exc.where or 'amount'}") from None
        order[stake_id] = index
        stakes.append((coup, stake))
    return stakes, order


def replay(document: Any) -> dict[str, Any]:
    """Replay one document of REPLAY.md; return the output document."""
    top = _object(
        document, "", {"game", "reglement", "cards", "stakes", "actions"}, {"game", "cards"}
    )
    game = top["game"]
    if game == "pharao":
        raise _fail("unsupported_game", "Pharao replay is not implemented yet", "game")
    if game != "trente-et-quarante":
        raise _fail("invalid", f"{game!r} is not a game (trente-et-quarante, pharao)", "game")
    if "actions" in top:
        raise _fail("unknown_field", "actions belong to Pharao", "actions")
    rules = _rules(top.get("reglement", "baden-1854"))
    cards = _cards(top["cards"])
    try:
        SIXAIN.check_contains(cards)
    except GameError as exc:
        raise _fail(exc.code, exc.message, exc.where or "cards") from None
    stakes, order = _stakes(top.get("stakes", []), rules)
    by_coup: dict[int, list[Stake]] = defaultdict(list)
    for coup, stake in stakes:
        by_coup[coup].append(stake)
    taille = play_talon(cards, by_coup, rules, composition=None)
    dealt = len(taille.coups)
    for index, (coup, stake) in enumerate(stakes):
        if coup > dealt:
            raise _fail(
                "coup_not_dealt",
                f"stake {stake.id} is on coup {coup}, but this talon deals {dealt} coups",
                f"stakes[{index}].coup",
            )
    return render(taille, order, rules)


def settlement_json(s: Settlement) -> dict[str, Any]:
    """A settlement as REPLAY.md writes it."""
    return {
        "stake": s.stake,
        "outcome": s.outcome.value,
        "paid": s.paid,
        "returned": s.returned,
        "to_bank": s.to_bank,
        "premium": s.premium,
        "held": s.held,
        "level": s.level,
    }


def _coup(record: CoupRecord, order: dict[str, int]) -> dict[str, Any]:
    outcome = record.outcome
    announcement = outcome.announcement
    settlements = sorted(record.settlements, key=lambda s: order[s.stake])
    return {
        "number": record.number,
        "noir": {"cards": [str(c) for c in outcome.noir.cards], "total": outcome.noir.total},
        "rouge": {"cards": [str(c) for c in outcome.rouge.cards], "total": outcome.rouge.total},
        "result": outcome.result.value,
        "couleur": outcome.couleur.value if outcome.couleur else None,
        "void": record.void,
        "last": record.last,
        "announcement": {
            "noir": announcement.noir,
            "rouge": announcement.rouge,
            "result": announcement.result,
        },
        "settlements": [settlement_json(s) for s in settlements],
    }


def _prisoner(p: Prisoner) -> dict[str, Any]:
    return {"stake": p.stake, "chance": p.chance.value, "held": p.held, "level": p.level}


def render(taille: Taille, order: dict[str, int], rules: Reglement) -> dict[str, Any]:
    end: dict[str, Any] = {
        "reason": taille.end.reason.value,
        "cards_left": taille.end.cards_left,
        "points_left": taille.end.points_left,
        "prison": [_prisoner(p) for p in sorted(taille.end.prison, key=lambda p: order[p.stake])],
    }
    if rules.prison_at_end == "refund_half":
        end["settlements"] = [
            settlement_json(s) for s in sorted(taille.end.settlements, key=lambda s: order[s.stake])
        ]
    return {"coups": [_coup(c, order) for c in taille.coups], "end": end}
