"""A month of a 20-table Trente-et-Quarante room, written straight into the tables (COPY), for the
benchmarks that need history at a real room's scale (issue 16: the detectors and the queue;
issue 17: coups by date, table and result, a day's export, the daily register, verify_audit).

Through the services a month would take hours; here the room's structure (people with their
roles, tables, the posted règlement) is made through the services, and the play is written as
the rows the services write, with ``COPY``:

- per day, table and séance (two a day: 15:00-21:00 and 21:00-03:00, in the house's time zone), a
  séance opened with a countersigned count and its float, its chef de partie, tailleur and two
  croupiers on duty (real users holding those roles, rotating over the tables), closed with a
  countersigned closing count equal to its rundown (no cash variance);
- one sealed sixain per séance (received, seal verified intact, opened at the table, shuffled,
  cut, passed, retired), played in whole tailles from real shuffles of the six packs until the
  séance has its ~150 coups;
- each coup dealt and settled by the pure engine (``play_talon``) from those cards: its cards laid
  in order (``CardLaid``), its ``CoupResult`` (rows, totals, result, couleur, announcement, the
  prison after it), its stakes (patrons and anonymous seats, on the four chances), their
  ``Settlement``s and the ledger's ``Movement``s exactly as ``coups.settlement_entries`` posts
  them; the prison carries from taille to taille and séance to séance at a table (baden-1854's
  ``prison_at_end = carry``);
- the hard rules' anomalies at a realistic rate, each as its service raises it (detector, subject,
  summary, evidence, ``involved``) with its audit event: ``late_stake`` (a croupier's stake
  refused after the first card), ``announcement_mismatch`` (the tailleur's spoken announcement
  differs from the cards'), ``coup_cancelled`` (a coup cancelled at betting, its stakes returned),
  ``foreign_card`` (a card the pack cannot hold, refused);
- audit events chained after the setup's, one per act the services record, as they record them
  (action, actor, subject, payload): the séance opened and closed; each coup opened, its stakes
  placed, its betting closed, its cards laid, settled (or cancelled); each anomaly raised; so
  that ``verify_audit`` walks a month's chain of the real size and shape, and a day's register
  and export read the day's events.

Seeded: the same arguments write the same month. ``python -m tests.bench.month`` writes one on a
fresh bench database and prints its rows and time.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

TABLES = 20
DAYS = 30
SEANCES = ((15, 0), (21, 0))  # opening hours of the day's séances, each six hours long
SEANCE_HOURS = 6
COUPS = 150
FIRST_TABLE = 101
OPENING_FLOAT = 2_000_000  # minor units: 20,000.00 in the bank at opening
AMOUNTS = (500, 1000, 2000, 5000, 10_000, 20_000, 50_000)
AMOUNT_WEIGHTS = (30, 25, 18, 12, 8, 5, 2)
PATRONS = 300
# Hard-rule events per séance (late stakes, cancellations, foreign cards) and per coup (a
# mis-spoken announcement): a few a day in a 20-table room, as a floor has them.
LATE_STAKE_PER_SEANCE = 0.3
CANCELLED_PER_SEANCE = 0.2
FOREIGN_CARD_PER_SEANCE = 0.05
MISMATCH_PER_COUP = 0.001


@dataclass
class Month:
    """What was written: the days, the tables, the séances by (day, table number, séance index),
    the people by post, the row counts by table and the seconds it took."""

    first_day: dt.date
    days: int
    tables: list[int]
    shifts: dict[tuple[dt.date, int, int], int] = field(default_factory=dict)
    people: dict[str, list[Any]] = field(default_factory=dict)
    rows: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    cloned: float | None = None

    @property
    def day_list(self) -> list[dt.date]:
        return [self.first_day + dt.timedelta(days=d) for d in range(self.days)]

    def shifts_of(self, day: dt.date) -> list[int]:
        return [pk for (d, _t, _s), pk in sorted(self.shifts.items()) if d == day]


class _Ids:
    """Primary keys handed out here (one writer: the bench), the sequences moved past them at the
    end, so that the services can write after the month."""

    def __init__(self, cursor: Any, tables: Iterable[str]) -> None:
        self.next: dict[str, int] = {}
        for table in tables:
            cursor.execute(f"SELECT coalesce(max(id), 0) + 1 FROM {table}")
            self.next[table] = cursor.fetchone()[0]

    def __call__(self, table: str) -> int:
        pk = self.next[table]
        self.next[table] = pk + 1
        return pk

    def settle(self, cursor: Any) -> None:
        for table, pk in self.next.items():
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), %s, false)", [pk]
            )


COLUMNS: dict[str, tuple[str, ...]] = {
    "shoes_pack": (
        "id",
        "kind",
        "maker",
        "maker_pack_numbers",
        "seal_number",
        "sealing_authority",
        "received_at",
        "received_by_id",
        "store_location",
        "state",
    ),
    "shoes_sealverification": (
        "id",
        "pack_id",
        "commissaire_id",
        "at",
        "seal_number_read",
        "verdict",
        "remarks",
    ),
    "shoes_packevent": (
        "id",
        "pack_id",
        "at",
        "actor_id",
        "kind",
        "table_id",
        "shift_id",
        "person",
        "details",
    ),
    "floor_floatcount": (
        "id",
        "table_id",
        "shift_id",
        "moment",
        "chips",
        "total",
        "counted_by_id",
        "at",
    ),
    "floor_countsignature": ("id", "count_id", "by_id", "at"),
    "floor_shift": (
        "id",
        "table_id",
        "reglement_id",
        "min_stake",
        "max_stake",
        "opening_count_id",
        "opened_at",
        "opened_by_id",
        "closed_at",
    ),
    "floor_duty": ("id", "shift_id", "person_id", "post", "started_at", "assigned_by_id"),
    "floor_dutyend": ("id", "duty_id", "at", "by_id", "reason"),
    "floor_coup": (
        "id",
        "shift_id",
        "pack_id",
        "taille",
        "number",
        "reglement_id",
        "min_stake",
        "max_stake",
        "opened_at",
        "opened_by_id",
        "phase",
    ),
    "floor_coupcancellation": ("id", "coup_id", "at", "by_id", "reason"),
    "floor_stake": (
        "id",
        "coup_id",
        "ref",
        "holder_id",
        "chance",
        "amount",
        "insured",
        "on_refait",
        "placed_at",
        "placed_by_id",
    ),
    "floor_coupresult": (
        "id",
        "coup_id",
        "noir_cards",
        "rouge_cards",
        "noir_total",
        "rouge_total",
        "result",
        "couleur",
        "void",
        "last",
        "announcement",
        "spoken",
        "prison_after",
        "settled_at",
        "settled_by_id",
    ),
    "floor_settlement": (
        "id",
        "coup_id",
        "stake_id",
        "outcome",
        "paid",
        "returned",
        "to_bank",
        "premium",
        "held",
        "level",
    ),
    "floor_movement": (
        "id",
        "at",
        "debit_id",
        "credit_id",
        "amount",
        "kind",
        "shift_id",
        "reference",
        "idempotency_key",
        "actor_id",
    ),
    "shoes_cardlaid": (
        "id",
        "pack_id",
        "seq",
        "taille",
        "card",
        "burned",
        "at",
        "actor_id",
        "shift_id",
        "coup_id",
    ),
    "audit_anomaly": (
        "id",
        "detector",
        "severity",
        "subject_type",
        "subject_id",
        "summary",
        "evidence",
        "detected_at",
        "involved",
        "dedup_key",
        "state",
    ),
}
# The order rows are written in: a record before the records that point at it (the triggers of
# duties and pack events read the séance and the pack).
ORDER = list(COLUMNS)


class _Rows:
    """Rows by table, written with COPY when flushed."""

    def __init__(self) -> None:
        self.by_table: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
        self.counts: Counter[str] = Counter()

    def add(self, table: str, *values: Any) -> None:
        self.by_table[table].append(values)

    def flush(self, cursor: Any, tables: Sequence[str] = ORDER) -> None:
        for table in tables:
            rows = self.by_table.pop(table, [])
            if not rows:
                continue
            columns = ", ".join(COLUMNS[table])
            with cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
            self.counts[table] += len(rows)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _staff(prefix: str, directeur: Any, tables: int) -> dict[str, list[Any]]:
    """The room's people: per séance of the day, a quarter more of each post than tables (days
    off), made by the director through the services."""
    from casino.people.roles import Role
    from casino.people.services import staff_create

    roster = int(tables * 1.25)
    posts = {
        "chef_de_partie": (Role.CHEF_DE_PARTIE, roster),
        "tailleur": (Role.TAILLEUR, roster),
        "croupier": (Role.CROUPIER, 2 * roster),
    }
    people: dict[str, list[Any]] = {}
    for seance in range(len(SEANCES)):
        for post, (role, count) in posts.items():
            people.setdefault(post, [])
            people[f"{post}:{seance}"] = [
                staff_create(
                    actor=directeur,
                    username=f"{prefix}-{post[:5]}{seance}-{n:02d}",
                    full_name=f"{post} {seance}.{n}",
                    roles=[role],
                )
                for n in range(count)
            ]
            people[post] += people[f"{post}:{seance}"]
    return people


class _Chain:
    """Audit events chained after the head, written with the month's rows."""

    def __init__(self, rows: _Rows) -> None:
        from tests.bench.harness import audit_head

        self.rows = rows
        self.seq, self.prev = audit_head()

    def add(
        self,
        *,
        at: dt.datetime,
        actor: Any,
        action: str,
        subject: tuple[str, object],
        payload: dict[str, Any],
    ) -> None:
        from audit.canonical import canonical_json, event_bytes, event_hash, format_time

        self.seq += 1
        body = canonical_json(payload)
        actor_id = actor.pk if actor is not None else None
        actor_name = actor.username if actor is not None else "system"
        digest = event_hash(  # audit_record's hashing: verify_audit recomputes it
            event_bytes(
                seq=self.seq,
                at=format_time(at),
                actor_id=actor_id,
                actor_name=actor_name,
                action=action,
                subject_type=subject[0],
                subject_id=str(subject[1]),
                prev_hash=self.prev,
                payload=body,
            )
        )
        self.rows.add(
            "audit_auditevent",
            self.seq,
            at,
            actor_id,
            actor_name,
            action,
            subject[0],
            str(subject[1]),
            body,
            self.prev,
            digest,
        )
        self.prev = digest


