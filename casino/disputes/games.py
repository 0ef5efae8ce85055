"""What disputes ask a game about its rounds, so that they never branch on the game.

A game whose rounds can be contested on their own records (a Pharao stake or draw, an Alliance
deal) answers through the ``disputes`` part of its package (``casino/floor/registry.py``:
``<package>.disputes.DISPUTES``, an instance of a subclass of ``GameDisputes``): which subjects are
its, the règlement and the séance they were played under, who recorded them, whose money a
correction may move, and the round replayed by its engine with the decider's findings. The subjects
no game claims (a Trente-et-Quarante coup or stake, a movement, a pack, a card) are the disputes'
own, answered in ``services.py`` as before.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from django.db.models import Q

from casino.floor.registry import game_parts


class GameDisputes:
    """A game's answers about its contested rounds. ``kind`` is the subject's name (one of
    ``subjects``), ``record`` the contested record."""

    # The subjects of this game's disputes: the name of the dispute's field, its model.
    subjects: dict[str, Any] = {}

    def reglement(self, kind: str, record: Any) -> Any:
        """The posted règlement version the round was played under."""
        raise NotImplementedError

    def check_raisable(self, kind: str, record: Any) -> None:
        """Refuse (a ``DomainError``) to contest a round that cannot be yet."""

    def seance(self, kind: str, record: Any) -> Any:
        """The séance whose play is contested."""
        raise NotImplementedError

    def about_seances(self, shift_ids: list[int]) -> Q:
        """Disputes about the play of these séances (a filter on ``Dispute``)."""
        raise NotImplementedError

    def recorders(self, kind: str, record: Any) -> set[int]:
        """Who recorded the contested acts (users' ids): they may not decide on the dispute."""
        raise NotImplementedError

    def accounts(self, kind: str, record: Any, seance: Any) -> Q:
        """The accounts a correction may move money between (a filter on ``Account``)."""
        raise NotImplementedError

    def recompute(self, kind: str, record: Any, findings: list[dict[str, Any]] | None) -> Any:
        """The round replayed by the engine with ``findings`` beside its records: a
        ``recompute.Recomputation`` whose corrections are the difference in money."""
        raise NotImplementedError

    def finding_rows(self, dispute: Any, data: Any) -> list[Any]:
        """The admin decision form's rows of findings (formsets whose rows have ``finding()``)."""
        return []

    def beside(self, recomputed: dict[str, Any]) -> str | None:
        """The recomputation as an admin page shows it (None: the shared stake-by-stake table)."""
        return None


@cache
def _by_subject() -> dict[str, GameDisputes]:
    return {
        kind: part.DISPUTES for part in game_parts("disputes") for kind in part.DISPUTES.subjects
    }


def game_disputes(kind: str) -> GameDisputes | None:
    """The game whose subject ``kind`` is (None: a subject of the disputes' own)."""
    return _by_subject().get(kind)


def every_game() -> list[GameDisputes]:
    return list(dict.fromkeys(_by_subject().values()))
