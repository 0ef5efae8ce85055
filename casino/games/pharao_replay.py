"""The Pharao replay (REPLAY.md, Pharao): a recorded taille, its stakes and acts in, every draw out.

``casino.games.replay`` reads the JSON and hands a document whose ``game`` is ``pharao`` here. The
input is checked field by field in the page's order; the first fault is a ``GameError`` with the
replay's code and ``where`` (the command prints it with exit status 2): unknown top-level field,
missing field, ``game``, ``reglement``, ``cards`` (codes, then a repeated card at its later index,
then the count), ``stakes`` stake by stake (unknown key, missing key, ``id``, ``draw``, ``rank``,
``amount``, repeated id), ``actions`` act by act (unknown key, missing key, ``draw``, ``stake``,
``do``, ``amount``, ``approved_by``).

Readings (REPLAY.md leaves these open; each has a test, the golden ones under
``tests/data/replay/pharao/``):

- The keys every act has (``draw``, ``stake``, ``do``) are the "missing key" step; ``amount`` and
  ``approved_by`` depend on ``do`` and are checked at their own step: ``amount`` is required with
  ``reduce`` and ``raise``, ``approved_by`` with ``withdraw`` and ``reduce`` (``null`` says "no
  approval", and is refused ``not_approved``; an absent key is a bad input, as an absent amount
  is), and either on another act is a bad input.
- ``rank`` that is not a rank code, whatever its JSON type, is ``bad_rank`` (as a card code that
  is not one is ``bad_card``, a number included).
- An act's ``stake`` is a non-empty string; one that names no stake of the document is not an
  input error but the refusal ``unknown_stake`` ("never placed").
"""

from __future__ import annotations

from collections.abc import Container
from typing import Any

from casino.games.cards import RANKS, Card, rank
from casino.games.errors import GameError
from casino.games.pharao import (
    Act,
    Action,
    Draw,
    Stake,
    Taille,
    check_pack,
    play_taille,
    settlement_dict,
)
from casino.games.reglement import Reglement
from casino.games.replay import (
    _codes,
    _fail,
    _from_engine,
    _integer,
    _object,
    _required,
    _rules,
    _string,
)

GAME = "pharao"
FIELDS = ("game", "reglement", "cards", "stakes", "actions")
STAKE_FIELDS = ("id", "draw", "rank", "amount")
ACTION_FIELDS = ("draw", "stake", "do", "amount", "approved_by")
WITH_AMOUNT = (Act.REDUCE, Act.RAISE)
WITH_APPROVAL = (Act.WITHDRAW, Act.REDUCE)
DRAWS = 26


def _cards(value: Any) -> list[Card]:
    if not isinstance(value, list):
        raise _fail("bad_input", "cards is a list of the 52 card codes", "cards")
    cards = _codes(value)
    try:
        check_pack(cards)
    except GameError as exc:
        raise _from_engine("bad_pack", exc, exc.where or "cards") from None
    return cards


def _stake(raw: Any, where: str, taken: Container[str]) -> tuple[int, Stake]:
    """One stake checked field by field, in the page's order: the first fault is named."""
    fields = _object(raw, where, STAKE_FIELDS)
    for key in STAKE_FIELDS:
        _required(fields, key, where)
    stake_id = _string(fields["id"], f"{where}.id")
    draw = _integer(fields["draw"], f"{where}.draw", minimum=1, maximum=DRAWS)
    try:
        on = rank(fields["rank"])
    except GameError as exc:
        raise _from_engine("bad_rank", exc, f"{where}.rank") from None
    amount = _integer(fields["amount"], f"{where}.amount", minimum=1)
    if stake_id in taken:
        raise _fail("bad_input", f"stake id {stake_id!r} is used twice", f"{where}.id")
    return draw, Stake(stake_id, on, amount)


# What ``_stake`` accepts, in a form read at once: a rank by its canonical code.
STAKE_KEYS = frozenset(STAKE_FIELDS)
RANKS_BY_CODE = {r.value: r for r in RANKS}


