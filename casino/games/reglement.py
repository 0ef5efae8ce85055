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

import functools
import json
import re
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from casino.games.errors import InvalidReglement, gettext_noop

RefaitMode = Literal["prison", "half", "choice"]
RefaitDefault = Literal["prison", "half"]
PrisonRepeat = Literal["level", "halve"]
PrisonAtEnd = Literal["carry", "refund_half"]
EndRule = Literal["count", "exhausted", "cut_card"]
PharaoLastCard = Literal["dead", "bank"]

# Pharao's marks (RULES.md §2): mark -> (reached from, move, riding, protected, gain), in units of
# the original stake.
MarkRow = tuple[str | None, str | None, int, int, int]
DEFAULT_PHARAO_MARKS: dict[str, MarkRow] = {
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
DEFAULT_ALLIANCE_VALUES = {"alliance": 2, "lever_forced": 2, "lever": 4, "solo": 4}
DEFAULT_ALLIANCE_HONOURS = {"fahne": 4, "J": 3, "Q": 2, "K": 1}
DEFAULT_ALLIANCE_BONUSES = {"first_six": 2, "all": 6, "neutral": 4, "both_lose": 4}


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
    pharao_marks: dict[str, MarkRow] = field(default_factory=lambda: dict(DEFAULT_PHARAO_MARKS))
    alliance_values: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_VALUES))
    alliance_honours: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_HONOURS))
    alliance_bonuses: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_ALLIANCE_BONUSES))
    cercle_fee: int = 0

    def __post_init__(self) -> None:
        _validate(self)

    def __hash__(self) -> int:
        return hash(self.to_json())

    def to_json(self) -> str:
        """The canonical text form: RULES.md's parameter names and formats (sorted keys, no white
        space); ``Reglement.from_json(r.to_json()) == r`` for every parameter."""
        data: dict[str, Any] = {"name": self.name}
        for name in PARAMETERS:
            data[name] = _dump(name, getattr(self, _attribute(name)))
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Reglement:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise InvalidReglement(
                gettext_noop("un règlement est un objet JSON"), where="reglement"
            )
        name = data.pop("name", "custom")
        if not isinstance(name, str):
            raise InvalidReglement(
                gettext_noop("le nom %(name)r n'est pas un texte"),
                where="reglement.name",
                name=name,
            )
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

# Every parameter of RULES.md ("Règlement parameters"), in the table's order: the order in which
# overrides are checked, so that the first fault named is the same for every reader.
PARAMETERS: tuple[str, ...] = (
    "face_value",
    "min_stake",
    "max_stake",
    "burn",
    "player_may_shuffle",
    "end_min_cards",
    "end_min_points",
    "refait_mode",
    "refait_default",
    "max_prison_level",
    "refait_void_on_last_coup",
    "prison_repeat",
    "prison_at_end",
    "end_rule",
    "cut_card_from_end",
    "insurance_min_stake",
    "max_stake_ratio",
    "no_new_taille_before_close",
    "insurance",
    "insurance_unit",
    "insurance_premium",
    "pharao_last_card",
    "pharao_plie_share",
    "pharao_marks",
    "alliance_values",
    "alliance_honours",
    "alliance_bonuses",
    "cercle_fee",
)

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
# May be null (not set): the limits are the table's, a ratio constrains them only when posted.
_OPTIONAL_INTS: dict[str, tuple[int, int | None]] = {
    "min_stake": (1, None),
    "max_stake": (1, None),
    "cut_card_from_end": (1, 52),
    "max_stake_ratio": (1, None),
}
_TABLES: dict[str, dict[str, int]] = {
    "alliance_values": DEFAULT_ALLIANCE_VALUES,
    "alliance_honours": DEFAULT_ALLIANCE_HONOURS,
    "alliance_bonuses": DEFAULT_ALLIANCE_BONUSES,
}
_MARK_KEYS = ("mark", "from", "move", "riding", "protected", "gain")
_SHARE = re.compile(r"(0|1|[0-9]+/[0-9]+)")


def _attribute(name: str) -> str:
    """The dataclass field holding the RULES.md parameter ``name``."""
    return "face_values" if name == "face_value" else name