COLUMNS["audit_auditevent"] = (
    "seq",
    "at",
    "actor_id",
    "actor_name",
    "action",
    "subject_type",
    "subject_id",
    "payload",
    "prev_hash",
    "hash",
)
ORDER.append("audit_auditevent")


class _Room:
    """The writer of one month: the state that runs from séance to séance (the prison at each
    table, the ids, the rows waiting for COPY)."""

    def __init__(
        self,
        *,
        seed: int,
        month: Month,
        accounts: dict[str, Any],
        house: dict[str, Any],
        posted: Any,
        cursor: Any,
    ) -> None:
        self.rng = random.Random(seed)
        self.month = month
        self.accounts = accounts
        self.house = house
        self.posted = posted
        self.rules = posted.engine()
        self.rows = _Rows()
        self.chain = _Chain(self.rows)
        self.ids = _Ids(cursor, [t for t in ORDER if t != "audit_auditevent"])
        self.prison: dict[int, tuple[Any, ...]] = defaultdict(tuple)
        self.stake_of: dict[str, tuple[int, int, int]] = {}  # engine id -> (pk, coup pk, holder)

    # -- one séance ------------------------------------------------------------------------------

    def seance(
        self, day: dt.date, number: int, index: int, crew: dict[str, Any], tz: Any
    ) -> tuple[int, int, list[tuple[Any, ...]]]:
        """Writes the séance's play; returns (shift id, result, structure rows written later)."""
        from casino.games.cards import SIXAIN
        from casino.games.simulator import cut, shuffled
        from casino.games.trente_et_quarante import Chance, Stake, play_talon

        rng, rows, ids = self.rng, self.rows, self.ids
        table = self.accounts["tables"][number]
        bank, layout, prison = (self.accounts[(number, k)] for k in ("bank", "layout", "prison"))
        hour, minute = SEANCES[index]
        opened = dt.datetime.combine(day, dt.time(hour, minute), tzinfo=tz)
        closes = opened + dt.timedelta(hours=SEANCE_HOURS)
        shift = ids("floor_shift")
        chef, tailleur, croupiers = crew["chef_de_partie"], crew["tailleur"], crew["croupier"]
        commissaire, caissier = self.house["commissaire"], self.house["caissier"]
        # The pack: received, seal verified, opened here.
        pack = ids("shoes_pack")
        seal = f"M{day:%y%m%d}-{number}-{index}"
        rows.add(
            "shoes_pack",
            pack,
            "sixain",
            "bench",
            "-",
            seal,
            "-",
            opened - dt.timedelta(days=1),
            caissier.pk,
            "-",
            "retired",
        )
        rows.add(
            "shoes_sealverification",
            ids("shoes_sealverification"),
            pack,
            commissaire.pk,
            opened - dt.timedelta(minutes=30),
            seal,
            "intact",
            "",
        )
        self._event(pack, opened - dt.timedelta(minutes=5), chef, "opened", table, shift)
        self.chain.add(
            at=opened,
            actor=chef,
            action="shift.opened",
            subject=("floor.shift", shift),
            payload={"table": number, "float": OPENING_FLOAT, "chips": {"10000": 200}},
        )
        target = rng.randint(COUPS - 10, COUPS + 10)
        coups = 0
        taille = 0
        seq = 0
        result = 0
        moment = opened + dt.timedelta(minutes=2)
        step = (closes - moment - dt.timedelta(minutes=10)) / (target + 8)
        late_stakes = self._count(LATE_STAKE_PER_SEANCE)
        cancels = self._count(CANCELLED_PER_SEANCE)
        foreign = self._count(FOREIGN_CARD_PER_SEANCE)
        while coups < target:
            taille += 1
            cards = cut(shuffled(rng, SIXAIN), rng.randint(1, 311))
            self._event(
                pack, moment, croupiers[0], "shuffled", table, shift, details={"by": "croupier"}
            )
            self._event(
                pack, moment, tailleur, "shuffled", table, shift, details={"by": "tailleur"}
            )
            self._event(pack, moment, tailleur, "cut", table, shift, person="un joueur")
            stakes: dict[int, list[Any]] = {}
            for n in range(1, 41):
                stakes[n] = [
                    Stake(
                        f"{shift}.{taille}.{n}.{i}",
                        rng.choice(list(Chance)),
                        rng.choices(AMOUNTS, AMOUNT_WEIGHTS)[0],
                    )
                    for i in range(rng.randint(1, 6))
                ]
            played = play_talon(cards, stakes, self.rules, prison=self.prison[number])
            assert not played.end.settlements, "baden-1854 carries the prison over (no refunds)"
            self.prison[number] = played.end.prison
            shift_in = 0  # coups cancelled so far in this taille: the floor's numbers run past them
            for record in played.coups:
                if cancels and rng.random() < 1 / 40:
                    cancels -= 1
                    result += self._cancelled(
                        shift, pack, taille, record.number + shift_in, moment, crew, table, number
                    )
                    shift_in += 1
                    moment += step
                coup = ids("floor_coup")
                floor_number = record.number + shift_in
                rows.add(
                    "floor_coup",
                    coup,
                    shift,
                    pack,
                    taille,
                    floor_number,
                    self.posted.pk,
                    self.posted_min,
                    self.posted_max,
                    moment,
                    tailleur.pk,
                    "settled",
                )
                self.chain.add(
                    at=moment,
                    actor=tailleur,
                    action="coup.opened",
                    subject=("floor.coup", coup),
                    payload={
                        "table": number,
                        "pack": seal,
                        "number": floor_number,
                        "reglement": f"{self.posted.name} v{self.posted.version}",
                    },
                )
                croupier = croupiers[floor_number % 2]
                holders = {}
                for s in stakes.get(record.number, ()):
                    pk = ids("floor_stake")
                    holder = self._holder(number)
                    holders[s.id] = holder
                    self.stake_of[s.id] = (pk, coup, holder)
                    rows.add(
                        "floor_stake",
                        pk,
                        coup,
                        f"s{pk}",
                        holder,
                        s.chance.value,
                        s.amount,
                        False,
                        "",
                        moment + dt.timedelta(seconds=20),
                        croupier.pk,
                    )
                    self._move(
                        moment + dt.timedelta(seconds=20),
                        layout,
                        holder,
                        s.amount,
                        "stake_placed",
                        shift,
                        f"coup:{coup}:stake:{pk}",
                        f"stake:{pk}:placed",
                        croupier,
                    )
                    self.chain.add(
                        at=moment + dt.timedelta(seconds=20),
                        actor=croupier,
                        action="stake.placed",
                        subject=("floor.stake", pk),
                        payload={
                            "coup": coup,
                            "ref": f"s{pk}",
                            "holder": str(holder),
                            "chance": s.chance.value,
                            "amount": s.amount,
                            "insured": False,
                            "on_refait": "",
                        },
                    )
                self.chain.add(
                    at=moment + dt.timedelta(seconds=50),
                    actor=tailleur,
                    action="coup.betting_closed",
                    subject=("floor.coup", coup),
                    payload={"stakes": len(holders)},
                )
                if late_stakes and rng.random() < 1 / 30:
                    late_stakes -= 1
                    self._late_stake(
                        coup, floor_number, table, moment + dt.timedelta(seconds=70), croupier
                    )
                dealt_at = moment + dt.timedelta(seconds=60)
                for i, code in enumerate(record.cards):
                    seq += 1
                    self.chain.add(
                        at=dealt_at,
                        actor=tailleur,
                        action="coup.card_laid",
                        subject=("floor.coup", coup),
                        payload={
                            "card": str(code),
                            "seq": seq,
                            "complete": i == len(record.cards) - 1,
                        },
                    )
                    rows.add(
                        "shoes_cardlaid",
                        ids("shoes_cardlaid"),
                        pack,
                        seq,
                        taille,
                        str(code),
                        False,
                        dealt_at,
                        tailleur.pk,
                        shift,
                        coup,
                    )
                if foreign and rng.random() < 1 / 60:
                    foreign -= 1
                    self._foreign_card(pack, seal, table, number, shift, dealt_at, tailleur)
                settled_at = moment + dt.timedelta(seconds=100)
                result += self._settle(
                    coup, record, settled_at, croupier, shift, bank, layout, prison
                )
                outcome = record.outcome
                announcement = outcome.announcement
                said = {
                    "noir": announcement.noir,
                    "rouge": announcement.rouge,
                    "result": announcement.result,
                }
                spoken = announcement.result or ""
                if spoken and rng.random() < MISMATCH_PER_COUP:
                    spoken = self._mismatch(
                        coup, floor_number, table, outcome, spoken, settled_at, tailleur
                    )
                rows.add(
                    "floor_coupresult",
                    ids("floor_coupresult"),
                    coup,
                    _json([str(c) for c in outcome.noir.cards]),
                    _json([str(c) for c in outcome.rouge.cards]),
                    outcome.noir.total,
                    outcome.rouge.total,
                    outcome.result.value,
                    outcome.couleur.value if outcome.couleur else "",
                    record.void,
                    record.last,
                    _json(said),
                    spoken,
                    _json(
                        [
                            {
                                "stake": str(self.stake_of[p.stake][0]),
                                "chance": p.chance.value,
                                "held": p.held,
                                "level": p.level,
                            }
                            for p in record.settlements
                            if p.outcome.value in ("imprisoned", "still_imprisoned")
                        ]
                    ),
                    settled_at,
                    croupier.pk,
                )
                self.chain.add(
                    at=settled_at,
                    actor=croupier,
                    action="coup.settled",
                    subject=("floor.coup", coup),
                    payload={
                        "result": outcome.result.value,
                        "noir": outcome.noir.total,
                        "rouge": outcome.rouge.total,
                        "couleur": outcome.couleur.value if outcome.couleur else "",
                        "void": record.void,
                        "last": record.last,
                        "settlements": [
                            [
                                str(self.stake_of[p.stake][0]),
                                p.outcome.value,
                                p.paid,
                                p.returned,
                                p.to_bank,
                                p.premium,
                                p.held,
                                p.level,
                            ]
                            for p in record.settlements
                        ],
                    },
                )
                coups += 1
                moment += step
            self._event(
                pack,
                moment,
                tailleur,
                "passed",
                table,
                shift,
                details={"reason": played.end.reason.value},
            )
        self._event(pack, closes - dt.timedelta(minutes=3), chef, "retired", table, shift)
        self.month.rows["coups"] += coups
        self.month.rows["tailles"] += taille
        self.chain.add(
            at=closes,
            actor=chef,
            action="shift.closed",
            subject=("floor.shift", shift),
            payload={
                "opening": OPENING_FLOAT,
                "result": result,
                "closing": OPENING_FLOAT + result,
                "variance": 0,
                "coups": coups,
                "tailles": taille,
                "pack": seal,
            },
        )
        return shift, result, [(opened, closes, pack)]

    @property
    def posted_min(self) -> int:
        return int(self.accounts["min_stake"])

    @property
    def posted_max(self) -> int:
        return int(self.accounts["max_stake"])

    def _count(self, rate: float) -> int:
        """How many of a rare event a séance has: Poisson with mean ``rate``."""
        count, threshold, product = 0, pow(2.718281828459045, -rate), self.rng.random()
        while product > threshold:
            count += 1
            product *= self.rng.random()
        return count

    def _holder(self, number: int) -> int:
        if self.rng.random() < 0.6:
            return self.accounts["patrons"][self.rng.randrange(PATRONS)]
        return self.accounts[(number, "seat", self.rng.randint(1, 9))]

    def _move(
        self,
        at: dt.datetime,
        debit: int,
        credit: int,
        amount: int,
        kind: str,
        shift: int,
        reference: str,
        key: str,
        actor: Any,
    ) -> None:
        self.rows.add(
            "floor_movement",
            self.ids("floor_movement"),
            at,
            debit,
            credit,
            amount,
            kind,
            shift,
            reference,
            key,
            actor.pk,
        )

    def _event(
        self,
        pack: int,
        at: dt.datetime,
        actor: Any,
        kind: str,
        table: int,
        shift: int,
        *,
        person: str = "",
        details: dict[str, Any] | None = None,
    ) -> None:
        self.rows.add(
            "shoes_packevent",
            self.ids("shoes_packevent"),
            pack,
            at,
            actor.pk,
            kind,
            table,
            shift,
            person,
            _json(details or {}),
        )

    def _settle(
        self,
        coup: int,
        record: Any,
        at: dt.datetime,
        croupier: Any,
        shift: int,
        bank: int,
        layout: int,
        prison: int,
    ) -> int:
        """The settlements and movements of one coup (``coups.settlement_entries``); returns what
        the bank won."""
        won = 0
        to_bank_kind = {
            "lost": "loss_collected",
            "half_lost": "half_taken",
            "prison_lost": "prison_lost",
            "refunded": "half_taken",
            "still_imprisoned": "half_taken",
        }
        returned_kind = {
            "won": "stake_returned",
            "push": "push_returned",
            "half_lost": "half_returned",
            "freed": "freed",
            "void": "void_returned",
            "refunded": "refunded",
        }
        collections, payments = [], []
        for s in record.settlements:
            stake, placed_in, holder = self.stake_of[s.stake]
            outcome = s.outcome.value
            self.rows.add(
                "floor_settlement",
                self.ids("floor_settlement"),
                coup,
                stake,
                outcome,
                s.paid,
                s.returned,
                s.to_bank,
                s.premium,
                s.held,
                s.level,
            )
            ref = f"coup:{coup}:stake:{stake}"
            key = f"{ref}:{outcome}"
            source = layout if placed_in == coup and outcome != "refunded" else prison
            if s.premium:
                collections.append(
                    (bank, holder, s.premium, "insurance_premium", f"{key}:premium", ref)
                )
            if s.to_bank:
                collections.append(
                    (bank, source, s.to_bank, to_bank_kind[outcome], f"{key}:to_bank", ref)
                )
            if outcome == "imprisoned":
                collections.append((prison, layout, s.held, "imprisoned", f"{key}:imprisoned", ref))
            if s.returned:
                payments.append(
                    (holder, source, s.returned, returned_kind[outcome], f"{key}:returned", ref)
                )
            if s.paid:
                payments.append((holder, bank, s.paid, "win_paid", f"{key}:paid", ref))
        for debit, credit, amount, kind, key, ref in collections + payments:
            self._move(at, debit, credit, amount, kind, shift, ref, key, croupier)
            won += amount if debit == bank else -amount if credit == bank else 0
        return won

    def _cancelled(
        self,
        shift: int,
        pack: int,
        taille: int,
        number: int,
        at: dt.datetime,
        crew: dict[str, Any],
        table: int,
        table_number: int,
    ) -> int:
        """A coup the chef de partie cancels at betting: its stakes placed and returned."""
        chef, tailleur, croupier = crew["chef_de_partie"], crew["tailleur"], crew["croupier"][0]
        layout = self.accounts[(table_number, "layout")]
        coup = self.ids("floor_coup")
        self.rows.add(
            "floor_coup",
            coup,
            shift,
            pack,
            taille,
            number,
            self.posted.pk,
            self.posted_min,
            self.posted_max,
            at,
            tailleur.pk,
            "cancelled",
        )
        returned = []
        for _ in range(self.rng.randint(1, 4)):
            pk = self.ids("floor_stake")
            holder = self._holder(table_number)
            amount = self.rng.choices(AMOUNTS, AMOUNT_WEIGHTS)[0]
            self.rows.add(
                "floor_stake",
                pk,
                coup,
                f"s{pk}",
                holder,
                "rouge",
                amount,
                False,
                "",
                at,
                croupier.pk,
            )
            self._move(
                at,
                layout,
                holder,
                amount,
                "stake_placed",
                shift,
                f"coup:{coup}:stake:{pk}",
                f"stake:{pk}:placed",
                croupier,
            )
            self._move(
                at + dt.timedelta(seconds=40),
                holder,
                layout,
                amount,
                "void_returned",
                shift,
                f"coup:{coup}:stake:{pk}",
                f"coup:{coup}:stake:{pk}:cancelled",
                chef,
            )
            returned.append([f"s{pk}", amount])
        reason = "le tailleur a fait tomber le sabot"
        when = at + dt.timedelta(seconds=40)
        self.rows.add(
            "floor_coupcancellation",
            self.ids("floor_coupcancellation"),
            coup,
            when,
            chef.pk,
            reason,
        )
        self.chain.add(
            at=when,
            actor=chef,
            action="coup.cancelled",
            subject=("floor.coup", coup),
            payload={"reason": reason, "phase": "betting", "cards": [], "returned": len(returned)},
        )
        self._anomaly(
            "coup_cancelled",
            "warning",
            ("floor.coup", coup),
            f"Table {table_number} (Trente-et-Quarante) coup {number} cancelled by {chef.username}: {reason}",
            {
                "coup": coup,
                "phase": "betting",
                "cards": [],
                "stakes_returned": returned,
                "reason": reason,
            },
            sorted({chef.pk, tailleur.pk}),
            when,
            chef,
        )
        return 0

    def _late_stake(
        self, coup: int, number: int, table: int, at: dt.datetime, croupier: Any
    ) -> None:
        what = "stake"
        message = (
            f"{what} refused: the first card of coup {number} is on the table "
            "(no stake may be placed, withdrawn or moved after it)"
        )
        table_number = self._number_of(table)
        self._anomaly(
            "late_stake",
            "critical",
            ("floor.coup", coup),
            f"Table {table_number} (Trente-et-Quarante): {message}",
            {
                "coup": coup,
                "number": number,
                "what": what,
                "amount": self.rng.choices(AMOUNTS, AMOUNT_WEIGHTS)[0],
            },
            [croupier.pk],
            at,
            croupier,
        )

    def _mismatch(
        self,
        coup: int,
        number: int,
        table: int,
        outcome: Any,
        computed: str,
        at: dt.datetime,
        tailleur: Any,
    ) -> str:
        phrases = [
            "rouge gagne et couleur",
            "rouge gagne, couleur perd",
            "rouge perd, couleur gagne",
            "rouge perd et couleur",
            "après",
        ]
        spoken = self.rng.choice([p for p in phrases if p != computed])
        self._anomaly(
            "announcement_mismatch",
            "warning",
            ("floor.coup", coup),
            f"Table {self._number_of(table)} (Trente-et-Quarante) coup {number}: "
            f"announced {spoken!r}, the cards say {computed!r}",
            {
                "spoken": spoken,
                "computed": computed,
                "noir": outcome.noir.total,
                "rouge": outcome.rouge.total,
            },
            [tailleur.pk],
            at,
            tailleur,
        )
        return spoken

    def _foreign_card(
        self,
        pack: int,
        seal: str,
        table: int,
        number: int,
        shift: int,
        at: dt.datetime,
        tailleur: Any,
    ) -> None:
        code = self.rng.choice(["AS", "KH", "7D", "QC"])
        details = {"card": code, "pack_holds": 6, "already_laid": 6}
        self._event(pack, at, tailleur, "foreign_card", table, shift, details=details)
        self._anomaly(
            "foreign_card",
            "critical",
            ("shoes.pack", pack),
            f"{code} refused: pack {seal} holds it 6 time(s) and 6 already came out; a foreign card",
            {**details, "pack": seal, "shift": shift, "table": number},
            [tailleur.pk],
            at,
            tailleur,
        )

    def _number_of(self, table: int) -> int:
        return self.accounts["numbers"][table]

    def _anomaly(
        self,
        detector: str,
        severity: str,
        subject: tuple[str, object],
        summary: str,
        evidence: dict[str, Any],
        involved: list[int],
        at: dt.datetime,
        actor: Any,
    ) -> None:
        pk = self.ids("audit_anomaly")
        self.rows.add(
            "audit_anomaly",
            pk,
            detector,
            severity,
            subject[0],
            str(subject[1]),
            summary[:300],
            _json(evidence),
            at,
            involved,
            None,
            "open",
        )
        self.chain.add(
            at=at,
            actor=None,
            action="anomaly.raised",
            subject=("audit.anomaly", pk),
            payload={
                "detector": detector,
                "severity": severity,
                "summary": summary,
                "evidence": evidence,
                "involved": involved,
            },
        )
        self.month.rows[f"anomalies:{detector}"] += 1


