"""Concurrent requests against gunicorn: duty openings racing for one person, the same request
sent several times at once, different requests racing for one record. The database decides;
nothing is doubled (docs/uniqueness.md)."""

from __future__ import annotations

import functools
import threading
import uuid
from collections.abc import Callable
from typing import Any

from tests.reliability.conftest import PAIRS, figure
from tests.reliability.system import System
from tests.reliability.terminal import Answer, Terminal


def at_once(*sends: Callable[[], Answer]) -> list[Answer]:
    start = threading.Barrier(len(sends))
    answers: list[Any] = [None] * len(sends)

    def run(index: int, send: Callable[[], Answer]) -> None:
        start.wait()
        answers[index] = send()

    threads = [threading.Thread(target=run, args=(i, s)) for i, s in enumerate(sends)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


def test_fifty_concurrent_pairs_of_duty_openings_put_nobody_on_duty_twice(
    system: System, terminal: Terminal
):
    """Per pair, two chefs de partie open two free tables at the same moment, naming the same
    tailleur: one séance opens, the other is refused (409), every time."""
    outcomes = []
    for pair in system.floor["pairs"]:
        answers = at_once(
            *(
                functools.partial(
                    terminal.send,
                    "POST",
                    "/api/v1/shifts",
                    {
                        "table": side["table"],
                        "count": side["count"],
                        "tailleur": pair["tailleur"],
                        "croupiers": [side["croupier"]],
                    },
                    who=side["chef"],
                    key=str(uuid.uuid4()),
                )
                for side in pair["sides"]
            )
        )
        outcomes.append(sorted(a.status for a in answers))
        refused = next((a for a in answers if a.status == 409), None)
        assert refused is not None, answers
        assert (refused.body["code"], refused.body["where"]) == ("conflict", "person")
    doubles = system.postgres.value(
        "SELECT count(*) FROM (SELECT d.person_id FROM floor_duty d "
        "WHERE NOT EXISTS (SELECT 1 FROM floor_dutyend e WHERE e.duty_id = d.id) "
        "GROUP BY d.person_id HAVING count(*) > 1) AS twice"
    )
    opened = system.postgres.value(
        "SELECT count(*) FROM floor_shift s JOIN floor_table t ON t.id = s.table_id "
        "WHERE t.number >= 1000"
    )
    figure(
        f"{PAIRS} concurrent pairs of séance openings naming one tailleur: "
        f"{outcomes.count([201, 409])} pairs answered 201 + 409, {opened} séances opened, "
        f"{doubles} double duties"
    )
    assert outcomes == [[201, 409]] * PAIRS
    assert opened == PAIRS
    assert doubles == 0


def test_the_same_request_sent_six_times_at_once_is_recorded_once(
    system: System, terminal: Terminal, play_table
):
    table = play_table()
    table.open()
    coup = terminal.act(table.tailleur, "coups", {"shift": table.shift})["id"]
    stake = {"coup": coup, "ref": "twice", "holder": "1", "chance": "rouge", "amount": 2000}
    key = str(uuid.uuid4())
    answers = at_once(
        *(
            lambda: terminal.send("POST", "/api/v1/stakes", stake, who=table.croupier, key=key)
            for _ in range(6)
        )
    )
    assert [a.status for a in answers] == [201] * 6
    assert sum(a.headers.get("idempotent-replay") == "true" for a in answers) == 5
    assert all(a.body == answers[0].body for a in answers)  # the same answer to each

    # Six terminals, six keys, one reference: one stake, five refusals.
    answers = at_once(
        *(
            lambda: terminal.send(
                "POST",
                "/api/v1/stakes",
                {**stake, "ref": "raced"},
                who=table.croupier,
                key=str(uuid.uuid4()),
            )
            for _ in range(6)
        )
    )
    assert sorted(a.status for a in answers) == [201] + [409] * 5
    rows = system.postgres.query(
        "SELECT ref, count(*) FROM floor_stake WHERE coup_id = %s GROUP BY ref ORDER BY ref", coup
    )
    assert rows == [("raced", 1), ("twice", 1)]
    placed = system.postgres.value(
        "SELECT count(*) FROM floor_movement WHERE kind = 'stake_placed' AND shift_id = %s",
        table.shift,
    )
    assert placed == 2

    # Two "le jeu est fait" at once: the coup moves once.
    answers = at_once(
        *(
            lambda: terminal.send(
                "POST",
                f"/api/v1/coups/{coup}/close-betting",
                {},
                who=table.tailleur,
                key=str(uuid.uuid4()),
            )
            for _ in range(2)
        )
    )
    assert sorted(a.status for a in answers) == [201, 409]
