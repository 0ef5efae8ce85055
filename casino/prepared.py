"""A queryset built and compiled once, then run many times with new values.

The hot table acts (a stake, a card, a settlement) each begin by locking their coup, taille or
deal. Issue 17's profile of a coup showed that lock to be a quarter of the act's CPU, nearly all
of it Django building and compiling the same query again (``filter``, ``as_sql``), not running it.
A ``Prepared`` query keeps the compiled SQL and Django's recipe for turning a row into model
instances (``select_related`` objects and annotations included), and substitutes the values.

Values are passed as placeholders the queryset is built with: distinct integers no real row
uses, found again in the compiled parameters. A shape whose parameters do not come out exactly
once each is refused when it is prepared, so a value can never land in the wrong place.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections
from django.db.models import Model, QuerySet
from django.db.models.query import get_related_populators

USING = "default"  # the hot acts' database

# Below any id or count the application stores, yet within a 32-bit column's range (Django
# compiles an out-of-range lookup to an empty result); one per value of the query.
_PLACEHOLDERS = tuple(-1_987_650_001 - i for i in range(8))


@dataclass(frozen=True)
class _Compiled:
    compiler: Any  # Django's SQLCompiler, kept for its row conversions and select layout
    sql: str
    params: tuple[Any, ...]
    slots: tuple[int | None, ...]  # per parameter: which value goes there, or None (a constant)
    arity: int  # how many values every run takes
    model: type[Model]
    start: int  # the model's own columns in the row
    end: int
    init_list: list[str]
    populators: list[Any]  # select_related objects


class Prepared:
    """``Prepared(lambda pk, person: Model.objects....filter(pk=pk, ...))``, then
    ``.first(pk, person)``: the first instance, or None. Only integer values may vary."""

    def __init__(self, build: Callable[..., QuerySet[Any]]) -> None:
        self._build = build
        self._compiled: _Compiled | None = None

    def _compile(self, arity: int) -> _Compiled:
        placeholders = _PLACEHOLDERS[:arity]
        queryset = self._build(*placeholders)
        compiler = queryset.query.get_compiler(using=USING)
        try:
            sql, params = compiler.as_sql()  # also fills compiler.select, klass_info, annotations
        except (EmptyResultSet, FullResultSet):
            raise ValueError(f"a value's condition compiled away: {queryset.query}") from None
        slots = tuple(placeholders.index(p) if p in placeholders else None for p in params)
        if sorted(s for s in slots if s is not None) != list(range(arity)):
            raise ValueError(f"each value must appear once in the compiled query: {sql}")
        klass_info = compiler.klass_info
        fields = klass_info["select_fields"]
        start, end = fields[0], fields[-1] + 1
        return _Compiled(
            compiler=compiler,
            sql=sql,
            params=tuple(params),
            slots=slots,
            arity=arity,
            model=klass_info["model"],
            start=start,
            end=end,
            init_list=[column[0].target.attname for column in compiler.select[start:end]],
            populators=get_related_populators(klass_info, compiler.select, USING),
        )

    def first(self, *values: int) -> Any:
        if self._compiled is None:
            self._compiled = self._compile(len(values))
        c = self._compiled
        if len(values) != c.arity:
            raise ValueError(f"{len(values)} values for a query prepared with {c.arity}")
        bound = [
            p if slot is None else values[slot] for p, slot in zip(c.params, c.slots, strict=True)
        ]
        with connections[USING].cursor() as cursor:
            cursor.execute(c.sql, bound)
            row = cursor.fetchone()
        if row is None:
            return None
        # Django's own conversions (JSON, decimals...), as a queryset applies them.
        row = next(c.compiler.results_iter(results=[[row]]))
        instance = c.model.from_db(USING, c.init_list, row[c.start : c.end])
        for populator in c.populators:
            populator.populate(row, instance)
        for name, position in c.compiler.annotation_col_map.items():
            setattr(instance, name, row[position])
        return instance