def _fail(name: str, template: str, **params: object) -> InvalidReglement:
    """The parameter ``name`` refused: ``template`` begins with it (``%(name)s``)."""
    return InvalidReglement(template, where=f"reglement.{name}", name=name, **params)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(name: str, value: object, low: int, high: int | None) -> int:
    if not _is_int(value):
        raise _fail(name, gettext_noop("%(name)s : %(value)r n'est pas un entier"), value=value)
    assert isinstance(value, int)
    if high is not None and not low <= value <= high:
        raise _fail(
            name,
            gettext_noop("%(name)s : %(value)s est hors de %(low)s..%(high)s"),
            value=value,
            low=low,
            high=high,
        )
    if value < low:
        raise _fail(
            name, gettext_noop("%(name)s : %(value)s n'est pas >= %(low)s"), value=value, low=low
        )
    return value


def _check_keys(
    name: str, value: object, known: tuple[str, ...], not_an_object: str
) -> dict[str, Any]:
    """An object whose keys are all ``known``; ``not_an_object``: the message when it is none."""
    if not isinstance(value, dict):
        raise _fail(name, not_an_object, value=value)
    for key in value:
        if key not in known:
            raise _fail(
                f"{name}.{key}",
                gettext_noop("%(name)s : entrée inconnue %(key)r (parmi %(known)s)"),
                key=key,
                known=", ".join(known),
            )
    return value


def _face_values(value: object) -> tuple[int, int, int]:
    """An integer for J, Q and K alike, or an object naming some of them (the others count 10)."""
    if isinstance(value, dict):
        faces = _check_keys(
            "face_value",
            value,
            ("J", "Q", "K"),
            gettext_noop("%(name)s : %(value)r n'est pas un objet (J, Q, K)"),
        )
        return (
            _check_int("face_value.J", faces.get("J", 10), 1, 10),
            _check_int("face_value.Q", faces.get("Q", 10), 1, 10),
            _check_int("face_value.K", faces.get("K", 10), 1, 10),
        )
    same = _check_int("face_value", value, 1, 10)
    return (same, same, same)


def _plie_share(value: object) -> Fraction:
    name = "pharao_plie_share"
    if not isinstance(value, str) or not _SHARE.fullmatch(value):
        raise _fail(
            name,
            gettext_noop("%(name)s : %(value)r n'est pas une fraction comme '1/2' (ou '0', '1')"),
            value=value,
        )
    p, _, q = value.partition("/")
    if q and (int(q) == 0 or int(p) > int(q)):
        raise _fail(
            name,
            gettext_noop("%(name)s : %(value)r n'est pas une fraction entre 0 et 1"),
            value=value,
        )
    return Fraction(int(p), int(q or 1))


