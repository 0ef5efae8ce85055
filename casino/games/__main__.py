"""``python -m casino.games replay`` and ``python -m casino.games odds`` (REPLAY.md), for
Trente-et-Quarante and Pharao (``odds --game pharao --cards-left N --rank-left K``).

Bad input: exit status 2 and ``{"error": {"code", "message", "where"}}`` on standard output.
Never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, NoReturn

from casino.games.errors import GameError
from casino.json_text import indented


class _Usage(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Usage(message)


def _emit(document: Any) -> None:
    # json.dumps(document, ensure_ascii=False, indent=1), the same text, written faster (a
    # sixain's replay is thousands of small objects, each a few calls of the Python encoder).
    sys.stdout.write(indented(document) + "\n")


def _error(code: str, message: str, where: str | None, status: int) -> int:
    _emit({"error": {"code": code, "message": message, "where": where}})
    return status


def _replay() -> int:
    from casino.games.replay import replay_text

    _emit(replay_text(sys.stdin.buffer.read()))
    return 0


def _pharao_odds(args: argparse.Namespace) -> int:
    from casino.games.pharao_odds import pharao_odds_document
    from casino.games.reglement import reglement
    from casino.games.replay import ReplayError

    if args.decks is not None or args.composition is not None:
        raise _Usage(
            "--decks and --composition are Trente-et-Quarante's; Pharao takes --cards-left"
        )
    if args.cards_left is None or args.rank_left is None:
        raise _Usage("--game pharao needs --cards-left N and --rank-left K")
    spec: Any = "baden-1854"
    if args.reglement is not None:
        spec = args.reglement
        if spec.lstrip().startswith("{"):
            try:
                spec = json.loads(spec)
            except json.JSONDecodeError as exc:
                return _error("bad_json", exc.msg, "reglement", 2)
    try:
        rules = reglement(spec)
    except GameError as exc:
        error = ReplayError(exc.template, where=exc.where, **exc.params)
        error.code = "bad_reglement"
        raise error from None
    _emit(
        pharao_odds_document(
            cards_left=args.cards_left,
            rank_left=args.rank_left,
            reglement=rules,
            bottom_of_rank=args.bottom_of_rank,
        )
    )
    return 0


def _odds(args: argparse.Namespace) -> int:
    from casino.games.odds import odds_document

    if args.game == "pharao":
        return _pharao_odds(args)
    pharao_only = (args.cards_left, args.rank_left, args.reglement)
    if any(option is not None for option in pharao_only) or args.bottom_of_rank:
        raise _Usage("--cards-left, --rank-left, --reglement and --bottom-of-rank are Pharao's")
    if (args.decks is None) == (args.composition is None):
        raise _Usage("give exactly one of --decks N or --composition JSON")
    composition: Any = None
    if args.composition is not None:
        try:
            composition = json.loads(args.composition)
        except json.JSONDecodeError as exc:
            return _error("bad_json", exc.msg, "composition", 2)
    _emit(odds_document(decks=args.decks, composition=composition))
    return 0


def main(argv: list[str]) -> int:
    parser = _Parser(prog="python -m casino.games", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("replay", help="replay a recorded talon read as JSON on standard input")
    odds = commands.add_parser("odds", help="exact odds: a shoe's first coup, or a Pharao draw")
    odds.add_argument(
        "--game", choices=("trente-et-quarante", "pharao"), default="trente-et-quarante"
    )
    odds.add_argument("--decks", type=int, help="a full shoe of N packs (1..8)")
    odds.add_argument("--composition", help="remaining cards by point value, as JSON")
    odds.add_argument(
        "--cards-left", type=int, help="Pharao: undealt cards, the bottom card not counted (odd)"
    )
    odds.add_argument("--rank-left", type=int, help="Pharao: how many of them of the staked rank")
    odds.add_argument(
        "--reglement", help='Pharao: a preset name or {"preset", "overrides"} as in replay'
    )
    odds.add_argument(
        "--bottom-of-rank",
        action="store_true",
        help="Pharao: the bottom card is of the staked rank (it counts under pharao_last_card bank)",
    )
    try:
        args = parser.parse_args(argv)
        if args.command == "replay":
            return _replay()
        return _odds(args)
    except _Usage as exc:
        return _error("usage", str(exc), "arguments", 2)
    except GameError as exc:
        return _error(exc.code, exc.message, exc.where, 2)
    except Exception as exc:  # a bug, not bad input: still no traceback on a regulator's screen
        return _error("internal_error", f"{type(exc).__name__}: {exc}", None, 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
