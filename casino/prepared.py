"""A queryset built and compiled once, then run many times with new values.

The hot table acts (a stake, a card, a settlement) each begin by locking their coup, taille or
deal. Issue 17's profile of a coup showed that lock to be a quarter of the act's CPU, nearly all
of it Django building and compiling the same query again (``filter``, ``as_sql``), not running it.
The API's answers were the same story: reading the coup it answers with, its stakes, settlements
and cards cost more CPU than the act itself, and every request looked up its token and its roles.
A ``Prepared`` query keeps the compiled SQL and Django's recipe for turning a row into model
instances (``select_related`` objects and annotations included), and substitutes the values.
A ``PreparedTree`` reads an instance and its reverse relations (what ``prefetch_related`` reads)
with one ``Prepared`` query each, all in one round trip.

Those statements, and the few fixed ones the acts send, go through ``casino.round_trips``: PostgreSQL
then keeps each statement parsed and planned for the session, where Django's cursor sends the
values inside the text, so the server parsed and planned every statement of every act again; and
a write whose result the act does not read (``PreparedUpdate``) waits to go with the next.

Values are passed as placeholders the queryset is built with: distinct integers or strings no
real row uses, found again in the compiled parameters. A shape whose parameters do not come out
exactly once each is refused when it is prepared, so a value can never land in the wrong place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import DatabaseError, connections
from django.db.models import NOT_PROVIDED, Model, QuerySet
from django.db.models.query import get_related_populators

from casino.round_trips import USING, Sent, hold, run, run_all

# Below any id or count the application stores, yet within a 32-bit column's range (Django
# compiles an out-of-range lookup to an empty result); one per value of the query. A text value's
# placeholder is a string no key, hash or name holds.
_PLACEHOLDERS = tuple(-1_987_650_001 - i for i in range(8))
_TEXT_PLACEHOLDERS = tuple(f"\x1fprepared-value-{i}\x1f" for i in range(8))


def quoted_table(model: type[Model]) -> str:
    """The model's table as a fixed SQL statement names it (the games' record reads)."""
    return str(connections[USING].ops.quote_name(model._meta.db_table))


def _placeholder(position: int, value: Any) -> int | str:
    if isinstance(value, str):
        return _TEXT_PLACEHOLDERS[position]
    if isinstance(value, int) and not isinstance(value, bool):
        return _PLACEHOLDERS[position]
    raise ValueError(f"a prepared query takes integers and strings, not {value!r}")


@dataclass(frozen=True)
class _Compiled:
    compiler: Any  # Django's SQLCompiler, kept for its row conversions and select layout
    converters: dict[int, Any]  # per column, Django's conversions from the database (JSON...)
    sql: str
    params: tuple[Any, ...]
    slots: tuple[int | None, ...]  # per parameter: which value goes there, or None (a constant)
    kinds: tuple[type, ...]  # each value's type (int or str), as every run must give it
    model: type[Model]
    start: int  # the model's own columns in the row
    end: int
    init_list: list[str]
    populators: list[Any]  # select_related objects


class Prepared:
    """``Prepared(lambda pk, person: Model.objects....filter(pk=pk, ...))``, then
    ``.first(pk, person)``: the first instance, or None; ``.all(...)``: every instance. Only
    integer and string values may vary."""

    def __init__(self, build: Callable[..., QuerySet[Any]]) -> None:
        self._build = build
        self._compiled: _Compiled | None = None

    def _compile(self, values: tuple[Any, ...]) -> _Compiled:
        placeholders = [_placeholder(i, value) for i, value in enumerate(values)]
        queryset = self._build(*placeholders)
        compiler = queryset.query.get_compiler(using=USING)
        try:
            sql, params = compiler.as_sql()  # also fills compiler.select, klass_info, annotations
        except (EmptyResultSet, FullResultSet):
            raise ValueError(f"a value's condition compiled away: {queryset.query}") from None
        slots = tuple(placeholders.index(p) if p in placeholders else None for p in params)
        if sorted(s for s in slots if s is not None) != list(range(len(values))):
            raise ValueError(f"each value must appear once in the compiled query: {sql}")
        klass_info = compiler.klass_info
        fields = klass_info["select_fields"]
        start, end = fields[0], fields[-1] + 1
        columns = [column[0] for column in compiler.select[: compiler.col_count]]
        return _Compiled(
            compiler=compiler,
            converters=compiler.get_converters(columns),
            sql=sql,
            params=tuple(params),
            slots=slots,
            kinds=tuple(type(p) for p in placeholders),
            model=klass_info["model"],
            start=start,
            end=end,
            init_list=[column[0].target.attname for column in compiler.select[start:end]],
            populators=get_related_populators(klass_info, compiler.select, USING),
        )

    def first(self, *values: int | str) -> Any:
        instances = self.instances(run(*self.statement(*values))[:1])
        return instances[0] if instances else None

    def all(self, *values: int | str) -> list[Any]:
        return self.instances(run(*self.statement(*values)))

    def statement(self, *values: int | str) -> tuple[str, list[Any]]:
        """The SQL and its parameters for ``values``, to be run with others (``run_all``)."""
        if self._compiled is None:
            self._compiled = self._compile(values)
        c = self._compiled
        kinds = tuple(type(_placeholder(i, value)) for i, value in enumerate(values))
        if kinds != c.kinds:
            raise ValueError(
                f"values of types {[k.__name__ for k in kinds]} for a query prepared with "
                f"{[k.__name__ for k in c.kinds]}"
            )
        bound = [
            p if slot is None else values[slot] for p, slot in zip(c.params, c.slots, strict=True)
        ]
        return c.sql, bound

    def instances(self, rows: list[Any]) -> list[Any]:
        """The instances of rows this query's ``statement`` gave."""
        assert self._compiled is not None, "rows come from a statement, which compiles the query"
        c = self._compiled
        if c.converters:  # Django's own conversions (JSON, decimals...), as a queryset applies
            rows = list(c.compiler.apply_converters(rows, c.converters))
        instances = []
        for row in rows:
            instance = c.model.from_db(USING, c.init_list, row[c.start : c.end])
            for populator in c.populators:
                populator.populate(row, instance)
            for name, position in c.compiler.annotation_col_map.items():
                setattr(instance, name, row[position])
            instances.append(instance)
        return instances