def _setup(
    prefix: str, tables: int
) -> tuple[dict[str, Any], dict[str, Any], Any, dict[str, list[Any]]]:
    """Through the services: the house, the posted règlement, the tables, the people. Returns the
    house's people, the accounts (ids), the posted règlement and the staff by post."""
    from django.contrib.auth.models import User

    from casino import clock
    from casino.floor.models import Account, PostedReglement
    from casino.floor.services import house_account, reglement_load_presets, table_create
    from casino.people.roles import Role
    from casino.people.services import staff_create
    from tests.bench.harness import bench_house

    directeur, commissaire = bench_house(prefix)
    if not PostedReglement.objects.filter(name="baden-1854").exists():
        reglement_load_presets(
            actor=commissaire, effective_from=clock.now().date() - dt.timedelta(days=400)
        )
    posted = PostedReglement.objects.filter(name="baden-1854").order_by("-version").first()
    assert posted is not None
    caissier = User.objects.filter(username=f"{prefix}-caissier").first() or staff_create(
        actor=directeur, username=f"{prefix}-caissier", full_name="caissier", roles=[Role.CAISSIER]
    )
    house = {"directeur": directeur, "commissaire": commissaire, "caissier": caissier}
    min_stake, max_stake = 500, 600_000
    accounts: dict[Any, Any] = {
        "tables": {},
        "numbers": {},
        "min_stake": min_stake,
        "max_stake": max_stake,
    }
    seats = []
    for number in range(FIRST_TABLE, FIRST_TABLE + tables):
        table = table_create(
            actor=directeur,
            number=number,
            game="trente-et-quarante",
            reglement_id=posted.pk,
            min_stake=min_stake,
            max_stake=max_stake,
        )
        accounts["tables"][number] = table.pk
        accounts["numbers"][table.pk] = number
        for account in Account.objects.filter(table=table):
            accounts[(number, account.kind)] = account.pk
        seats += [
            Account(code=f"T{number}:seat:{k}", kind=Account.Kind.SEAT, table=table, name=str(k))
            for k in range(1, 10)
        ]
    for seat in Account.objects.bulk_create(seats):
        accounts[(accounts["numbers"][seat.table_id], "seat", int(seat.name))] = seat.pk
    patrons = Account.objects.bulk_create(
        Account(code=f"patron:{prefix}{n:04d}", kind=Account.Kind.PATRON, name=f"{prefix}{n:04d}")
        for n in range(PATRONS)
    )
    accounts["patrons"] = [p.pk for p in patrons]
    accounts["cage"] = house_account(Account.Kind.CAGE).pk
    return house, accounts, posted, _staff(prefix, directeur, tables)


