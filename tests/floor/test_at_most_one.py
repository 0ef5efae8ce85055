"""The house's "at most one" rules are the database's (docs/uniqueness.md): whoever writes, and
however many write at once, the second is refused, and the refusal reaches the person as the
usual 409 ``{code, message, where}``.

Concurrency is real here: threads, each with its own connection as the application's role, held
together by a barrier and by a pause inside their transactions, so that each has passed any check
of its own before the other commits."""

from __future__ import annotations

import functools
import re
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from django.db import IntegrityError, connection, connections, transaction
from rest_framework.test import APIClient

from casino import clock
from casino.database_rules import RULES, RuleViolated
from casino.floor.coups import coup_open, stake_place
from casino.floor.models import Coup, Duty, Settlement
from casino.floor.services import count_countersign, count_record, shift_open, table_create
from casino.people.roles import Role
from casino.people.services import staff_create
from casino.people.tokens import token_issue
from shoes.errors import CardRefused
from shoes.models import CardLaid, PackEvent, PackState
from shoes.services import card_lay, current_taille
from tests.conftest import FLOAT, lay_in_coups

ROOT = Path(__file__).resolve().parents[2]


def together(*acts: Callable[[], object]) -> list[object]:
    """Run the acts at the same moment, each in a thread with its own database connection;
    return what each returned or raised, in order."""
    start = threading.Barrier(len(acts))
    outcomes: list[object] = [None] * len(acts)

    def run(index: int, act: Callable[[], object]) -> None:
        try:
            start.wait()
            outcomes[index] = act()
        except Exception as exc:
            outcomes[index] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, a)) for i, a in enumerate(acts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return outcomes


def open_duties(person) -> int:  # type: ignore[no-untyped-def]
    return Duty.objects.filter(person=person, end__isnull=True).count()


_tailleurs = iter(range(1000))


def _tailleur(cast):  # type: ignore[no-untyped-def]
    return staff_create(
        actor=cast.directeur,
        username=f"tailleur{next(_tailleurs)}",
        full_name="tailleur",
        roles=[Role.TAILLEUR],
    )


@pytest.fixture
def hire_floor(cast, posted):  # type: ignore[no-untyped-def]
    """``hire_floor(n)``: a new table with a countersigned opening count, its own chef de partie
    and croupier (nobody else's), numbered from 100."""
    numbers = iter(range(100, 1000))

    def make():  # type: ignore[no-untyped-def]
        n = next(numbers)
        chef, croupier = (
            staff_create(actor=cast.directeur, username=f"{name}{n}", full_name=name, roles=[role])
            for name, role in (("chef", Role.CHEF_DE_PARTIE), ("croupier", Role.CROUPIER))
        )
        table = table_create(
            actor=cast.directeur,
            number=n,
            game="trente-et-quarante",
            reglement_id=posted.pk,
            min_stake=500,
            max_stake=600_000,
        )
        count = count_record(actor=croupier, table_id=table.pk, moment="opening", chips=FLOAT)
        count_countersign(actor=cast.directeur, count_id=count.pk)
        return chef, croupier, table, count

    return make


def post(user, path: str, body: dict[str, object]):  # type: ignore[no-untyped-def]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_issue(user=user)[1]}")
    return client.post(path, body, format="json", HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


# --- the rules are the database's, whoever writes -------------------------------------------------


def test_every_rule_is_held_by_the_schema_and_listed_in_the_docs(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint UNION SELECT indexname FROM pg_indexes "
            "UNION SELECT unnest(regexp_matches(prosrc, 'CONSTRAINT = ''(\\w+)''', 'g')) "
            "FROM pg_proc"
        )
        held = {name for (name,) in cursor.fetchall()}
    docs = (ROOT / "docs" / "uniqueness.md").read_text()
    assert sorted(set(RULES) - held) == []
    assert sorted(name for name in RULES if f"`{name}`" not in docs) == []


def test_a_second_open_duty_is_refused_by_the_database_itself(cast, shift, posted):
    already = "tailleur is already on duty at table 1"
    with pytest.raises(RuleViolated, match=already) as refused, transaction.atomic():
        Duty.objects.create(  # no service: raw, as a bug or a script would
            shift=shift,
            person=cast.tailleur,
            post="croupier",
            started_at=clock.now(),
            assigned_by=cast.chef,
        )
    assert (refused.value.code, refused.value.where) == ("conflict", "person")
    assert isinstance(refused.value, IntegrityError)  # still what code catching those expects
    assert open_duties(cast.tailleur) == 1


def test_one_tailleur_and_one_chef_at_a_time_at_a_seance(cast, shift):
    from tests.actors import hire

    relief = hire(cast.directeur, "relief", Role.TAILLEUR)
    with pytest.raises(RuleViolated, match="one_post_holder_per_seance"), transaction.atomic():
        Duty.objects.create(
            shift=shift,
            person=relief,
            post="tailleur",
            started_at=clock.now(),
            assigned_by=cast.chef,
        )


def test_nobody_goes_on_duty_in_a_closed_seance(cast, shift):
    from tests.actors import hire
    from tests.conftest import close_seance

    close_seance(cast, shift, FLOAT)
    late = hire(cast.directeur, "late", Role.CROUPIER)
    with pytest.raises(RuleViolated, match="no_duty_in_a_closed_seance"), transaction.atomic():
        Duty.objects.create(
            shift=shift, person=late, post="croupier", started_at=clock.now(), assigned_by=cast.chef
        )


def test_two_transactions_putting_one_person_on_duty_wait_for_each_other(
    transactional_db, cast, hire_floor
):
    """The trigger locks the person before it looks: the second insert waits for the first to
    commit, then sees its duty. Without the lock both would look at the same moment, see nobody,
    and both commit."""
    seances = []
    for _ in range(2):
        chef, croupier, table, count = hire_floor()
        seances.append(
            shift_open(
                actor=chef,
                table=table,
                count_id=count.pk,
                tailleur=_tailleur(cast),
                croupiers=[croupier],
            )
        )
    person = staff_create(
        actor=cast.directeur, username="extra", full_name="extra", roles=[Role.CROUPIER]
    )

    def insert(seance) -> str:  # type: ignore[no-untyped-def]
        with transaction.atomic():
            Duty.objects.create(
                shift=seance,
                person=person,
                post="croupier",
                started_at=clock.now(),
                assigned_by=seance.opened_by,
            )
            time.sleep(0.3)  # the other is inside its transaction too
        return "on duty"

    outcomes = together(*(lambda s=s: insert(s) for s in seances))
    assert sorted(map(_outcome, outcomes)) == ["on duty", "one_duty_per_person"]
    assert open_duties(person) == 1


def _outcome(outcome: object) -> str:
    if isinstance(outcome, RuleViolated):
        return outcome.rule
    return outcome if isinstance(outcome, str) else repr(outcome)


# --- concurrent acts over the API --------------------------------------------------------------


PAIRS = 10  # the fault suite plays 50 over gunicorn (tests/reliability)


def test_concurrent_seance_openings_naming_one_tailleur_put_them_on_duty_once(
    transactional_db, cast, hire_floor
):
    answers = []
    for _ in range(PAIRS):
        tailleur = _tailleur(cast)
        openings = [
            functools.partial(
                post,
                chef,
                "/api/v1/shifts",
                {
                    "table": table.number,
                    "count": count.pk,
                    "tailleur": tailleur.username,
                    "croupiers": [croupier.username],
                },
            )
            for chef, croupier, table, count in (hire_floor(), hire_floor())
        ]
        answers.append(sorted(r.status_code for r in together(*openings)))
        assert open_duties(tailleur) == 1
    assert answers == [[201, 409]] * PAIRS


def test_concurrent_reliefs_naming_one_person_put_them_on_duty_once(
    transactional_db, cast, hire_floor
):
    """Before the database held this rule, 19 pairs in 20 put the person on duty twice: the
    relief's check ran before anything of the person was locked."""
    seances = []
    for _ in range(2):
        chef, croupier, table, count = hire_floor()
        seance = shift_open(
            actor=chef,
            table=table,
            count_id=count.pk,
            tailleur=_tailleur(cast),
            croupiers=[croupier],
        )
        seances.append((chef, seance))
    for n in range(PAIRS):
        person = staff_create(
            actor=cast.directeur, username=f"relief{n}", full_name="relief", roles=[Role.CROUPIER]
        )
        reliefs = [
            functools.partial(
                post,
                chef,
                "/api/v1/duties",
                {"shift": seance.pk, "person": person.username, "post": "croupier"},
            )
            for chef, seance in seances
        ]
        answers = together(*reliefs)
        refused = next(a for a in answers if a.status_code != 201)
        assert sorted(a.status_code for a in answers) == [201, 409]
        assert refused.json()["code"] == "conflict"
        assert refused.json()["where"] == "person"
        assert open_duties(person) == 1


SERVICE_REFUSAL = r"Table \d+ \(Trente-et-Quarante\) a déjà le jeu RF-\d+ en service$"


def test_a_second_pack_opened_at_a_table_with_one_in_use_is_refused(cast, shift, verified):
    first, second = verified(), verified()
    assert post(cast.chef, f"/api/v1/packs/{first.pk}/open", {"shift": shift.pk}).status_code == 201
    refused = post(cast.tailleur, f"/api/v1/packs/{second.pk}/open", {"shift": shift.pk})
    assert refused.status_code == 409
    assert re.search(SERVICE_REFUSAL, refused.json()["message"]), refused.json()
    assert type(second).objects.get(pk=second.pk).state == PackState.VERIFIED


def test_two_packs_opened_at_one_table_at_once_leave_one_in_use(
    transactional_db, cast, shift, verified
):
    """The service's own check reads the table's packs without locking the table: when both
    requests pass it before either commits, the trigger refuses the second. On a loaded machine
    the first may commit before the second reads, and the service's check refuses it instead.
    Either way one pack is in use and the API answers the other in its usual shape."""
    packs = [verified(), verified()]
    answers = together(
        *(
            lambda pack=pack, who=who: post(
                who, f"/api/v1/packs/{pack.pk}/open", {"shift": shift.pk}
            )
            for pack, who in zip(packs, (cast.chef, cast.tailleur), strict=True)
        )
    )
    assert sorted(a.status_code for a in answers) == [201, 409]
    refused = next(a for a in answers if a.status_code == 409).json()
    assert set(refused) == {"code", "message", "where"}
    # In the language asked (French by default); the database's refusal names its rule.
    assert re.search(
        rf"^({SERVICE_REFUSAL}|la table a déjà le jeu RF-\d+ en service "
        r"\(règle one_pack_in_use_per_table)",
        refused["message"],
    ), refused
    opened = [p.pk for p in packs if type(p).objects.get(pk=p.pk).state == PackState.OPENED]
    assert len(opened) == 1


def test_a_pack_is_opened_once(cast, shift, verified):
    from shoes.services import pack_open

    pack = pack_open(actor=cast.chef, pack_id=verified().pk, shift_id=shift.pk)
    event = PackEvent.objects.get(pack=pack, kind="opened")
    with pytest.raises(RuleViolated, match="one_opening_per_pack"), transaction.atomic():
        PackEvent.objects.create(
            pack=pack, at=clock.now(), actor=cast.chef, kind="opened", table=None, shift=event.shift
        )


# --- coups ----------------------------------------------------------------------------------------


def test_one_coup_in_progress_and_one_number_per_taille(cast, shift, sixain_in_play):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    fields = {
        f.attname: getattr(coup, f.attname) for f in Coup._meta.concrete_fields if f.name != "id"
    }
    in_progress = "one_coup_in_progress_per_seance"
    with pytest.raises(RuleViolated, match=in_progress), transaction.atomic():
        Coup.objects.create(**fields)
    with pytest.raises(RuleViolated, match="one_coup_number_per_taille"), transaction.atomic():
        Coup.objects.create(**{**fields, "phase": "settled"})


def test_a_stake_is_settled_once_in_a_coup(cast, shift, sixain_in_play):
    coup = coup_open(actor=cast.tailleur, shift_id=shift.pk)
    stake_place(
        actor=cast.croupier, coup_id=coup.pk, ref="a", holder="1", chance="noir", amount=1000
    )
    lay_in_coups(cast, shift, ["KS", "7H", "9D", "2C", "5S", "TH", "QD", "AS", "4C", "3H", "9S"])
    settled = Settlement.objects.get(coup=coup)
    with pytest.raises(RuleViolated, match="one_settlement_per_stake"), transaction.atomic():
        Settlement.objects.create(coup=coup, stake=settled.stake, outcome="won", paid=1000)


def test_two_cards_laid_from_one_pack_at_once_see_each_other(
    transactional_db, cast, shift, sixain_in_play
):
    """The pack's last copy of a card, laid by two at the same moment: the second waits for the
    pack, then counts the first's card (``shoes_lay_card`` reads the pack's figures after its
    lock, in a statement of its own) and is refused as a foreign card, recorded. Counted beside
    the lock, it would have seen five copies out, and laid a seventh in the first's place."""
    pack = sixain_in_play
    taille = current_taille(pack)
    for _ in range(5):
        card_lay(actor=cast.tailleur, pack_id=pack.pk, code="AS", taille=taille, shift=shift)

    def lay() -> object:
        with transaction.atomic():
            try:
                laid = card_lay(
                    actor=cast.tailleur, pack_id=pack.pk, code="AS", taille=taille, shift=shift
                )
            except CardRefused as refused:
                return refused  # recorded, committed with the block, as a game's act does
            time.sleep(0.3)  # holding the pack: the other is waiting for it
            return laid.seq

    outcomes = together(lay, lay)
    assert sorted(type(o).__name__ for o in outcomes) == ["CardRefused", "int"], outcomes
    laid = CardLaid.objects.filter(pack=pack, card="AS", taille=taille)
    assert laid.count() == 6
    assert max(o for o in outcomes if isinstance(o, int)) == max(laid.values_list("seq", flat=True))
    assert pack.events.filter(kind=PackEvent.Kind.FOREIGN_CARD).count() == 1


def test_the_service_refusal_and_the_database_refusal_say_the_same(cast, shift, posted):
    """Opening a séance at a table in séance: the service refuses; so does the database."""
    from casino.errors import Conflict

    with pytest.raises(Conflict) as service:
        shift_open(
            actor=cast.chef,
            table=shift.table,
            count_id=shift.opening_count_id,
            tailleur=cast.tailleur,
            croupiers=[cast.croupier],
        )
    assert service.value.where == "table"
    with pytest.raises(RuleViolated) as database, transaction.atomic():
        type(shift).objects.create(table=shift.table, opened_at=clock.now(), opened_by=cast.chef)
    assert (database.value.code, database.value.where) == (service.value.code, "table")