def _marks(value: object) -> dict[str, MarkRow]:
    """RULES.md's rows ``{"mark", "from", "move", "riding", "protected"}`` (optional ``gain``),
    replacing the whole table; held as mark -> (from, move, riding, protected, gain)."""
    name = "pharao_marks"
    if not isinstance(value, list):
        raise _fail(
            name,
            gettext_noop("%(name)s : une liste de rangées {mark, from, move, riding, protected}"),
        )
    marks: dict[str, MarkRow] = {"simple": DEFAULT_PHARAO_MARKS["simple"]}
    moves: set[tuple[str, str]] = set()
    for index, raw in enumerate(value):
        at = f"{name}[{index}]"
        row = _check_keys(
            at,
            raw,
            _MARK_KEYS,
            gettext_noop(
                "%(name)s : %(value)r n'est pas un objet (une rangée de la table des marques)"
            ),
        )
        for key in _MARK_KEYS[:5]:
            if key not in row:
                raise _fail(f"{at}.{key}", gettext_noop("%(name)s : manquant"))
        mark = row["mark"]
        if not isinstance(mark, str) or not mark or mark == "simple" or mark in marks:
            raise _fail(
                f"{at}.mark",
                gettext_noop(
                    "%(name)s : %(mark)r n'est pas le nom d'une nouvelle marque (unique, pas simple)"
                ),
                mark=mark,
            )
        source = row["from"]
        if not isinstance(source, str) or source not in marks:
            raise _fail(
                f"{at}.from",
                gettext_noop("%(name)s : %(source)r n'est ni simple ni une rangée précédente"),
                source=source,
            )
        move = row["move"]
        if move not in ("appe", "paroli"):
            raise _fail(
                f"{at}.move", gettext_noop("%(name)s : %(move)r n'est ni appe ni paroli"), move=move
            )
        if (source, move) in moves:
            raise _fail(
                f"{at}.move",
                gettext_noop("%(name)s : un second %(move)s depuis %(source)s"),
                move=move,
                source=source,
            )
        riding = _check_int(f"{at}.riding", row["riding"], 1, None)
        protected = _check_int(f"{at}.protected", row["protected"], 0, None)
        _, _, riding_from, protected_from, gain_from = marks[source]
        if riding + protected != 2 * riding_from + protected_from:
            raise _fail(
                f"{at}.riding",
                gettext_noop(
                    "%(name)s : riding %(riding)s + protected %(protected)s n'est pas ce qui reste "
                    "après un gain à %(source)s (%(stands)s)"
                ),
                riding=riding,
                protected=protected,
                source=source,
                stands=2 * riding_from + protected_from,
            )
        gain = gain_from + riding
        if "gain" in row and _check_int(f"{at}.gain", row["gain"], 1, None) != gain:
            raise _fail(
                f"{at}.gain",
                gettext_noop("%(name)s : %(given)s n'est pas gain(%(source)s) + riding = %(gain)s"),
                given=row["gain"],
                source=source,
                gain=gain,
            )
        moves.add((source, move))
        marks[mark] = (source, move, riding, protected, gain)
    return marks


def _parse(name: str, value: Any, base: Reglement) -> Any:
    """A parameter as RULES.md writes it, checked on its own and held as the dataclass holds it."""
    if name == "face_value":
        return _face_values(value)
    if name in _CHOICES:
        if value not in _CHOICES[name]:
            raise _fail(
                name,
                gettext_noop("%(name)s : %(value)r n'est pas l'une des valeurs %(choices)s"),
                value=value,
                choices=", ".join(_CHOICES[name]),
            )
        return value
    if name in _BOOLS:
        if not isinstance(value, bool):
            raise _fail(
                name, gettext_noop("%(name)s : %(value)r n'est ni true ni false"), value=value
            )
        return value
    if name in _INTS:
        return _check_int(name, value, *_INTS[name])
    if name in _OPTIONAL_INTS:
        return None if value is None else _check_int(name, value, *_OPTIONAL_INTS[name])
    if name == "pharao_plie_share":
        return _plie_share(value)
    if name == "pharao_marks":
        return _marks(value)
    # An override of a table may name only some of its keys; the rest keep the base's.
    table = _check_keys(
        name,
        value,
        tuple(_TABLES[name]),
        gettext_noop("%(name)s : %(value)r n'est pas un objet (des entiers >= 0)"),
    )
    for key, amount in table.items():
        _check_int(f"{name}.{key}", amount, 0, None)
    return {**getattr(base, name), **table}


def _dump(name: str, value: Any) -> Any:
    """A parameter as RULES.md writes it (the inverse of ``_parse``)."""
    if name == "face_value":
        return dict(zip("JQK", value, strict=True))
    if name == "pharao_plie_share":
        return str(value)
    if name == "pharao_marks":
        return [
            {
                "mark": mark,
                "from": source,
                "move": move,
                "riding": riding,
                "protected": protected,
                "gain": gain,
            }
            for mark, (source, move, riding, protected, gain) in value.items()
            if mark != "simple"
        ]
    if name in _TABLES:
        return dict(value)
    return value


