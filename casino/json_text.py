"""JSON text as the standard library writes it, faster where the export and the replay command
write a lot of it. Pure (the standard library only): the engines' command uses it.

``json.dumps(..., indent=1)`` runs the standard library's pure-Python encoder, a few calls per
value: a day's export (200 replay documents of 300 cards and 100 stakes each, 6,000 coups) spent
seconds there. ``indented`` writes the same text, handing each list or dict of plain values (a
stake, a coup's row, the cards) to the C encoder in one call, whose item separator carries the
line break and the indentation.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

# Values the C encoder writes alone, by their exact type (a subclass goes the long way, by
# ``_dumps``, which writes it the same).
_PLAIN = frozenset({str, int, float, bool, type(None)})
_TEXT = frozenset({str})  # keys the C encoder writes as they are (the rest: by ``_dumps`` too)


@functools.cache
def _encoder(item_separator: str) -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, separators=(item_separator, ": "))


_dumps = json.JSONEncoder(ensure_ascii=False).encode  # made once, not once a value


def indented(value: Any, level: int = 0) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=1)``, the same text.

    >>> print(indented({"cards": ["AS", "TH"], "stakes": [{"id": "1", "on": None}], "none": []}))
    {
     "cards": [
      "AS",
      "TH"
     ],
     "stakes": [
      {
       "id": "1",
       "on": null
      }
     ],
     "none": []
    }
    """
    members: Iterable[Any]
    if isinstance(value, dict):
        members = value.values()
        if not _TEXT.issuperset(map(type, value)):
            # The standard encoder's way with other keys (numbers, booleans) is not repeated here.
            return _indented_by_the_standard_library(value, level)
    elif isinstance(value, (list, tuple)):
        members = value
    else:
        return _dumps(value)
    if not value:
        return "{}" if isinstance(value, dict) else "[]"
    inner = "\n" + " " * (level + 1)
    if _PLAIN.issuperset(map(type, members)):
        flat = _encoder("," + inner).encode(value)  # "[a,\n  b]": the brackets are put back below
        body = flat[1:-1]
    elif isinstance(value, dict):
        body = ("," + inner).join(
            f"{_dumps(key)}: {indented(member, level + 1)}" for key, member in value.items()
        )
    else:
        body = ("," + inner).join(indented(member, level + 1) for member in value)
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return f"{opening}{inner}{body}\n{' ' * level}{closing}"


def _indented_by_the_standard_library(value: Any, level: int) -> str:
    text = json.dumps(value, ensure_ascii=False, indent=1)
    return text.replace("\n", "\n" + " " * level)
