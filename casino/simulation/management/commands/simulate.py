"""Play realistic séances through the same services as the table terminals.

``python manage.py simulate --tables 2 --hours 1 --seed 7``: the demo's crew (``chef``,
``tailleur``, ``croupier``) plays a séance at each table in turn, about thirty coups an hour
(``casino/simulation/seance.py`` says what happens in one; the last sixain stays at the table
in play, its talon uncounted). With ``--start``, a past moment such
as ``2026-03-01T14:00+01:00``, the acts are recorded on a simulated clock from that moment, each
at the time it would take at a real table, so hours of play take seconds; the stretch must begin
after the last recorded act and end before now. Without it the acts bear the real time.

``--game pharao`` plays Pharao séances instead, about four tailles an hour
(``casino/simulation/pharao.py``), from table ``--first`` on (a table of that number under
another game is refused). ``--game alliance`` holds the cercle, about eight deals an hour
(``casino/simulation/alliance.py``): ``--players`` patrons (4 to 6) change money at the cage and
sit down, one leaves and another sits down halfway, and they are paid out after the close; the
séance's chef de partie and croupier are the crew's (no tailleur: the players deal).
``--colluders ana,carl`` plants a colluding pair among them for the collusion detector.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import itertools
import random
from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError

from casino import clock
from casino.clock import ClockError
from casino.floor.models import Coup
from casino.floor.play.alliance.models import Deal
from casino.floor.play.pharao.models import Taille
from casino.floor.services import reglement_load_presets
from casino.simulation.alliance import PATRONS, cercle_seance, cercle_table_for
from casino.simulation.pharao import pharao_seance, pharao_table_for
from casino.simulation.seance import Crew, House, seance, table_for
from casino.simulation.timeline import play_together, simulated_stretch

COUPS_PER_HOUR = 30  # a coup takes about two minutes (casino/simulation/pace.py)
TAILLES_PER_HOUR = 4  # a taille of 26 draws takes ten to fifteen minutes
DEALS_PER_HOUR = 8  # a deal of Alliance takes six to eight minutes
GAMES = ("trente-et-quarante", "pharao", "alliance")
STAFF = ("directeur", "chef", "tailleur", "croupier", "caissier", "commissaire")


def pair(text: str) -> tuple[str, str]:
    """Two of the simulated patrons, as ``--colluders`` takes them: ``ana,carl``."""
    names = tuple(name.strip() for name in text.split(","))
    if len(names) != 2 or names[0] == names[1] or not set(names) <= set(PATRONS):
        raise ValueError(f"{text!r}: two of {', '.join(PATRONS)}, such as ana,carl")
    return names[0], names[1]


def moment(text: str) -> dt.datetime:
    """An ISO date and time with its offset, as ``--start`` takes it."""
    at = dt.datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError(f"{text!r} has no offset (+01:00, Z)")
    return at


class Command(BaseCommand):
    help = "Play simulated séances of Trente-et-Quarante, Pharao or Alliance through the services."

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--tables", type=int, default=1)
        parser.add_argument("--game", choices=GAMES, default="trente-et-quarante")
        parser.add_argument("--first", type=int, default=1, help="the first table's number")
        parser.add_argument("--hours", type=float, default=1.0, help="of play at each table")
        parser.add_argument("--seed", type=int, default=1854)
        parser.add_argument("--stakes", type=int, default=5, help="stakes per coup, at most")
        parser.add_argument(
            "--players", type=int, choices=(4, 5, 6), default=4, help="at the cercle"
        )
        parser.add_argument(
            "--colluders", type=pair, help="a colluding pair at the cercle, such as ana,carl"
        )
        parser.add_argument(
            "--start", type=moment, help="a past moment to record from, on a simulated clock"
        )

    def handle(
        self,
        *args: Any,
        tables: int,
        hours: float,
        seed: int,
        stakes: int,
        game: str = "trente-et-quarante",
        first: int = 1,
        start: dt.datetime | None = None,
        players: int = 4,
        colluders: tuple[str, str] | None = None,
        **options: Any,
    ) -> None:
        staff = {u.username: u for u in User.objects.filter(username__in=STAFF)}
        missing = set(STAFF) - set(staff)
        if missing:
            raise CommandError(f"the demo staff is missing {sorted(missing)}: run demo_seed")
        house = House(staff["directeur"], staff["caissier"], staff["commissaire"])
        crew = Crew(staff["chef"], staff["tailleur"], staff["croupier"])
        rng = random.Random(seed)
        before = Coup.objects.count(), Taille.objects.count(), Deal.objects.count()
        numbers = range(first, first + tables)
        try:
            stretch = simulated_stretch(start) if start else contextlib.nullcontext()
            with stretch:
                reglement_load_presets(actor=house.commissaire, effective_from=clock.now().date())
                # One crew: one table after the other.
                if game == "alliance":
                    plays = (
                        cercle_seance(
                            cercle_table_for(house, number),
                            crew,
                            house,
                            rng,
                            deals_to_play=max(2, round(hours * DEALS_PER_HOUR)),
                            players=players,
                            colluders=colluders,
                        )
                        for number in numbers
                    )
                elif game == "pharao":
                    plays = (
                        pharao_seance(
                            pharao_table_for(house, number),
                            crew,
                            house,
                            rng,
                            tailles_to_play=max(1, round(hours * TAILLES_PER_HOUR)),
                        )
                        for number in numbers
                    )
                else:
                    plays = (
                        seance(
                            table_for(house, number),
                            crew,
                            house,
                            rng,
                            coups=int(hours * COUPS_PER_HOUR),
                            stakes_per_coup=stakes,
                            count_back_at_close=False,
                        )
                        for number in numbers
                    )
                play_together([(clock.now(), itertools.chain.from_iterable(plays))])
        except (ClockError, LookupError) as error:
            raise CommandError(str(error)) from error
        if game == "alliance":
            done = Deal.objects.count() - before[2]
            self.stdout.write(f"simulated {done} deals of Alliance on {tables} table(s)")
            return
        if game == "pharao":
            done = Taille.objects.count() - before[1]
            self.stdout.write(f"simulated {done} tailles of Pharao on {tables} table(s)")
            return
        self.stdout.write(
            f"simulated {Coup.objects.count() - before[0]} coups on {tables} table(s)"
        )
