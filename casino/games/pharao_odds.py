"""Exact odds of Pharao (RULES.md §2; REPLAY.md, Odds): the next draw, and a stake left until resolved.

The question is put as at the table: ``cards_left`` undealt cards (the bottom card, shown first, not
counted, so an odd number: 51 before the first draw), ``rank_left`` of them of the staked rank, and
whether the bottom card is of that rank (it matters under ``pharao_last_card: bank``). Every figure
is a ``Fraction``; the command prints floats and the fractions as strings.

The next draw takes two of the N cards (N >= 3): with K of the rank,

    bank only  K (N-K) / N (N-1)     players only  (N-K) K / N (N-1)
    plié       K (K-1) / N (N-1)     neither       (N-K) (N-K-1) / N (N-1)

On the last draw (N = 1) the single card goes to the bank and the bottom card counts as the
règlement says. A simple stake of one unit left on the rank until it wins, loses, or the taille
ends is worth to the bank

    E(N, K) = (bank only - players only) + plié (s + (1 - s) E(N-2, K-2)) + neither E(N-2, K)
    E(1, K) = K, or 1 under ``bank`` when the bottom card is of the rank

with s the plié share (after a plié the rest stands on as a simple stake). Rounding a plié down to
the minor unit is left out: the figures are per unit of a stake large enough for it not to matter
(the rounding favours the player, by less than one minor unit).

Readings: ``edge_per_resolved`` divides by the chance that the draw settles the stake — a loss, a
win or a plié, each a settlement line (the dead bottom card settles nothing); it is null when that
chance is 0. On the last draw ``bank`` is the chance that the stake loses there (its rank as the
single card, or as the bottom card under ``bank``), ``players`` and ``plie`` are 0.

>>> odds = next_draw(51, 4, Reglement())
>>> odds.plie, odds.edge_per_draw, odds.edge_per_resolved
(Fraction(2, 425), Fraction(1, 425), Fraction(3, 194))
>>> until_resolved(51, 4, Reglement())
Fraction(205, 9996)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

from casino.games.cards import Rank
from casino.games.errors import GameError
from casino.games.pharao import Taille, plie_share
from casino.games.reglement import Reglement

PACK = 52


class InvalidOddsQuestion(GameError):
    """A question the pack cannot pose: an even number of cards left, more of a rank than it has."""

    code = "bad_input"


@dataclass(frozen=True)
class DrawOdds:
    """The next draw for a stake on the rank: where the rank falls, and the bank's expectation."""

    bank: Fraction
    players: Fraction
    plie: Fraction
    none: Fraction
    edge_per_draw: Fraction
    edge_per_resolved: Fraction | None


def check_question(cards_left: int, rank_left: int, bottom_of_rank: bool) -> None:
    """Refuse a position the pack cannot be in (``where`` names the option)."""
    if not isinstance(cards_left, int) or not 1 <= cards_left <= PACK - 1 or cards_left % 2 == 0:
        raise InvalidOddsQuestion(
            f"--cards-left is an odd number of undealt cards, 1..51 (the bottom card not "
            f"counted), not {cards_left!r}",
            where="cards-left",
        )
    most = min(3 if bottom_of_rank else 4, cards_left)
    if not isinstance(rank_left, int) or not 0 <= rank_left <= most:
        raise InvalidOddsQuestion(
            f"--rank-left is 0..{most} with {cards_left} cards left"
            f"{' and the bottom card of the rank' if bottom_of_rank else ''}, not {rank_left!r}",
            where="rank-left",
        )


def _loses_last(rank_left: int, reglement: Reglement, bottom_of_rank: bool) -> Fraction:
    """The last draw: the single card is the bank's; the bottom card counts as the règlement says."""
    bank_takes_bottom = reglement.pharao_last_card == "bank" and bottom_of_rank
    return Fraction(1) if rank_left == 1 or bank_takes_bottom else Fraction(0)


def next_draw(
    cards_left: int, rank_left: int, reglement: Reglement, *, bottom_of_rank: bool = False
) -> DrawOdds:
    """The exact odds of the next draw for a stake on a rank with ``rank_left`` of ``cards_left``."""
    check_question(cards_left, rank_left, bottom_of_rank)
    n, k = cards_left, rank_left
    if n == 1:
        bank = _loses_last(k, reglement, bottom_of_rank)
        zero = Fraction(0)
        return DrawOdds(bank, zero, zero, 1 - bank, bank, Fraction(1) if bank else None)
    pairs = n * (n - 1)
    bank = Fraction(k * (n - k), pairs)
    players = Fraction((n - k) * k, pairs)
    plie = Fraction(k * (k - 1), pairs)
    none = Fraction((n - k) * (n - k - 1), pairs)
    edge = bank - players + plie * reglement.pharao_plie_share
    settles = bank + players + plie
    return DrawOdds(bank, players, plie, none, edge, edge / settles if settles else None)


def until_resolved(
    cards_left: int, rank_left: int, reglement: Reglement, *, bottom_of_rank: bool = False
) -> Fraction:
    """The bank's expected gain per unit of a simple stake left on the rank, unmarked, until it
    wins, loses, or the taille ends (the rest of a plié standing on as a simple stake)."""
    check_question(cards_left, rank_left, bottom_of_rank)
    return _until(
        cards_left,
        rank_left,
        reglement.pharao_plie_share,
        _loses_last(1, reglement, bottom_of_rank),  # what the last draw takes with one card left
        _loses_last(0, reglement, bottom_of_rank),  # and with none
    )


