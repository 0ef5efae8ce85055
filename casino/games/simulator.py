"""A seeded simulator: shuffle, cut and burn a sealed pack, deal whole tailles, place random stakes.

Used by the tests (property and Monte Carlo checks) and by the demo casino. Same seed, same play.

>>> sim = simulate_taille(seed=7, reglement=Reglement())
>>> sim.taille.coups[0].number, len(sim.talon) == 312
(1, True)
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casino.games.cards import SIXAIN, Card, Composition
from casino.games.reglement import Reglement
from casino.games.trente_et_quarante import (
    Chance,
    Prisoner,
    RefaitChoice,
    Stake,
    Taille,
    play_talon,
)

MAX_COUPS = 80  # more than a sixain can deal (each coup takes at least 8 cards)


def shuffled(rng: random.Random, composition: Composition = SIXAIN) -> list[Card]:
    cards = list(composition.cards)
    rng.shuffle(cards)
    return cards


def cut(cards: Sequence[Card], position: int) -> list[Card]:
    """The galerie's cut: the cards above the blank card go under the rest."""
    return [*cards[position:], *cards[:position]]


def random_stakes(
    rng: random.Random, coup: int, count: int, reglement: Reglement, *, prefix: str = "s"
) -> list[Stake]:
    low = reglement.min_stake or 100
    high = reglement.max_stake or 100_000
    stakes = []
    for i in range(count):
        amount = rng.choice([low, low * 2, low * 5, low * 10, rng.randint(low, high)])
        amount = min(max(amount, low), high)
        insured = (
            reglement.insurance and amount >= reglement.insurance_min_stake and rng.random() < 0.3
        )
        on_refait: RefaitChoice | None = None
        if reglement.refait_mode == "choice":
            pick = rng.random()
            if pick < 0.4:
                on_refait = "half"
            elif pick < 0.8:
                on_refait = "prison"
            elif pick < 0.9:
                on_refait = ("move", rng.choice(list(Chance)))
        stakes.append(
            Stake(f"{prefix}{coup}-{i}", rng.choice(list(Chance)), amount, insured, on_refait)
        )
    return stakes


@dataclass(frozen=True)
class SimulatedTaille:
    seed: int
    reglement: Reglement
    cut_at: int
    talon: tuple[Card, ...]  # after shuffle, cut and burn
    stakes: dict[int, list[Stake]]
    taille: Taille

    def replay_document(self, reglement_spec: Any = None) -> dict[str, Any]:
        """The replay input (REPLAY.md) of this taille: what a regulator would be handed."""
        dealt = len(self.taille.coups)
        stakes = []
        for coup in range(1, dealt + 1):
            for s in self.stakes.get(coup, []):
                item: dict[str, Any] = {
                    "id": s.id,
                    "coup": coup,
                    "chance": s.chance.value,
                    "amount": s.amount,
                }
                if s.insured:
                    item["insured"] = True
                if s.on_refait is not None:
                    item["on_refait"] = (
                        s.on_refait
                        if isinstance(s.on_refait, str)
                        else f"move:{s.on_refait[1].value}"
                    )
                stakes.append(item)
        return {
            "game": "trente-et-quarante",
            "reglement": reglement_spec if reglement_spec is not None else self.reglement.name,
            "cards": [str(c) for c in self.talon],
            "stakes": stakes,
        }


def simulate_taille(
    *,
    seed: int,
    reglement: Reglement,
    stakes_per_coup: int = 5,
    prison: Sequence[Prisoner] = (),
    composition: Composition = SIXAIN,
) -> SimulatedTaille:
    rng = random.Random(seed)
    cards = shuffled(rng, composition)
    cut_at = rng.randint(1, len(cards) - 1)
    talon = tuple(cut(cards, cut_at)[reglement.burn :])
    stakes = {
        coup: random_stakes(rng, coup, stakes_per_coup, reglement)
        for coup in range(1, MAX_COUPS + 1)
    }
    taille = play_talon(talon, stakes, reglement, prison=prison, composition=composition)
    return SimulatedTaille(seed, reglement, cut_at, talon, stakes, taille)
