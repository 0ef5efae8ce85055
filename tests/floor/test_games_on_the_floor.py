"""The floor serves several games: a shared core, one package per game behind one registry, and a
table's game deciding which acts it accepts (DESIGN.md, "Several games on one floor")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from audit.models import AuditEvent
from casino.errors import WrongGame
from casino.floor.coups import coup_open
from casino.floor.models import Account, Coup, Game, PostedReglement
from casino.floor.registry import PACKAGES, GameModule, game_module
from casino.floor.services import table_create
from tests.conftest import open_seance

pytestmark = pytest.mark.django_db

FLOOR = Path(__file__).resolve().parents[2] / "casino" / "floor"


@pytest.fixture
def pharao_table(cast, posted):
    return table_create(
        actor=cast.directeur,
        number=7,
        game="pharao",
        reglement_id=PostedReglement.objects.get(name="baden-1854").pk,
        min_stake=100,
        max_stake=50_000,
    )


def test_a_coup_at_a_pharao_table_is_refused_and_nothing_is_recorded(cast, pharao_table):
    shift = open_seance(cast, pharao_table)
    events = AuditEvent.objects.count()
    with pytest.raises(WrongGame, match="is a Pharao table, this act is Trente-et-Quarante's"):
        coup_open(actor=cast.tailleur, shift_id=shift.pk)
    assert not Coup.objects.exists()
    assert AuditEvent.objects.count() == events


def test_the_api_names_the_refusal_wrong_game(api, cast, pharao_table):
    shift = open_seance(cast, pharao_table)
    response = api(cast.tailleur).post(
        "/api/v1/coups", {"shift": shift.pk}, format="json", HTTP_IDEMPOTENCY_KEY="k1"
    )
    body = response.json()
    assert (response.status_code, body["code"], body["where"]) == (422, "wrong_game", "table")


def test_a_tables_accounts_are_those_its_game_asks_for(cast, table, pharao_table):
    kinds = {
        t.number: set(Account.objects.filter(table=t).values_list("kind", flat=True))
        for t in (table, pharao_table)
    }
    assert kinds[table.number] == {"layout", "bank", "prison"}
    assert kinds[pharao_table.number] == set(game_module("pharao").accounts)
    assert "prison" not in kinds[pharao_table.number]


def test_every_game_of_the_floor_has_its_package():
    assert {str(g) for g in Game} == set(PACKAGES)
    assert {game_module(g).game for g in Game} == {str(g) for g in Game}


def test_a_game_without_its_package_yet_answers_as_a_table_where_nothing_was_played():
    newcomer = game_module("baccara")  # the fourth game, before its package exists
    assert type(newcomer) is GameModule
    assert newcomer.rounds_played([]) == {}
    assert newcomer.terminal_state(None, None) == {}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


# The two modules kept at their path before the split, for the code written then: a shim (coups)
# and the models' loading (the games' records are the floor app's).
OLD_PATHS = {"coups.py", "models.py"}


def test_the_core_imports_no_game_and_no_game_imports_another():
    core = [p for p in FLOOR.glob("*.py") if p.name not in OLD_PATHS]
    core += list((FLOOR / "management").rglob("*.py"))
    for path in core:
        games = {m for m in _imports(path) if m.startswith("casino.floor.play")}
        assert games == set(), path
    for package in PACKAGES.values():
        own = package.rsplit(".", 1)[1]
        folder = FLOOR / "play" / own
        for path in folder.rglob("*.py"):
            others = {
                m
                for m in _imports(path)
                if m.startswith("casino.floor.play.") and not m.startswith(package)
            }
            assert others == set(), path