class PreparedTree:
    """``PreparedTree(Coup.objects.select_related(...), stakes=Stake.objects..., cards=...)``,
    then ``.get(pk)``: the instance with those reverse relations filled as ``prefetch_related``
    fills them, so that ``coup.stakes.all()`` reads nothing more; one prepared query each."""

    def __init__(self, queryset: QuerySet[Any], **children: QuerySet[Any]) -> None:
        self._model = queryset.model
        self._root = Prepared(lambda pk: queryset.filter(pk=pk))
        self._children = {}
        for name, child in children.items():
            key = getattr(self._model, name).field  # the child's foreign key to the root
            self._children[name] = (
                key,
                Prepared(lambda pk, child=child, key=key: child.filter(**{key.attname: pk})),
            )

    def get(self, pk: int) -> Any:
        """The instance and its relations, read in one round trip (``run_all``)."""
        queries = [self._root, *(prepared for _key, prepared in self._children.values())]
        answers = run_all([query.statement(pk) for query in queries])
        found = self._root.instances(answers[0][:1])
        if not found:
            raise self._model.DoesNotExist(f"no {self._model._meta.object_name} {pk}")
        root = found[0]
        cache = root.__dict__.setdefault("_prefetched_objects_cache", {})
        for (name, (key, prepared)), rows_read in zip(
            self._children.items(), answers[1:], strict=True
        ):
            rows = prepared.instances(rows_read)
            for row in rows:
                key.set_cached_value(row, root)  # row.coup is the root, as prefetch leaves it
            # Django's recipe (``prefetch_one_level``): the manager's queryset, its result given.
            related = getattr(root, name).get_queryset()
            related._result_cache = rows
            related._prefetch_done = True
            cache[name] = related
        return root


