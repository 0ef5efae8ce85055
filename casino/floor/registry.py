"""The floor serves several games (DESIGN.md, "Several games on one floor").

What every game shares is the floor core: tables, séances, duties, the cash, the ledger. What a game
does at the table lives in its own package under ``casino/floor/play/``, one per game and all of the
same shape: ``models`` (its rounds, kept in the floor app's migrations), its acts as services,
``selectors``, ``api`` (its ``routes``), ``admin`` (its ``SHIFT_INLINES``), and ``module`` (its
``MODULE``, the answers to what the core asks). The core never branches on the game: it asks the
table's game here. The layers above ask a game for their own parts the same way (``game_part``):
``report`` (its section of the séance report), ``disputes`` (its ``DISPUTES``, what a dispute about
its rounds needs: ``casino/disputes/games.py``).

The mapping is by dotted path and nothing is imported until asked for, so that the core's own
modules (models among them) can name this one without importing a game.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib import import_module
from types import ModuleType
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.errors import WrongGame

# Each game's package, by the table's game (the values of ``casino.floor.models.Game``).
PACKAGES = {
    "trente-et-quarante": "casino.floor.play.trente_et_quarante",
    "pharao": "casino.floor.play.pharao",
    "alliance": "casino.floor.play.alliance",
}


class GameModule:
    """What the core asks a game. A game's package answers with an instance of a subclass
    (``<package>.module.MODULE``); a game without one with this class itself, whose answers are
    those of a table where nothing has been played."""

    game = ""
    # The kind of sealed pack it is dealt from (``shoes.models.PackKind``).
    pack_kind = "single"
    # The accounts a table of the game has (``Account.Kind``), made with the table.
    accounts: tuple[str, ...] = ("layout", "bank")
    # The table's account the séance's rundown counts: the bank, or a cercle's fee box.
    till = "bank"
    # Whether a tailleur deals (banking games) or the players deal among themselves (a cercle).
    tailleur = True
    # What its rounds are called where a séance's are counted (``rounds_played``).
    rounds_word: Any = gettext_lazy("coups")

    def check_closable(self, shift: Any) -> None:
        """Refuse (``Conflict``) to close a séance while a round is being played there."""

    def closing(self, shift: Any, actor: Any) -> None:
        """What the game ends when its séance closes (a cercle's seats), in the closing act."""

    def check_cash_out(self, account: Any) -> None:
        """Refuse (``Conflict``) to pay a patron out at the cage while he is in play here."""

    def check_pack_free(self, pack: Any, *, act: str) -> None:
        """Refuse (``IllegalPackState``) to pass or retire a pack while a round is played with it."""

    def terminal_state(self, table: Any, shift: Any) -> dict[str, Any]:
        """What a terminal reads of the round in progress, beyond the core's table state."""
        return {}

    def rounds_played(self, shifts: Any) -> dict[int, int]:
        """The rounds settled in each of ``shifts`` (a report's count), by séance id, in one
        query however many; a séance with none may be left out."""
        return {}

    def export_records(self, shifts: Any) -> dict[str, list[dict[str, Any]]]:
        """The records of the rounds of ``shifts`` its game keeps its own way, as rows by the
        name of their CSV file in the regulator's export (``casino/reports/export.py``)."""
        return {}

    def replay_documents(self, shifts: Any) -> list[tuple[str, dict[str, Any]]]:
        """The rounds of ``shifts`` in the replay format of REPLAY.md, each with the name of its
        file under ``replay/`` in the regulator's export (``casino/reports/export.py``)."""
        return []


def game_module(game: str) -> GameModule:
    """The module of the game played at a table (``table.game``: a ``Game`` or its value)."""
    return _module(str(game))  # a Game hashes by its name, not by its value


@cache
def _module(game: str) -> GameModule:
    package = PACKAGES.get(game)
    if package is None:
        return GameModule()
    module: GameModule = import_module(f"{package}.module").MODULE
    return module


def every_game() -> list[GameModule]:
    return [game_module(game) for game in PACKAGES]


def game_part(game: str, part: str) -> ModuleType | None:
    """One part of a game's package (``"admin"``, ``"api"``), or None when it has none."""
    package = PACKAGES.get(str(game))
    if package is None:
        return None
    try:
        return import_module(f"{package}.{part}")
    except ModuleNotFoundError as missing:
        if missing.name != f"{package}.{part}":
            raise
        return None


def game_parts(part: str) -> list[ModuleType]:
    """That part of every game's package that has it: the floor's models, admin and API load
    their games' with it."""
    found = (game_part(game, part) for game in PACKAGES)
    return [module for module in found if module is not None]


def api_routes() -> list[Any]:
    """Every game's API routes (``casino/urls.py`` serves them beside the core's)."""
    return [route for part in game_parts("api") for route in part.routes]


def require_game(table: Any, game: str, *, act: str) -> None:
    """A table's game decides which acts it accepts: a coup is dealt at a Trente-et-Quarante
    table, a taille at a Pharao table, and nowhere else."""
    if table.game != game:
        from casino.floor.models import Game

        raise WrongGame(
            _("%(act)s : %(table)s est une table de %(game)s, cet acte est du %(wanted)s")
            % {
                "act": act,
                "table": table,
                "game": Game(table.game).label,
                "wanted": Game(game).label,
            },
            where="table",
        )


def moved_to(path: str, *names: str) -> Callable[[str], Any]:
    """A module's ``__getattr__`` for names that moved to a game's package: the code written
    before the floor served several games imports them at their old path, and finds them there
    without the core importing the game."""

    def __getattr__(name: str) -> Any:
        if name in names:
            return getattr(import_module(path), name)
        raise AttributeError(f"module has no attribute {name!r}")

    return __getattr__
