"""The replay contract (REPLAY.md): a recorded talon and its stakes in, every coup settled out.

A document whose ``game`` is ``pharao`` is Pharao's (``casino.games.pharao_replay``), one whose
``game`` is ``alliance`` Alliance's (``casino.games.alliance_replay``), with the same vocabulary and
the same helpers; what follows is Trente-et-Quarante's.

Input is checked field by field in the page's order and the first fault is named in a
``GameError`` whose ``code`` is one of the replay's vocabulary (the CLI prints it as
``{"error": {"code", "message", "where"}}`` with exit status 2):

- ``bad_json``: not JSON, or a key repeated in one object;
- ``unknown_field``: a key the contract does not know (a typo is never ignored);
- ``bad_input``: not an object, a missing field, a wrong type, shape or range (floats, even
  ``100.0``, and booleans are not integers), a repeated stake id, a stake on a coup the talon
  never reaches, a game whose replay this version does not have;
- ``bad_reglement``: anything wrong inside ``reglement``;
- ``bad_card``: a card code that is not rank + suit; ``bad_pack``: a seventh copy of a card;
- ``bad_stake``: a stake outside the limits, or insured where the règlement does not allow it.

The order: unknown top-level fields, then ``game``, ``reglement``, ``cards`` (codes, then copies),
``prison``, ``stakes``; inside an object its unknown keys first, then its fields in the page's order.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Container, Sequence
from itertools import pairwise
from operator import attrgetter
from typing import Any, NamedTuple, TypeVar

from casino.games.cards import SIXAIN, Card, card, cards_of_codes
from casino.games.errors import GameError
from casino.games.reglement import Reglement, reglement
from casino.games.trente_et_quarante import (
    Chance,
    Couleur,
    CoupRecord,
    Outcome,
    Prisoner,
    RefaitChoice,
    Result,
    Settlement,
    Stake,
    Taille,
    check_stake,
    deal_talon,
    settle_talon,
)

GAME = "trente-et-quarante"
FIELDS = ("game", "reglement", "cards", "prison", "stakes")
PHARAO = "pharao"
ALLIANCE = "alliance"
STAKE_FIELDS = ("id", "coup", "chance", "amount", "insured", "on_refait")
PRISONER_FIELDS = ("stake", "chance", "held", "level")


class ReplayError(GameError):
    """Malformed replay input; ``where`` names the first offending field."""

    code = "bad_input"


def _fail(code: str, message: str, where: str | None) -> ReplayError:
    error = ReplayError(message, where=where or None)  # "" is the document itself
    error.code = code
    return error


def _from_engine(code: str, exc: GameError, where: str | None) -> ReplayError:
    """An engine's refusal under the replay's code, its words kept (shown in English)."""
    error = ReplayError(exc.template, where=where or None, **exc.params)
    error.code = code
    return error


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


# --- reading the text ---------------------------------------------------------------------------


class _Repeated(dict[str, Any]):
    """An object in which a key came twice (JSON allows it, the contract does not)."""

    key: str = ""


def _repeated(pairs: list[tuple[str, Any]]) -> _Repeated:
    """The object of ``pairs``, in which a key came twice, marked with the first such key."""
    repeated = _Repeated(pairs)
    seen = set()
    for key, _ in pairs:
        if key in seen:
            repeated.key = key
            break
        seen.add(key)
    return repeated


def _repeated_key(value: Any, where: str = "") -> str | None:
    """Where the first repeated key is (the outer object before the ones inside it)."""
    if isinstance(value, _Repeated):
        return _at(where, value.key)
    if isinstance(value, dict):
        items = [(_at(where, k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(f"{where}[{i}]", v) for i, v in enumerate(value)]
    else:
        return None
    for inner, v in items:
        found = _repeated_key(v, inner)
        if found is not None:
            return found
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def parse(text: str | bytes) -> Any:
    """The JSON document of ``text``; ``bad_json`` when it is not JSON or repeats a key."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _fail("bad_json", f"not UTF-8 text: {exc.reason}", None) from None
    marked: list[_Repeated] = []  # only a document holding a repeated key is walked for it

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        found = dict(items)
        if len(found) < len(items):  # a key came twice
            found = _repeated(items)
            marked.append(found)
        return found

    try:
        document = json.loads(text, object_pairs_hook=pairs, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise _fail("bad_json", exc.msg, f"line {exc.lineno} column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise _fail("bad_json", str(exc) or type(exc).__name__, None) from None
    where = _repeated_key(document) if marked else None
    if where is not None:
        raise _fail("bad_json", f"the key {where.rsplit('.', 1)[-1]!r} is repeated", where)
    return document


def replay_text(text: str | bytes) -> dict[str, Any]:
    """``python -m casino.games replay``: the JSON text in, the output document out."""
    return replay(parse(text))


# --- checking the document ----------------------------------------------------------------------


def _object(value: Any, where: str, known: tuple[str, ...]) -> dict[str, Any]:
    """An object whose keys are all known (unknown keys are the first fault inside it)."""
    if not isinstance(value, dict):
        raise _fail("bad_input", f"{value!r} is not an object", where)
    for key in value:
        if key not in known:
            raise _fail("unknown_field", f"unknown field {key!r}", _at(where, key))
    return value


def _required(fields: dict[str, Any], key: str, where: str) -> Any:
    if key not in fields:
        raise _fail("bad_input", f"missing field {key!r}", _at(where, key))
    return fields[key]


def _integer(value: Any, where: str, *, minimum: int, maximum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise _fail("bad_input", f"{value!r} is not an integer", where)
    if value < minimum or (maximum is not None and value > maximum):
        bound = f"{minimum}..{maximum}" if maximum is not None else f">= {minimum}"
        raise _fail("bad_input", f"{value} is outside {bound}", where)
    return value


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail("bad_input", f"{value!r} is not a non-empty string", where)
    return value


# A chance by its word: a dict lookup, where ``Chance(value)`` is three Python calls a stake.
CHANCES = {c.value: c for c in Chance}


def _chance(value: Any, where: str) -> Chance:
    chance = CHANCES.get(value) if isinstance(value, str) else None
    if chance is None:
        raise _fail(
            "bad_input", f"{value!r} is not a chance (rouge, noir, couleur, inverse)", where
        )
    return chance


def _game(top: dict[str, Any]) -> None:
    game = _required(top, "game", "")
    if game != GAME:
        raise _fail("bad_input", f"{game!r} is not a game ({GAME}, pharao, alliance)", "game")


def _rules(value: Any) -> Reglement:
    try:
        return reglement(value)
    except GameError as exc:
        raise _from_engine("bad_reglement", exc, exc.where or "reglement") from None


def _card(value: Any, where: str) -> Card:
    try:
        return card(value)
    except GameError as exc:
        raise _from_engine("bad_card", exc, where) from None


def _codes(value: list[Any]) -> list[Card]:
    """The cards of the codes of ``cards``: looked up at once, or read one by one to name the
    first that is not a card (``bad_card``)."""
    cards = cards_of_codes(value)
    if cards is None:  # a code written otherwise (10H, ks), or not a code
        cards = [_card(code, f"cards[{index}]") for index, code in enumerate(value)]
    return cards


def _cards(value: Any) -> list[Card]:
    """Codes first (``bad_card``), then a seventh copy of a card at its index (``bad_pack``)."""
    if not isinstance(value, list):
        raise _fail("bad_input", "cards is a list of card codes", "cards")
    cards = _codes(value)
    try:
        SIXAIN.check_contains(cards)
    except GameError as exc:
        raise _from_engine("bad_pack", exc, exc.where or "cards") from None
    return cards


def _prison(value: Any, rules: Reglement) -> list[Prisoner]:
    """Stakes carried in imprisoned, each as the previous talon's ``end.prison`` listed it."""
    if not isinstance(value, list):
        raise _fail("bad_input", "prison is a list of {stake, chance, held, level}", "prison")
    top_level = 1 if rules.prison_repeat == "halve" else rules.max_prison_level
    prisoners: list[Prisoner] = []
    for index, raw in enumerate(value):
        where = f"prison[{index}]"
        fields = _object(raw, where, PRISONER_FIELDS)
        stake_id = _string(_required(fields, "stake", where), f"{where}.stake")
        if any(p.stake == stake_id for p in prisoners):
            raise _fail("bad_input", f"stake id {stake_id!r} is used twice", f"{where}.stake")
        chance = _chance(_required(fields, "chance", where), f"{where}.chance")
        held = _integer(_required(fields, "held", where), f"{where}.held", minimum=1)
        level = _integer(
            _required(fields, "level", where), f"{where}.level", minimum=1, maximum=top_level
        )
        prisoners.append(Prisoner(stake_id, chance, held, level))
    return prisoners


def _on_refait(value: Any, where: str) -> RefaitChoice:
    if value in ("prison", "half"):
        return value  # type: ignore[no-any-return]
    if isinstance(value, str) and value.startswith("move:"):
        return ("move", _chance(value.removeprefix("move:"), where))
    raise _fail("bad_input", f"{value!r} is not prison, half or move:<chance>", where)


def _stake(
    raw: Any, where: str, rules: Reglement, reached: int, taken: Container[str]
) -> tuple[int, Stake]:
    """One stake checked field by field, in the page's order: the first fault is named."""
    fields = _object(raw, where, STAKE_FIELDS)
    stake_id = _string(_required(fields, "id", where), f"{where}.id")
    if stake_id in taken:
        raise _fail("bad_input", f"stake id {stake_id!r} is used twice", f"{where}.id")
    coup = _integer(_required(fields, "coup", where), f"{where}.coup", minimum=1)
    if coup > reached:
        raise _fail(
            "bad_input",
            f"stake {stake_id} is on coup {coup}, but this talon reaches {reached} coups",
            f"{where}.coup",
        )
    chance = _chance(_required(fields, "chance", where), f"{where}.chance")
    amount = _integer(_required(fields, "amount", where), f"{where}.amount", minimum=1)
    insured = fields.get("insured", False)
    if not isinstance(insured, bool):
        raise _fail("bad_input", f"{insured!r} is not true or false", f"{where}.insured")
    on_refait = (
        _on_refait(fields["on_refait"], f"{where}.on_refait") if "on_refait" in fields else None
    )
    stake = Stake(stake_id, chance, amount, insured, on_refait)
    try:
        check_stake(stake, rules)
    except GameError as exc:
        raise _from_engine("bad_stake", exc, f"{where}.{exc.where or 'amount'}") from None
    return coup, stake


# What ``_stake`` accepts, in a form read at once.
STAKE_KEYS = frozenset(STAKE_FIELDS)
REFAIT_CHOICES: dict[str, RefaitChoice] = {
    "prison": "prison",
    "half": "half",
    **{f"move:{c.value}": ("move", c) for c in Chance},
}


class _Accepts(NamedTuple):
    """The amounts a règlement accepts on a stake (``check_stake``), worked out once a document."""

    lowest: int
    highest: int | None
    insured_from: int | None  # None: no insurance

    @classmethod
    def of(cls, rules: Reglement) -> _Accepts:
        return cls(
            max(1, rules.min_stake or 1),
            rules.max_stake,
            rules.insurance_min_stake if rules.insurance else None,
        )


def _well_formed_stake(
    raw: Any, accepts: _Accepts, reached: int, taken: Container[str]
) -> tuple[int, Stake] | None:
    """The stake of an entry with nothing wrong, checked in one go; None when anything is amiss
    (or merely unusual, a type JSON does not make): ``_stake`` then reads it field by field and
    names the first fault. A sixain holds hundreds of stakes: this is most of the replay's check.
    """
    if type(raw) is not dict or not STAKE_KEYS.issuperset(raw):
        return None
    stake_id, coup = raw.get("id"), raw.get("coup")
    chance, amount = raw.get("chance"), raw.get("amount")
    insured, on_refait = raw.get("insured", False), raw.get("on_refait")
    choice = REFAIT_CHOICES.get(on_refait) if type(on_refait) is str else None
    if (
        type(stake_id) is str
        and stake_id
        and stake_id not in taken
        and type(coup) is int
        and 1 <= coup <= reached
        and type(chance) is str
        and chance in CHANCES
        and type(amount) is int
        and accepts.lowest <= amount
        and (accepts.highest is None or amount <= accepts.highest)
        and type(insured) is bool
        and (not insured or (accepts.insured_from is not None and amount >= accepts.insured_from))
        and (choice is not None or "on_refait" not in raw)
    ):
        return coup, Stake(stake_id, CHANCES[chance], amount, insured, choice)
    return None


def _stakes(
    value: Any, rules: Reglement, reached: int, given: dict[str, int]
) -> dict[int, list[Stake]]:
    """The stakes by coup, each coup's in the order given. ``given`` holds the ids taken before
    (the carried prisoners'); each stake's id is added to it, with its coup."""
    if not isinstance(value, list):
        raise _fail("bad_input", "stakes is a list", "stakes")
    accepts = _Accepts.of(rules)
    by_coup: dict[int, list[Stake]] = defaultdict(list)
    for index, raw in enumerate(value):
        coup, stake = _well_formed_stake(raw, accepts, reached, given) or _stake(
            raw, f"stakes[{index}]", rules, reached, given
        )
        given[stake.id] = coup
        by_coup[coup].append(stake)
    return by_coup


def replay(document: Any) -> dict[str, Any]:
    """Replay one (parsed) document of REPLAY.md; return the output document."""
    if isinstance(document, dict) and document.get("game") == PHARAO:
        from casino.games.pharao_replay import replay_pharao  # it builds on this module's helpers

        return replay_pharao(document)
    if isinstance(document, dict) and document.get("game") == ALLIANCE:
        from casino.games.alliance_replay import replay_alliance

        return replay_alliance(document)
    top = _object(document, "", FIELDS)
    _game(top)
    rules = _rules(top.get("reglement", "baden-1854"))
    cards = _cards(_required(top, "cards", ""))
    prison = _prison(top.get("prison", []), rules)
    # The cards are dealt once: how many coups they reach bounds the stakes, which are then settled
    # on those same coups (stakes change neither).
    dealt = deal_talon(cards, rules, composition=None)
    # Every stake id in the order given, with its coup (0: a carried prisoner).
    given = dict.fromkeys((p.stake for p in prison), 0)
    by_coup = _stakes(top.get("stakes", []), rules, len(dealt.coups), given)
    taille = settle_talon(dealt, by_coup, rules, prison=prison, checked=True)
    return render(taille, _order(given))


def _order(given: dict[str, int]) -> dict[str, int] | None:
    """The rank of each stake in the output's lists: carried prisoners first, then the stakes,
    each in the order ``given``. ``None`` when the stakes are given coup by coup, as every recorded
    talon lists them: the engine's records then list them so already (each coup its prisoners,
    in the order they went in, then its own stakes), and nothing is sorted."""
    if all(earlier <= later for earlier, later in pairwise(given.values())):
        return None
    return {stake_id: rank for rank, stake_id in enumerate(given)}


# --- the output ---------------------------------------------------------------------------------

# The words of the engine's values, looked up by identity: ``member.value`` is a Python-level
# property (80 ns), and the replay writes one a settlement.
OUTCOMES: dict[Outcome, str] = {o: o.value for o in Outcome}
RESULTS: dict[Result, str] = {r: r.value for r in Result}
COULEURS: dict[Couleur | None, str | None] = {None: None, **{c: c.value for c in Couleur}}
_code = attrgetter("code")  # a card's code, fetched in C

_Record = TypeVar("_Record", Settlement, Prisoner)


def _in_order(records: tuple[_Record, ...], order: dict[str, int] | None) -> Sequence[_Record]:
    """``records`` in the order the stakes were given (``None``: they already are)."""
    return records if order is None else sorted(records, key=lambda r: order[r.stake])


def settlement_json(s: Settlement) -> dict[str, Any]:
    """A settlement as REPLAY.md writes it."""
    return {
        "stake": s.stake,
        "outcome": OUTCOMES[s.outcome],
        "paid": s.paid,
        "returned": s.returned,
        "to_bank": s.to_bank,
        "premium": s.premium,
        "held": s.held,
        "level": s.level,
    }


def _coup(record: CoupRecord, order: dict[str, int] | None) -> dict[str, Any]:
    outcome = record.outcome
    announcement = outcome.announcement
    return {
        "number": record.number,
        "noir": {"cards": list(map(_code, outcome.noir.cards)), "total": outcome.noir.total},
        "rouge": {"cards": list(map(_code, outcome.rouge.cards)), "total": outcome.rouge.total},
        "result": RESULTS[outcome.result],
        "couleur": COULEURS[outcome.couleur],
        "void": record.void,
        "last": record.last,
        "announcement": {
            "noir": announcement.noir,
            "rouge": announcement.rouge,
            "result": announcement.result,
        },
        "settlements": list(map(settlement_json, _in_order(record.settlements, order))),
    }


def _prisoner(p: Prisoner) -> dict[str, Any]:
    return {"stake": p.stake, "chance": p.chance.value, "held": p.held, "level": p.level}


def render(taille: Taille, order: dict[str, int] | None) -> dict[str, Any]:
    """The output document; ``end.settlements`` is always there (empty unless refunds).
    ``order`` ranks the stakes as they were given (``None``: the engine's records already
    list them so)."""
    end: dict[str, Any] = {
        "reason": taille.end.reason.value,
        "cards_left": taille.end.cards_left,
        "points_left": taille.end.points_left,
        "prison": [_prisoner(p) for p in _in_order(taille.end.prison, order)],
        "settlements": [settlement_json(s) for s in _in_order(taille.end.settlements, order)],
    }
    return {"coups": [_coup(c, order) for c in taille.coups], "end": end}