def build_month(
    *,
    days: int = DAYS,
    tables: int = TABLES,
    first_day: dt.date | None = None,
    seed: int = 16,
    prefix: str = "month",
) -> Month:
    """Writes a month of a ``tables``-table room (see the module's docstring) ending the day
    before yesterday (every séance closed, every day over) unless ``first_day`` says otherwise.
    Commits day by day. Returns what it wrote."""
    from django.db import connection, transaction
    from django.utils import timezone

    from casino import clock
    from casino.simulation.seance import chips_for

    started = time.perf_counter()
    tz = timezone.get_current_timezone()
    if first_day is None:
        first_day = timezone.localdate(clock.now()) - dt.timedelta(days=days + 1)
    house, accounts, posted, people = _setup(prefix, tables)
    numbers = sorted(accounts["tables"])
    month = Month(first_day=first_day, days=days, tables=numbers, people=people)
    directeur = house["directeur"]
    with connection.cursor() as wrapper:
        cursor = wrapper.cursor  # psycopg's own: COPY
        room = _Room(
            seed=seed, month=month, accounts=accounts, house=house, posted=posted, cursor=cursor
        )
        ids, rows = room.ids, room.rows
        for d, day in enumerate(month.day_list):
            with transaction.atomic():
                for index in range(len(SEANCES)):
                    slot = []
                    for i, number in enumerate(numbers):
                        table = accounts["tables"][number]
                        chefs = people[f"chef_de_partie:{index}"]
                        tailleurs = people[f"tailleur:{index}"]
                        croupiers = people[f"croupier:{index}"]
                        crew = {
                            "chef_de_partie": chefs[(i + d) % len(chefs)],
                            "tailleur": tailleurs[(i + 3 * d) % len(tailleurs)],
                            "croupier": [
                                croupiers[(2 * i + 5 * d) % len(croupiers)],
                                croupiers[(2 * i + 1 + 5 * d) % len(croupiers)],
                            ],
                        }
                        shift, result, [(opened, closes, _pack)] = room.seance(
                            day, number, index, crew, tz
                        )
                        month.shifts[(day, number, index)] = shift
                        slot.append(shift)
                        chef, croupier = crew["chef_de_partie"], crew["croupier"][0]
                        opening = ids("floor_floatcount")
                        at = opened - dt.timedelta(minutes=10)
                        rows.add(
                            "floor_floatcount",
                            opening,
                            table,
                            None,
                            "opening",
                            _json(chips_for(OPENING_FLOAT)),
                            OPENING_FLOAT,
                            croupier.pk,
                            at,
                        )
                        rows.add(
                            "floor_countsignature",
                            ids("floor_countsignature"),
                            opening,
                            directeur.pk,
                            at,
                        )
                        rows.add(
                            "floor_shift",
                            shift,
                            table,
                            posted.pk,
                            accounts["min_stake"],
                            accounts["max_stake"],
                            opening,
                            opened,
                            chef.pk,
                            None,
                        )
                        for person, post in (
                            (chef, "chef_de_partie"),
                            (crew["tailleur"], "tailleur"),
                            *((c, "croupier") for c in crew["croupier"]),
                        ):
                            duty = ids("floor_duty")
                            rows.add("floor_duty", duty, shift, person.pk, post, opened, chef.pk)
                            rows.add(
                                "floor_dutyend",
                                ids("floor_dutyend"),
                                duty,
                                closes,
                                chef.pk,
                                "séance closed",
                            )
                        room._move(
                            opened,
                            accounts[(number, "bank")],
                            accounts["cage"],
                            OPENING_FLOAT,
                            "float",
                            shift,
                            f"shift:{shift}:float",
                            f"shift:{shift}:float",
                            chef,
                        )
                        closing = ids("floor_floatcount")
                        total = OPENING_FLOAT + result
                        rows.add(
                            "floor_floatcount",
                            closing,
                            table,
                            shift,
                            "closing",
                            _json(chips_for(total)),
                            total,
                            croupier.pk,
                            closes,
                        )
                        rows.add(
                            "floor_countsignature",
                            ids("floor_countsignature"),
                            closing,
                            directeur.pk,
                            closes,
                        )
                    rows.flush(cursor)
                    cursor.execute(
                        "UPDATE floor_shift s SET closed_at = c.at FROM floor_floatcount c "
                        "WHERE c.shift_id = s.id AND c.moment = 'closing' AND s.id = ANY(%s)",
                        [slot],
                    )
        room.ids.settle(cursor)
    month.rows.update(rows.counts)
    month.seconds = time.perf_counter() - started
    return month


