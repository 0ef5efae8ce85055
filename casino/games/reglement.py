"""The posted règlement as engine parameters (RULES.md, "Règlement parameters" and "Presets").

A règlement is data: the engines read its parameters and never branch on a preset's name. A preset
is a named parameter set; a casino may post its own by overriding parameters, each validated here.

>>> r = reglement("france-2007")
>>> r.refait_mode, r.prison_repeat, r.end_rule, r.cut_card_from_end
('choice', 'halve', 'cut_card', 5)
>>> reglement({"preset": "baden-1854", "overrides": {"max_prison_level": 2}}).max_prison_level
2
>>> Reglement.from_json(r.to_json()) == r
True
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from fractions import Fraction
from typing import Any, Literal

from casino.games.errors import InvalidReglement

RefaitMode = Literal["prison", "half", "choice"]
RefaitDefault = Literal["prison", "half"]
PrisonRepeat = Literal["level", "halve"]
PrisonAtEnd = Literal["carry", "refund_half"]
EndRule = Literal["count", "exhausted", "cut_card"]
PharaoLastCard = Literal["dead", "bank"]

# Pharao's marks (RULES.md §2): mark -> (reached from, move, riding, protected, gain), in units of
# the original stake.
DEFAULT_PHARAO_MARKS: dict[str, tuple[str | None, str | None, int, int, int]] = {
    "simple": (None, None, 1, 0, 1),
    "appe": ("simple", "appe", 1, 1, 2),
    "paroli": ("simple", "paroli", 2, 0, 3),
    "6": ("paroli", "appe", 3, 1, 6),
    "7": ("paroli", "paroli", 4, 0, 7),
    "12": ("6", "appe", 6, 1, 12),
    "14": ("7", "appe", 7, 1, 14),
    "15": ("7", "paroli", 8, 0, 15),
    "24": ("12", "appe", 12, 1, 24),
    "28": ("14", "appe", 14, 1, 28),
    "30": ("15", "appe", 15, 1, 30),
}
DEFAULT_ALLIANCE_VALUES = {"alliance": 2, "forced_lever": 2, "lever": 4, "solo": 4}
DEFAULT_ALLIANCE_HONOURS = {"fahne": 4, "jack": 3, "queen": 2, "king": 1}
DEFAULT_ALLIANCE_BONUSES = {"first_six": 2, "all_tricks": 6, "neutral_win": 4, "tie_penalty": 4}


@dataclass(frozen=True)
class Reglement:
    """Every parameter of RULES.md; defaults are the ``baden-1854`` preset."""

    name: str = "baden-1854"
    face_values: tuple[int, int, int] = (10, 10, 10)  # J, Q, K
    min_stake: int | None = None
    max_stake: int | None = None
    burn: int = 0
    player_may_shuffle: bool = False
    end_min_cards: int = 8
    end_min_points: int = 62
    refait_mode: RefaitMode = "prison"
    refait_default: RefaitDefault = "prison"
    max_prison_level: int = 3
    refait_void_on_last_coup: bool = True
    prison_repeat: PrisonRepeat = "level"
    prison_at_end: PrisonAtEnd = "carry"
    end_rule: EndRule = "count"
    cut_card_from_end: int | None = None
    insurance_min_stake: int = 0
    max_stake_ratio: int | None = None
    no_new_taille_before_close: int = 0
    insurance: bool = False
    insurance_unit: int = 500
    insurance_premium: int = 5
    pharao_last_card: PharaoLastCard = "dead"
    pharao_plie_share: Fraction = Fraction(1, 2)
    pharao_marks: dict[str, tuple[str | None, str | None, int, int, int]] = field(
        default_factory=lambda: dict(DEFAULT_PHARAO_MARKS)
    )
    alliance_values: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_VALUES))
    alliance_honours: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_HONOURS))
    alliance_bonuses: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_BONUSES))
    cercle_fee: int = 0

    def __post_init__(self) -> None:
        _validate(self)

    def __hash__(self) -> int:
        return hash(self.to_json())

    def to_json(self) -> str:
        """The canonical text form: sorted keys, no white space; round-trips with ``from_json``."""
        data = asdict(self)
        data["face_values"] = dict(zip("JQK", self.face_values, strict=True))
        data["pharao_plie_share"] = str(self.pharao_plie_share)
        data["pharao_marks"] = {k: list(v) for k, v in self.pharao_marks.items()}
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Reglement:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise InvalidReglement("a règlement is a JSON object", where="reglement")
        name = data.pop("name", "custom")
        return _build(name, Reglement(), data, where="reglement")


PRESETS: dict[str, dict[str, Any]] = {
    "baden-1854": {},
    "pierer-1857": {"end_rule": "exhausted", "refait_void_on_last_coup": False},
    "trente-et-quarante-modern": {"refait_mode": "choice", "insurance": True},
    "france-2007": {
        "refait_mode": "choice",
        "prison_repeat": "halve",
        "prison_at_end": "refund_half",
        "end_rule": "cut_card",
        "cut_card_from_end": 5,
        "refait_void_on_last_coup": False,
        "insurance": True,
        "insurance_unit": 100,
        "insurance_premium": 1,
        "insurance_min_stake": 1000,
        "max_stake_ratio": 1000,
    },
}

_CHOICES: dict[str, tuple[str, ...]] = {
    "refait_mode": ("prison", "half", "choice"),
    "refait_default": ("prison", "half"),
    "prison_repeat": ("level", "halve"),
    "prison_at_end": ("carry", "refund_half"),
    "end_rule": ("count", "exhausted", "cut_card"),
    "pharao_last_card": ("dead", "bank"),
}
_BOOLS = ("player_may_shuffle", "refait_void_on_last_coup", "insurance")
# name -> (minimum, maximum or None)
_INTS: dict[str, tuple[int, int | None]] = {
    "burn": (0, 10),
    "end_min_cards": (8, None),
    "end_min_points": (62, None),
    "max_prison_level": (1, 10),
    "insurance_min_stake": (0, None),
    "no_new_taille_before_close": (0, None),
    "insurance_unit": (1, None),
    "insurance_premium": (0, None),
    "cercle_fee": (0, None),
}
_OPTIONAL_INTS: dict[str, tuple[int, int | None]] = {
    "min_stake": (1, None),
    "max_stake": (1, None),
    "cut_card_from_end": (1, 52),
    "max_stake_ratio": (1, None),
}


def _fail(name: str, message: str) -> InvalidReglement:
    return InvalidReglement(f"{name}: {message}", where=f"reglement.{name}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(name: str, value: object, low: int, high: int | None) -> None:
    if not _is_int(value):
        raise _fail(name, f"{value!r} is not an integer")
    assert isinstance(value, int)
    if value < low or (high is not None and value > high):
        bound = f"{low}..{high}" if high is not None else f">= {low}"
        raise _fail(name, f"{value} is outside {bound}")


def _validate(r: Reglement) -> None:
    for name, choices in _CHOICES.items():
        if getattr(r, name) not in choices:
            raise _fail(name, f"{getattr(r, name)!r} is not one of {', '.join(choices)}")
    for name in _BOOLS:
        if not isinstance(getattr(r, name), bool):
            raise _fail(name, f"{getattr(r, name)!r} is not true or false")
    for name, (low, high) in _INTS.items():
        _check_int(name, getattr(r, name), low, high)
    for name, (low, high) in _OPTIONAL_INTS.items():
        if getattr(r, name) is not None:
            _check_int(name, getattr(r, name), low, high)
    if len(r.face_values) != 3:
        raise _fail("face_value", "one value for each of J, Q, K")
    for value in r.face_values:
        _check_int("face_value", value, 1, 10)
    if r.min_stake is not None and r.max_stake is not None and r.max_stake < r.min_stake:
        raise _fail("max_stake", f"{r.max_stake} is below min_stake {r.min_stake}")
    if (
        r.max_stake_ratio is not None
        and r.min_stake is not None
        and r.max_stake is not None
        and r.max_stake > r.max_stake_ratio * r.min_stake
    ):
        raise _fail(
            "max_stake",
            f"{r.max_stake} exceeds max_stake_ratio {r.max_stake_ratio} x min_stake {r.min_stake}",
        )
    if r.end_rule == "cut_card" and r.cut_card_from_end is None:
        raise _fail("cut_card_from_end", "the cut-card rule needs a position (1..52)")
    share = r.pharao_plie_share
    if not isinstance(share, Fraction) or not 0 <= share <= 1:
        raise _fail("pharao_plie_share", f"{share!r} is not a fraction between 0 and 1")
    for table in ("alliance_values", "alliance_honours", "alliance_bonuses"):
        for key, value in getattr(r, table).items():
            _check_int(f"{table}.{key}", value, 0, None)


_FIELD_NAMES = {f.name for f in fields(Reglement)} - {"name", "face_values"}


def _convert(name: str, value: Any, base: Reglement) -> Any:
    """An input value (JSON) in the type the dataclass holds."""
    if name == "pharao_plie_share":
        try:
            share = Fraction(value) if isinstance(value, str) else Fraction(*value)
        except (TypeError, ValueError, ZeroDivisionError):
            raise _fail(name, f"{value!r} is not a fraction like '1/2'") from None
        return share
    if name == "pharao_marks":
        if not isinstance(value, dict):
            raise _fail(name, "a table of marks")
        try:
            return {str(k): (v[0], v[1], int(v[2]), int(v[3]), int(v[4])) for k, v in value.items()}
        except (TypeError, ValueError, IndexError):
            raise _fail(name, "each mark is [from, move, riding, protected, gain]") from None
    if name in ("alliance_values", "alliance_honours", "alliance_bonuses"):
        if not isinstance(value, dict):
            raise _fail(name, "a table of integers")
        unknown = set(value) - set(getattr(base, name))
        if unknown:
            raise _fail(f"{name}.{sorted(unknown)[0]}", "unknown entry")
        return {**getattr(base, name), **value}
    return value


def _build(name: str, base: Reglement, overrides: dict[str, Any], *, where: str) -> Reglement:
    """``base`` with ``overrides`` applied and validated; errors point under ``where``."""
    try:
        return replace(base, name=name, **_changes(base, overrides))
    except InvalidReglement as exc:
        inner = (exc.where or "reglement").removeprefix("reglement")
        raise InvalidReglement(exc.message, where=f"{where}{inner}") from None


def _changes(base: Reglement, overrides: dict[str, Any]) -> dict[str, Any]:
    changes: dict[str, Any] = {}
    for key, value in overrides.items():
        if key == "face_value":
            if isinstance(value, dict):
                unknown = set(value) - set("JQK")
                if unknown:
                    raise _fail("face_value", f"{sorted(unknown)[0]!r} is not J, Q or K")
                faces = dict(zip("JQK", base.face_values, strict=True))
                faces.update(value)
                changes["face_values"] = (faces["J"], faces["Q"], faces["K"])
            else:
                changes["face_values"] = (value, value, value)
        elif key == "face_values":
            changes["face_values"] = tuple(value.values()) if isinstance(value, dict) else value
        elif key in _FIELD_NAMES:
            changes[key] = _convert(key, value, base)
        else:
            raise InvalidReglement(f"unknown règlement parameter {key!r}", where=f"reglement.{key}")
    return changes


def reglement(spec: str | dict[str, Any] | Reglement) -> Reglement:
    """A règlement from a preset name, ``{"preset": ..., "overrides": {...}}``, or itself."""
    if isinstance(spec, Reglement):
        return spec
    if isinstance(spec, str):
        return _preset(spec, where="reglement")
    if not isinstance(spec, dict):
        raise InvalidReglement('a preset name or {"preset", "overrides"}', where="reglement")
    unknown = set(spec) - {"preset", "overrides"}
    if unknown:
        raise InvalidReglement(
            f"unknown field {sorted(unknown)[0]!r}", where=f"reglement.{sorted(unknown)[0]}"
        )
    base = _preset(spec.get("preset", "baden-1854"), where="reglement.preset")
    overrides = spec.get("overrides", {})
    if not isinstance(overrides, dict):
        raise InvalidReglement("overrides is an object of parameters", where="reglement.overrides")
    return _build(
        f"{base.name}+overrides" if overrides else base.name,
        base,
        overrides,
        where="reglement.overrides",
    )


def _preset(name: object, *, where: str) -> Reglement:
    if not isinstance(name, str) or name not in PRESETS:
        raise InvalidReglement(
            f"unknown preset {name!r} (one of {', '.join(PRESETS)})", where=where
        )
    return _build(name, Reglement(), PRESETS[name], where=where)
