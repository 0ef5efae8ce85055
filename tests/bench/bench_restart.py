"""A terminal restarted mid-séance finds where it is: its table (the séance, the coup in progress,
the pack, the prison, the balances), the séance (staff, rundown) and the open coup (its stakes),
three requests over HTTP, timed on a database holding a month of a 20-table room.

The month is written by plain INSERT … SELECT (coups, stakes, cards, results, settlements,
movements of closed séances): its rows are what the restart's queries must not walk, whatever
their values. The séance in play is opened and played through the services, as a real one.
"""

from __future__ import annotations

import http.client
import json
import statistics
import time
from typing import Any

from tests.bench.harness import gunicorn, report

TABLES = 20
DAYS = 30
COUPS_PER_SEANCE = 240  # a séance of eight hours, a coup every two minutes
STAKES = 5
CARDS = 10
RUNS = 50


def _columns(model: Any) -> dict[str, str]:
    return {f.name: f.column for f in model._meta.concrete_fields}


def month_of_play(staff: dict[str, Any], tables: list[Any]) -> dict[str, int]:
    """Closed séances at every table for ``DAYS`` days, each with its coups, written in SQL."""
    from django.db import connection, transaction

    from casino import clock
    from casino.floor.models import Account
    from shoes import services as packs

    seats = []
    for table in tables:
        seats += [
            Account(code=f"T{table.number}:seat:{n}", kind=Account.Kind.SEAT, table=table)
            for n in range(1, STAKES + 1)
        ]
    Account.objects.bulk_create(seats, ignore_conflicts=True)
    history = {}
    for table in tables:
        pack = packs.pack_receive(
            actor=staff["caissier"],
            kind="sixain",
            maker="bench",
            maker_pack_numbers="-",
            seal_number=f"MONTH-{table.number}",
            sealing_authority="-",
            store_location="-",
        )
        history[table.pk] = pack.pk
    now = clock.now()
    user = staff["croupier"].pk
    with transaction.atomic(), connection.cursor() as sql:
        sql.execute("CREATE TEMP TABLE bench_pack (table_id bigint, pack_id bigint)")
        sql.executemany("INSERT INTO bench_pack VALUES (%s, %s)", list(history.items()))
        sql.execute(
            """
            INSERT INTO floor_shift (table_id, reglement_id, min_stake, max_stake, opened_at,
                                     opened_by_id, closed_at)
            SELECT t.id, t.reglement_id, t.min_stake, t.max_stake,
                   %(now)s - make_interval(days => d), %(user)s,
                   %(now)s - make_interval(days => d) + interval '8 hours'
            FROM floor_table t CROSS JOIN generate_series(1, %(days)s) d
            WHERE t.id = ANY(%(tables)s)
            """,
            {"now": now, "user": staff["chef"].pk, "days": DAYS, "tables": [t.pk for t in tables]},
        )
        sql.execute(
            """
            INSERT INTO floor_coup (shift_id, pack_id, taille, number, reglement_id, min_stake,
                                    max_stake, opened_at, opened_by_id, phase)
            SELECT s.id, p.pack_id, s.taille, g, s.reglement_id, s.min_stake, s.max_stake,
                   s.opened_at + make_interval(mins => 2 * g), %(user)s, 'settled'
            FROM (
                -- each day's séance plays its own taille of the table's pack
                SELECT *, row_number() OVER (PARTITION BY table_id ORDER BY opened_at) AS taille
                FROM floor_shift WHERE closed_at IS NOT NULL
            ) s JOIN bench_pack p ON p.table_id = s.table_id
            CROSS JOIN generate_series(1, %(coups)s) g
            """,
            {"user": staff["tailleur"].pk, "coups": COUPS_PER_SEANCE},
        )
        sql.execute(
            """
            INSERT INTO floor_stake (coup_id, ref, holder_id, chance, amount, insured, on_refait,
                                     placed_at, placed_by_id)
            SELECT c.id, 'seat-' || g, a.id, (ARRAY['rouge','noir','couleur','inverse'])[1 + g %% 4],
                   1000 * g, false, '', c.opened_at, %(user)s
            FROM floor_coup c JOIN floor_shift s ON s.id = c.shift_id
            JOIN floor_table t ON t.id = s.table_id
            CROSS JOIN generate_series(1, %(stakes)s) g
            JOIN floor_account a ON a.code = 'T' || t.number || ':seat:' || g
            WHERE s.closed_at IS NOT NULL
            """,
            {"user": user, "stakes": STAKES},
        )
        sql.execute(
            """
            INSERT INTO floor_coupresult (coup_id, noir_cards, rouge_cards, noir_total,
                rouge_total, result, couleur, void, last, announcement, spoken, prison_after,
                settled_at, settled_by_id)
            SELECT c.id, '["KS","7H","9D","2C","5S"]', '["TH","QD","AS","4C","3H"]', 33, 28,
                   'rouge', 'couleur', false, false,
                   '{"noir": "trois", "rouge": "huit", "result": "rouge gagne, couleur perd"}',
                   '', '[]', c.opened_at + interval '1 minute', %(user)s
            FROM floor_coup c JOIN floor_shift s ON s.id = c.shift_id
            WHERE s.closed_at IS NOT NULL
            """,
            {"user": user},
        )
        sql.execute(
            """
            INSERT INTO floor_settlement (coup_id, stake_id, outcome, paid, returned, to_bank,
                                          premium, held, level)
            SELECT st.coup_id, st.id,
                   CASE WHEN st.chance IN ('rouge', 'couleur') THEN 'won' ELSE 'lost' END,
                   CASE WHEN st.chance IN ('rouge', 'couleur') THEN st.amount ELSE 0 END,
                   CASE WHEN st.chance IN ('rouge', 'couleur') THEN st.amount ELSE 0 END,
                   CASE WHEN st.chance IN ('rouge', 'couleur') THEN 0 ELSE st.amount END, 0, 0, 0
            FROM floor_stake st JOIN floor_coup c ON c.id = st.coup_id
            JOIN floor_shift s ON s.id = c.shift_id WHERE s.closed_at IS NOT NULL
            """
        )
        # Each stake: placed (seat → layout), then returned and paid, or collected.
        sql.execute(
            """
            INSERT INTO floor_movement (at, debit_id, credit_id, amount, kind, shift_id,
                                        reference, idempotency_key, actor_id)
            SELECT c.opened_at, m.debit, m.credit, st.amount, m.kind, c.shift_id,
                   'coup:' || c.id || ':stake:' || st.id, 'month:' || st.id || ':' || m.kind,
                   %(user)s
            FROM floor_stake st JOIN floor_coup c ON c.id = st.coup_id
            JOIN floor_shift s ON s.id = c.shift_id
            JOIN floor_account layout ON layout.table_id = s.table_id AND layout.kind = 'layout'
            JOIN floor_account bank ON bank.table_id = s.table_id AND bank.kind = 'bank'
            CROSS JOIN LATERAL (VALUES
                (layout.id, st.holder_id, 'stake_placed'),
                (CASE WHEN st.chance IN ('rouge', 'couleur') THEN st.holder_id ELSE bank.id END,
                 layout.id,
                 CASE WHEN st.chance IN ('rouge', 'couleur') THEN 'stake_returned'
                      ELSE 'loss_collected' END)
            ) AS m(debit, credit, kind)
            WHERE s.closed_at IS NOT NULL
            """,
            {"user": user},
        )
        sql.execute(
            """
            INSERT INTO shoes_cardlaid (pack_id, seq, taille, card, burned, at, actor_id,
                                        shift_id, coup_id)
            SELECT c.pack_id, c.id * 16 + g, 1,
                   (ARRAY['KS','7H','9D','2C','5S','TH','QD','AS','4C','3H'])[g], false,
                   c.opened_at, %(user)s, c.shift_id, c.id
            FROM floor_coup c JOIN floor_shift s ON s.id = c.shift_id
            CROSS JOIN generate_series(1, %(cards)s) g
            WHERE s.closed_at IS NOT NULL
            """,
            {"user": staff["tailleur"].pk, "cards": CARDS},
        )
        counts = {}
        for name in (
            "floor_shift",
            "floor_coup",
            "floor_stake",
            "floor_movement",
            "shoes_cardlaid",
            "floor_settlement",
        ):
            sql.execute(f"SELECT count(*) FROM {name}")
            counts[name] = sql.fetchone()[0]
    with connection.cursor() as sql:
        sql.execute("ANALYZE")
    return counts