def _well_formed_stake(raw: Any, taken: Container[str]) -> tuple[int, Stake] | None:
    """The stake of an entry with nothing wrong, checked in one go; None when anything is amiss
    (or merely unusual: a rank in lower case, a type JSON does not make): ``_stake`` then reads
    it field by field and names the first fault."""
    if type(raw) is not dict or raw.keys() != STAKE_KEYS:
        return None
    stake_id, draw, code, amount = raw["id"], raw["draw"], raw["rank"], raw["amount"]
    on = RANKS_BY_CODE.get(code) if type(code) is str else None
    if (
        type(stake_id) is str
        and stake_id
        and type(draw) is int
        and 1 <= draw <= DRAWS
        and on is not None
        and type(amount) is int
        and amount >= 1
        and stake_id not in taken
    ):
        return draw, Stake(stake_id, on, amount)
    return None


def _stakes(value: Any) -> list[tuple[int, Stake]]:
    if not isinstance(value, list):
        raise _fail("bad_input", "stakes is a list", "stakes")
    stakes: list[tuple[int, Stake]] = []
    taken: set[str] = set()
    for index, raw in enumerate(value):
        read = _well_formed_stake(raw, taken) or _stake(raw, f"stakes[{index}]", taken)
        taken.add(read[1].id)
        stakes.append(read)
    return stakes


def _actions(value: Any) -> list[tuple[int, Action]]:
    if not isinstance(value, list):
        raise _fail("bad_input", "actions is a list", "actions")
    actions: list[tuple[int, Action]] = []
    for index, raw in enumerate(value):
        where = f"actions[{index}]"
        fields = _object(raw, where, ACTION_FIELDS)
        for key in ACTION_FIELDS[:3]:
            _required(fields, key, where)
        draw = _integer(fields["draw"], f"{where}.draw", minimum=1, maximum=DRAWS)
        stake_id = _string(fields["stake"], f"{where}.stake")
        try:
            act = Act(fields["do"])
        except ValueError:
            known = ", ".join(a.value for a in Act)
            raise _fail(
                "bad_input", f"{fields['do']!r} is not an act ({known})", f"{where}.do"
            ) from None
        amount: int | None = None
        if act in WITH_AMOUNT:
            amount = _integer(_required(fields, "amount", where), f"{where}.amount", minimum=1)
        elif "amount" in fields:
            raise _fail("bad_input", f"{act.value} takes no amount", f"{where}.amount")
        approved_by: str | None = None
        if act in WITH_APPROVAL:
            approval = _required(fields, "approved_by", where)
            if approval is not None:
                approved_by = _string(approval, f"{where}.approved_by")
        elif "approved_by" in fields:
            raise _fail("bad_input", f"{act.value} takes no approval", f"{where}.approved_by")
        actions.append((draw, Action(stake_id, act, amount, approved_by)))
    return actions


def replay_pharao(document: Any) -> dict[str, Any]:
    """Replay one (parsed) Pharao document of REPLAY.md; return the output document."""
    return render(taille_of(document)[0])


def taille_of(document: Any) -> tuple[Taille, Reglement]:
    """The taille a (parsed) Pharao document of REPLAY.md plays, and its règlement."""
    top = _object(document, "", FIELDS)
    for key in ("game", "cards"):
        _required(top, key, "")
    if top["game"] != GAME:
        raise _fail("bad_input", f"{top['game']!r} is not {GAME}", "game")
    rules = _rules(top.get("reglement", "baden-1854"))
    cards = _cards(top["cards"])
    stakes = _stakes(top.get("stakes", []))
    actions = _actions(top.get("actions", []))
    return play_taille(cards, stakes, actions, rules), rules


def _draw(d: Draw) -> dict[str, Any]:
    return {
        "number": d.number,
        "bank": str(d.bank),
        "players": str(d.players),
        "plie": d.plie,
        "settlements": [settlement_dict(s) for s in d.settlements],
    }


def render(taille: Taille) -> dict[str, Any]:
    """The output document of REPLAY.md, Pharao."""
    return {
        "bottom_card": str(taille.bottom_card),
        "draws": [_draw(d) for d in taille.draws],
        "refused": [
            {
                "draw": r.draw,
                "stake": r.stake,
                "do": r.do if isinstance(r.do, str) else r.do.value,
                "reason": r.reason,
            }
            for r in taille.refused
        ],
        "end": {"settlements": [settlement_dict(s) for s in taille.end]},
    }
