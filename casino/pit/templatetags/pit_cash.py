"""Money and cards as the séance and the card room show them."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeString

from casino import shown
from casino.floor.selectors import card_html

register = template.Library()


@register.filter
def money(minor: int | None) -> str:
    """Minor units as the room reads them, in the page's language: 12 345,00 or 12,345.00."""
    return shown.money(minor)


@register.filter
def signed_money(minor: int | None) -> str:
    """A difference: its sign always shown (+25,00, −25,00, 0,00)."""
    if minor is None:
        return "–"
    sign = "+" if minor > 0 else ("−" if minor < 0 else "")
    return sign + money(abs(minor))


@register.filter
def card(code: str) -> SafeString:
    return card_html(code)


@register.filter
def get(mapping: dict, key: str):  # type: ignore[no-untyped-def, type-arg]
    return mapping.get(key)


@register.filter
def person(user: Any) -> str:
    """A person as the floor names them: full name and login, or the login alone."""
    if user is None:
        return "–"
    full = user.get_full_name()
    return f"{full} ({user.username})" if full else user.username


@register.filter
def chip_rows(chips: dict[str, int]) -> list[tuple[int, int]]:
    """A count's chips, the largest value first (the database keeps JSON keys in its own order)."""
    return sorted(((int(value), n) for value, n in chips.items()), reverse=True)