def run() -> None:
    from django.db import connections

    from casino.floor import coups
    from casino.people.tokens import token_issue
    from tests.bench.bench_floor import _play_coup, _setup

    staff, shifts = _setup(tables=TABLES, prefix="restart", first=701)  # clear of the others
    tables = [shift.table for shift in shifts]
    # The month behind the séances in play: closed before they opened.
    started = time.perf_counter()
    counts = month_of_play(staff, tables)
    generated = time.perf_counter() - started
    shift = shifts[0]
    number = shift.table.number
    tailleur, croupier = staff[f"tailleur{number}"], staff[f"croupier{number}"]
    for n in range(3):
        _play_coup(staff, shift, n)
    coup = coups.coup_open(actor=tailleur, shift_id=shift.pk)
    for seat in range(1, 4):
        coups.stake_place(
            actor=croupier,
            coup_id=coup.pk,
            ref=f"s{seat}",
            holder=str(seat),
            chance="rouge",
            amount=1000,
        )
    token = token_issue(user=croupier)[1]
    connections.close_all()
    with gunicorn(workers=1) as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Token {token}", "Accept": "application/json"}

        def read(path: str) -> tuple[float, Any]:
            begun = time.perf_counter()
            connection.request("GET", path, headers=headers)
            answer = connection.getresponse()
            body = answer.read()
            elapsed = time.perf_counter() - begun
            assert answer.status == 200, (path, body[:300])
            return elapsed, json.loads(body)

        timings: dict[str, list[float]] = {"table": [], "séance": [], "open coup": []}
        for _ in range(RUNS):
            t, table = read(f"/api/v1/tables/{number}")
            timings["table"].append(t)
            t, _seance = read(f"/api/v1/shifts/{table['seance']}")
            timings["séance"].append(t)
            t, found = read(f"/api/v1/coups/{table['open_coup']}")
            timings["open coup"].append(t)
            assert len(found["stakes"]) == 3
    rows = [
        (
            f"GET {what} (median of {RUNS})",
            f"{statistics.median(values) * 1000:.1f} ms (aim: under 20 ms)",
        )
        for what, values in timings.items()
    ]
    rows.append(
        (
            "the three, one after the other (median)",
            f"{statistics.median(map(sum, zip(*timings.values(), strict=True))) * 1000:.1f} ms",
        )
    )
    rows.append(("the month behind them", ", ".join(f"{v:,} {k}" for k, v in counts.items())))
    rows.append(("written in", f"{generated:.0f} s"))
    report(f"A terminal's restart: 3 requests over HTTP, gunicorn 1 worker, {TABLES} tables", rows)