def _validate(r: Reglement) -> None:
    """Every parameter on its own (as its text form would be read), then the cross-field rules."""
    for name in PARAMETERS:
        try:
            text_form = _dump(name, getattr(r, _attribute(name)))
        except (TypeError, ValueError, AttributeError):
            raise _fail(
                name,
                gettext_noop("%(name)s : %(value)r est mal formé"),
                value=getattr(r, _attribute(name)),
            ) from None
        _parse(name, text_form, r)
        if name in _TABLES and set(getattr(r, name)) != set(_TABLES[name]):
            raise _fail(
                name,
                gettext_noop("%(name)s : il faut exactement les clés %(keys)s"),
                keys=", ".join(_TABLES[name]),
            )
    if r.min_stake is not None and r.max_stake is not None and r.max_stake < r.min_stake:
        raise _fail(
            "max_stake",
            gettext_noop("%(name)s : %(maximum)s est sous min_stake %(minimum)s"),
            maximum=r.max_stake,
            minimum=r.min_stake,
        )
    if (
        r.max_stake_ratio is not None
        and r.min_stake is not None
        and r.max_stake is not None
        and r.max_stake > r.max_stake_ratio * r.min_stake
    ):
        raise _fail(
            "max_stake",
            gettext_noop(
                "%(name)s : %(maximum)s dépasse max_stake_ratio %(ratio)s x min_stake %(minimum)s"
            ),
            maximum=r.max_stake,
            ratio=r.max_stake_ratio,
            minimum=r.min_stake,
        )
    if r.end_rule == "cut_card" and r.cut_card_from_end is None:
        raise _fail(
            "cut_card_from_end",
            gettext_noop("%(name)s : la règle de la carte de coupe demande une position (1..52)"),
        )


def _build(name: str, base: Reglement, overrides: dict[str, Any], *, where: str) -> Reglement:
    """``base`` with ``overrides`` applied and validated; errors point under ``where``."""
    try:
        return replace(base, name=name, **_changes(base, overrides))
    except InvalidReglement as exc:
        inner = (exc.where or "reglement").removeprefix("reglement")
        raise InvalidReglement(exc.template, where=f"{where}{inner}", **exc.params) from None


def _changes(base: Reglement, overrides: dict[str, Any]) -> dict[str, Any]:
    """Unknown parameters first, then each parameter in RULES.md's order (the cross-field rules
    are checked after, when the règlement is built)."""
    for key in overrides:
        if key not in PARAMETERS:
            raise InvalidReglement(
                gettext_noop("paramètre de règlement inconnu %(key)r"),
                where=f"reglement.{key}",
                key=key,
            )
    return {
        _attribute(name): _parse(name, overrides[name], base)
        for name in PARAMETERS
        if name in overrides
    }


def reglement(spec: str | dict[str, Any] | Reglement) -> Reglement:
    """A règlement from a preset name, ``{"preset": ..., "overrides": {...}}`` (both optional;
    no preset is ``baden-1854``), or itself."""
    if isinstance(spec, Reglement):
        return spec
    if isinstance(spec, str):
        return _preset(spec, where="reglement")
    if not isinstance(spec, dict):
        raise InvalidReglement(
            gettext_noop('un nom de préréglage ou {"preset", "overrides"}'), where="reglement"
        )
    for key in spec:
        if key not in ("preset", "overrides"):
            raise InvalidReglement(
                gettext_noop("champ inconnu %(key)r"), where=f"reglement.{key}", key=key
            )
    base = _preset(spec.get("preset", "baden-1854"), where="reglement.preset")
    overrides = spec.get("overrides", {})
    if not isinstance(overrides, dict):
        raise InvalidReglement(
            gettext_noop("overrides est un objet de paramètres"), where="reglement.overrides"
        )
    return _build(
        f"{base.name}+overrides" if overrides else base.name,
        base,
        overrides,
        where="reglement.overrides",
    )


def _preset(name: object, *, where: str) -> Reglement:
    if isinstance(name, str) and name in PRESETS:
        return _named_preset(name)
    raise InvalidReglement(
        gettext_noop("préréglage inconnu %(preset)r (parmi %(presets)s)"),
        where=where,
        preset=name,
        presets=", ".join(PRESETS),
    )


@functools.cache
def _named_preset(name: str) -> Reglement:
    """A preset, built and validated once (validation round-trips every parameter through its
    text form, which costs more than replaying a deal). The one instance is shared: a règlement is
    frozen, and nothing changes its tables in place."""
    return _build(name, Reglement(), PRESETS[name], where="reglement")
