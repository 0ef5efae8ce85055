"""How long the acts of a real table take: the time a simulation lets pass before each one.

At a Trente-et-Quarante table a coup takes about two minutes: the stakes (faites vos jeux, le jeu
est fait), some eleven cards laid one by one, the announcement and the payments. Custody acts
take longer: six packs are shuffled by hand, the talon is counted card by card. Ranges in
seconds; a seeded draw picks within them, so the same seed gives the same day.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import NamedTuple

from casino import clock


class Takes(NamedTuple):
    """Seconds an act takes: at least, at most."""

    least: float
    most: float


BETWEEN_COUPS = Takes(5, 25)
FAITES_VOS_JEUX = Takes(10, 30)  # until the first stake
STAKE = Takes(3, 12)
LE_JEU_EST_FAIT = Takes(3, 10)
CARD = Takes(2, 4)
SETTLEMENT = Takes(15, 40)
FLOAT_COUNT = Takes(300, 600)  # the croupier counts the float by denomination
COUNTERSIGN = Takes(60, 240)  # the director comes to the table
OPEN_SEANCE = Takes(60, 180)
FETCH_PACK = Takes(120, 300)  # the sixain comes from the store
SHUFFLE = Takes(90, 180)  # six packs mixed by hand
CUT = Takes(20, 60)
TALON_COUNT = Takes(180, 360)  # the undealt cards, counted one by one
RETIRE = Takes(180, 420)  # every card of the sixain counted back
FILL = Takes(180, 480)  # the runner goes to the cage and back
STORE = Takes(60, 180)  # a sixain entered, or put in the store
SEAL = Takes(90, 240)  # the commissioner reads a seal, witnesses a destruction
DESK = Takes(120, 420)  # an account opened, a règlement posted, a register signed
BREAK = Takes(900, 1800)  # the crew rests between two séances

# Pharao: a taille of 26 draws takes ten to fifteen minutes (the banker's two cards come fast,
# the stakes, marks and payments between them take the time).
SINGLE_SHUFFLE = Takes(30, 60)  # one pack of 52, mixed by hand
BOTTOM_CARD = Takes(5, 15)  # the pack turned over, its bottom card shown and recorded
BETWEEN_DRAWS = Takes(4, 12)  # the payments and collections of the draw just made
PHARAO_CARD = Takes(1, 3)  # a card drawn from the box and laid left or right
MARK = Takes(2, 6)  # a corner of the player's card bent
APPROVAL = Takes(10, 30)  # the chef de partie is called to the layout
EMPTY_TALON = Takes(10, 30)  # the tailleur shows the box empty: no card left to count

# Alliance at the cercle: a deal takes six to eight minutes (the dealer shuffles, the player on
# his left cuts, 52 cards go out in packets; a few calls, the contract, then 48 cards or more
# thought over one by one; the croupier announces the marks and the payments).
BETWEEN_DEALS = Takes(20, 60)  # the payments, the tricks gathered, the pack to the next dealer
DEALER_SHUFFLE = Takes(30, 60)  # the dealer shuffles, the player on his left cuts
DEALING = Takes(40, 80)  # the 52 cards in packets, and the table cards
CALL = Takes(3, 12)
CONTRACT = Takes(10, 40)  # trumps and the called card; a lever's table card turned, the take
TRICK_CARD = Takes(2, 7)  # a card thought over and played
SEATING = Takes(30, 90)  # a patron shown to his seat, his chips counted before him
CAGE = Takes(60, 180)  # a patron changes money, or is paid out, at the cage


def pause(rng: random.Random, takes: Takes) -> dt.timedelta:
    """The time an act that ``takes`` so long takes this time."""
    return dt.timedelta(seconds=rng.uniform(*takes))


def let_pass(rng: random.Random, takes: Takes) -> None:
    """Let an act's time pass on the clock (nothing on the real clock: it moves by itself)."""
    clock.elapse(pause(rng, takes))
