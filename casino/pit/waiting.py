"""What a home page is made of: for each role a person holds, a section; in it, groups of what
waits for that person (a séance, a pack, a register, a dispute), each item a link to the page
where the act is done. Built by casino/pit/waiting_floor.py and casino/pit/waiting_oversight.py,
shown by casino/pit/home.py.

Every query of a section starts from an API resource's ``readable_by(user)``
(casino/api/resources.py): a home lists only what the person may read over the API."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from django.utils import timezone
from django.utils.text import Truncator


@dataclass(frozen=True)
class Link:
    text: str
    url: str


@dataclass(frozen=True)
class Item:
    """One thing waiting: what it is, where it is done, since when (shown in the room's time),
    and whether it is late or grave (``urgent``)."""

    text: str
    url: str
    at: dt.datetime | None = None
    note: str = ""
    urgent: bool = False
    also: tuple[Link, ...] = ()


@dataclass(frozen=True)
class Group:
    """A kind of thing waiting. ``empty`` says that nothing of it waits; ``act`` is a page always
    at hand for this work (open a séance, receive a delivery). What is only there to be read (the
    regulator's latest reports) does not ``wait``: it is not counted as work."""

    key: str  # the group's id in the page
    title: str
    items: list[Item]
    empty: str
    act: Link | None = None
    waits: bool = True


@dataclass(frozen=True)
class Section:
    key: str  # the section's id in the page: the role's name
    title: str
    groups: list[Group] = field(default_factory=list)

    @property
    def waiting(self) -> int:
        return sum(len(g.items) for g in self.groups if g.waits)


def quoted(text: str, words: int = 12) -> str:
    """A claim or a summary, short enough for a line of the home."""
    return str(Truncator(" ".join(text.split())).words(words))


def day(value: dt.date | dt.datetime) -> str:
    """A day as the pit's pages write it, a moment taken in the room's time zone first."""
    if isinstance(value, dt.datetime):
        value = timezone.localtime(value).date()
    return value.strftime("%d/%m/%Y")