@cache
def _until(n: int, k: int, share: Fraction, last_one: Fraction, last_none: Fraction) -> Fraction:
    if n == 1:
        return last_one if k == 1 else last_none
    pairs = n * (n - 1)
    value = Fraction(k * (n - k) - (n - k) * k, pairs)  # bank only minus players only: 0
    if k >= 2:
        rest = _until(n - 2, k - 2, share, last_one, last_none)
        value += Fraction(k * (k - 1), pairs) * (share + (1 - share) * rest)
    if n - k >= 2:
        value += Fraction((n - k) * (n - k - 1), pairs) * _until(
            n - 2, k, share, last_one, last_none
        )
    return value


def classic_advantage(n: int, k: int) -> Fraction:
    """The banker's advantage of the classic tables (Montmort 1708, De Moivre, Euler 1764; Hoyle
    prints De Moivre's table): the punter's card ``k`` times among the ``n`` cards the banker
    still holds, the last of them unknown and dead, a doublet taking half and deciding the stake,
    a doublet in the last pair taking all. For comparison with ``until_resolved`` (docs/odds.md).

    >>> classic_advantage(30, 2), classic_advantage(10, 3)  # Hoyle: "the 54th part", "12th"
    (Fraction(8, 435), Fraction(1, 12))
    """
    if k == 1:
        return Fraction(1, n)
    if k == 2:
        return Fraction(n + 2, 2 * n * (n - 1))
    if k == 3:
        return Fraction(3, 4 * (n - 1))
    if k == 4:
        return Fraction(2 * n - 5, 2 * (n - 1) * (n - 3))
    raise ValueError(f"a rank has 1 to 4 cards, not {k}")


def _figures(values: dict[str, Fraction | None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        out[key] = None if value is None else float(value)
    for key, value in values.items():
        out[f"{key}_exact"] = None if value is None else str(value)
    return out


def pharao_odds_document(
    *, cards_left: int, rank_left: int, reglement: Reglement, bottom_of_rank: bool = False
) -> dict[str, Any]:
    """The JSON document of ``python -m casino.games odds --game pharao`` (REPLAY.md, Odds)."""
    draw = next_draw(cards_left, rank_left, reglement, bottom_of_rank=bottom_of_rank)
    edge = until_resolved(cards_left, rank_left, reglement, bottom_of_rank=bottom_of_rank)
    return {
        "draw": _figures(
            {
                "bank": draw.bank,
                "players": draw.players,
                "plie": draw.plie,
                "none": draw.none,
                "edge_per_draw": draw.edge_per_draw,
                "edge_per_resolved": draw.edge_per_resolved,
            }
        ),
        "until_resolved": _figures({"edge": edge}),
    }


@dataclass(frozen=True)
class Expected:
    """The bank's expected result of what a taille exposed, and its variance, in minor units."""

    mean: Fraction
    variance: Fraction
    by_draw: tuple[Fraction, ...] = ()  # the mean, draw by draw


def expected_result(taille: Taille, reglement: Reglement) -> Expected:
    """The bank's expected result of a played taille given what actually stood on the layout as
    each draw began (``Taille.exposed``): each stake's exact expectation at that draw from the
    cards then left (``next_draw``): the riding amount won on the bank's card, paid on the
    players', and the bank's share of all that stands on a plié (rounded down as the floor does).
    Summed over the draws, whose outcomes given the layout are a martingale's steps, so the
    variance is the sum of each draw's conditional variance (a stake's outcomes within one draw
    are exact; stakes on one rank move together and are summed before squaring).

    >>> from casino.games.cards import ONE_PACK, Rank
    >>> from casino.games.pharao import Act, Action, Stake, play_taille
    >>> one = [(1, Stake("a", Rank.THREE, 100))], [(2, Action("a", Act.WITHDRAW, None, "chef"))]
    >>> expected_result(play_taille(list(ONE_PACK), *one, Reglement()), Reglement()).mean
    Fraction(4, 17)

    (one draw: 4 threes of 51 cards, as likely left as right; a plié, 4·3/(51·50), takes 50.)
    The last queen before the last draw is the bank's card for sure:

    >>> last = [(26, Stake("q", Rank.QUEEN, 100))], []
    >>> expected = expected_result(play_taille(list(ONE_PACK), *last, Reglement()), Reglement())
    >>> expected.mean, expected.variance
    (Fraction(100, 1), Fraction(0, 1))
    """
    share = reglement.pharao_plie_share
    bottom = taille.bottom_card
    seen: Counter[Rank] = Counter()
    mean = variance = Fraction(0)
    by_draw: list[Fraction] = []
    for number, standing in enumerate(taille.exposed, start=1):
        before = mean
        cards_left = PACK - 1 - 2 * (number - 1)
        by_rank: dict[Rank, tuple[int, int]] = {}
        for s in standing:
            riding, taken = by_rank.get(s.rank, (0, 0))
            by_rank[s.rank] = (riding + s.riding, taken + plie_share(s.stands, share))
        for on, (riding, taken) in by_rank.items():
            of_rank = 4 - seen[on] - (1 if bottom.rank is on else 0)
            odds = next_draw(cards_left, of_rank, reglement, bottom_of_rank=bottom.rank is on)
            gain = riding * (odds.bank - odds.players) + taken * odds.plie
            square = riding * riding * (odds.bank + odds.players) + taken * taken * odds.plie
            mean += gain
            variance += square - gain * gain
        by_draw.append(mean - before)
        if number <= len(taille.draws):
            draw = taille.draws[number - 1]
            for c in (draw.bank, draw.players):
                if c != bottom:
                    seen[c.rank] += 1
    return Expected(mean, variance, tuple(by_draw))