class PreparedInsert:
    """``PreparedInsert(Model)``, then ``.create(field=value, ...)``: the row and the instance
    ``Model.objects.create`` gives, with the INSERT written once, where the ORM compiles it anew
    at every call; ``.insert_all(instances)``: what ``bulk_create`` writes, in one statement.
    Each field's value is prepared as ``save()`` prepares it (``pre_save``, then
    ``get_db_prep_save``); ``save()``'s signals are not sent, so it is only for models nothing
    listens to (the table acts' rows: audit events, cards laid, stakes, settlements, movements,
    results)."""

    def __init__(self, model: type[Model]) -> None:
        meta = model._meta
        written_by_the_database = [
            f.name
            for f in meta.concrete_fields
            if f.generated
            or f.db_default is not NOT_PROVIDED
            or (f.db_returning and not f.primary_key)
        ]
        if written_by_the_database:  # save() compiles those as expressions: use the ORM
            raise ValueError(f"{meta.label}: the database writes {written_by_the_database}")
        self._model = model
        self._fields = [f for f in meta.concrete_fields if not (f.primary_key and f.db_returning)]
        self._returning = meta.pk if meta.pk not in self._fields else None
        quote = connections[USING].ops.quote_name
        self._into = (
            f"INSERT INTO {quote(meta.db_table)} "
            f"({', '.join(quote(f.column) for f in self._fields)})"
        )
        self._returning_sql = (
            f" RETURNING {quote(self._returning.column)}" if self._returning else ""
        )
        self._statements: dict[int, str] = {}  # per number of rows

    def create(self, **values: Any) -> Any:
        return self.insert(self._model(**values))  # unknown names refused, defaults applied

    def insert(self, instance: Any) -> Any:
        """Write ``instance``, made and not yet saved, as ``save()`` would; return it."""
        return self.insert_all([instance])[0]

    def insert_all(self, instances: list[Any]) -> list[Any]:
        """Write ``instances`` in one statement, as ``bulk_create`` does (their ids set, in their
        order, as PostgreSQL returns them); return them. One statement is kept per number of
        rows."""
        if not instances:
            return []
        connection = connections[USING]
        params = [
            f.get_db_prep_save(f.pre_save(instance, True), connection)
            for instance in instances
            for f in self._fields
        ]
        sql = self._statements.get(len(instances))
        if sql is None:
            row = f"({', '.join(['%s'] * len(self._fields))})"
            sql = self._statements[len(instances)] = (
                f"{self._into} VALUES {', '.join([row] * len(instances))}{self._returning_sql}"
            )
        rows = run(sql, params)
        if self._returning is not None:
            for instance, (pk,) in zip(instances, rows, strict=True):
                setattr(instance, self._returning.attname, pk)
        for instance in instances:
            instance._state.adding = False
            instance._state.db = USING
        return instances


class PreparedUpdate:
    """``PreparedUpdate(Coup, "phase")``, then ``.save(coup)``: what
    ``coup.save(update_fields=["phase"])`` writes, with the UPDATE written once. Each value is
    prepared as ``save()`` prepares it; like ``PreparedInsert``, no signal is sent. The act reads
    nothing back, so the UPDATE is held (``casino.round_trips``): it goes with the act's next
    statement, or just before its COMMIT, and a row not there fails the act."""

    def __init__(self, model: type[Model], *names: str) -> None:
        meta = model._meta
        self._fields = [meta.get_field(name) for name in names]
        self._pk = meta.pk
        quote = connections[USING].ops.quote_name
        self._sql = (
            f"UPDATE {quote(meta.db_table)} "
            f"SET {', '.join(f'{quote(f.column)} = %s' for f in self._fields)} "
            f"WHERE {quote(meta.pk.column)} = %s"
        )

    def save(self, instance: Any) -> None:
        connection = connections[USING]
        params = [f.get_db_prep_save(f.pre_save(instance, False), connection) for f in self._fields]
        hold(
            self._sql,
            [*params, self._pk.get_db_prep_value(instance.pk, connection)],
            then=_one_row_updated,
            checks=True,
        )


def _one_row_updated(sent: Sent) -> None:
    if sent.count != 1:  # as save(update_fields=...) says of a row not there
        raise DatabaseError("Save with update_fields did not affect any rows.")