def summary(month: Month) -> list[tuple[str, str]]:
    """The month's rows and time, for a bench's report."""
    tables = {k: v for k, v in month.rows.items() if "_" in k and ":" not in k}
    total = sum(tables.values())
    rows = [
        (
            "days x tables x séances",
            f"{month.days} x {len(month.tables)} x {len(SEANCES)} = {len(month.shifts):,} séances",
        ),
        ("coups (tailles)", f"{month.rows['coups']:,} ({month.rows['tailles']:,} tailles)"),
        *((table, f"{count:,} rows") for table, count in sorted(tables.items())),
        ("rows in all", f"{total:,}"),
        *(
            (name.split(":", 1)[1], f"{count:,} anomalies")
            for name, count in sorted(month.rows.items())
            if name.startswith("anomalies:")
        ),
        ("written in", f"{month.seconds:.1f} s ({total / month.seconds:,.0f} rows/s)"),
    ]
    if month.cloned is not None:
        rows.append(("this run: copied from the kept template in", f"{month.cloned:.1f} s"))
    return rows


def _key(**arguments: Any) -> str:
    """What a month written here depends on: this module, every migration, the arguments."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256(Path(__file__).read_bytes())
    for path in sorted(root.glob("*/**/migrations/*.py")):
        if ".venv" not in path.parts:
            digest.update(str(path.relative_to(root)).encode() + path.read_bytes())
    digest.update(repr(sorted(arguments.items())).encode())
    return digest.hexdigest()[:16]


def _dumps(month: Month) -> str:
    import json

    return json.dumps(
        {
            "first_day": month.first_day.isoformat(),
            "days": month.days,
            "tables": month.tables,
            "shifts": [[d.isoformat(), t, i, pk] for (d, t, i), pk in month.shifts.items()],
            "people": {post: [p.pk for p in people] for post, people in month.people.items()},
            "rows": dict(month.rows),
            "seconds": month.seconds,
        }
    )


def _loads(text: str) -> Month:
    import json

    from django.contrib.auth.models import User

    data = json.loads(text)
    users = User.objects.in_bulk({pk for pks in data["people"].values() for pk in pks})
    return Month(
        first_day=dt.date.fromisoformat(data["first_day"]),
        days=data["days"],
        tables=data["tables"],
        shifts={(dt.date.fromisoformat(d), t, i): pk for d, t, i, pk in data["shifts"]},
        people={post: [users[pk] for pk in pks] for post, pks in data["people"].items()},
        rows=Counter(data["rows"]),
        seconds=data["seconds"],
    )


def month_database(*, days: int = DAYS, tables: int = TABLES, seed: int = 16) -> Month:
    """The month on a fresh, migrated bench database: a copy of the template the server keeps
    when one was written by the same code and migrations with the same arguments on the same day
    (``CREATE DATABASE ... TEMPLATE``: seconds), else written (``build_month``: minutes) and kept
    as that template for the next run (the previous templates dropped). ``Month.cloned`` says
    how long the copy took (None: written now)."""
    import os
    from urllib.parse import urlsplit, urlunsplit

    import psycopg
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone
    from psycopg import sql

    from casino import clock

    first_day = timezone.localdate(clock.now()) - dt.timedelta(days=days + 1)
    template = f"bench_month_{_key(days=days, tables=tables, seed=seed, first_day=first_day)}"
    parts = urlsplit(os.environ["DATABASE_URL"])
    name = parts.path.lstrip("/")
    server = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(server, autocommit=True) as admin:
        kept = admin.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            [template],
        ).fetchone()
    if kept and kept[0]:
        started = time.perf_counter()
        connections.close_all()
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )
            admin.execute(
                sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                    sql.Identifier(name), sql.Identifier(template)
                )
            )
        month = _loads(kept[0])
        month.cloned = time.perf_counter() - started
        return month
    # Written on a database of its own: the one the other benches of this run wrote into would
    # become the template with their rows (another room's séances on the same days).
    connections.close_all()
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    call_command("migrate", verbosity=0)
    month = build_month(days=days, tables=tables, first_day=first_day, seed=seed)
    connections.close_all()  # a template is copied with nobody connected to it
    with psycopg.connect(server, autocommit=True) as admin:
        old = admin.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'bench_month_%%'"
        ).fetchall()
        for (stale,) in old:
            admin.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(stale)))
        admin.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                sql.Identifier(template), sql.Identifier(name)
            )
        )
        admin.execute(
            sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(template), sql.Literal(_dumps(month))
            )
        )
    return month


def main(argv: list[str]) -> int:
    """``python -m tests.bench.month [days]``: the month on a fresh bench database (kept as a
    template: a second run copies it)."""
    from tests.bench.harness import report, use_bench_database

    use_bench_database()
    days = int(argv[0]) if argv else DAYS
    month = month_database(days=days)
    report(f"A month of a {TABLES}-table room, written by COPY", summary(month))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
