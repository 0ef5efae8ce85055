"""Resources: every record a client reads is a collection (``GET /things``, filtered, by cursor)
and items (``GET /things/{reference}``) on the same paths where its acts are posted.

A view says who may read it at all (``read_roles``: anyone else gets ``role_required``), which
records a reader sees (``scope``: the floor's staff see what they worked, oversight sees
everything) and which query parameters filter it (``filters``: strict, an unknown one refused).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, ClassVar

from django.db.models import F, Min, Model, Q, QuerySet, Subquery, Value
from django.utils import timezone
from django.utils.translation import gettext as _
from rest_framework import generics, serializers
from rest_framework.request import Request

from casino.api.pagination import ReferenceCursorPagination
from casino.api.permissions import HoldsRole
from casino.errors import DomainError, NotFound
from casino.people.roles import Role
from casino.people.services import roles_of

PAGING_PARAMETERS = frozenset({"cursor", "page_size"})


def on_day(field: str, model: type[Model] | None = None) -> Callable[[dt.date], Q]:
    """A filter by day (``field__date``), written as the day's range in the current time zone:
    ``__date`` casts every row, so no index on ``field`` serves it, and a month of coups is read
    whole to find one day's (issue 17).

    With ``model``, whose pages come in id order, the day's rows are also bounded below by the
    day's first id, found in the same statement through the index on ``field``. PostgreSQL does
    not know that ids grow with the clock: for a day's first page it walked the primary key from
    the month's first movement, 1.6 million rows before the last day's (215 ms; 8 ms so). The
    bound is the smallest id of the day's own rows, so it leaves out none of them."""

    def day_range(day: dt.date) -> Q:
        zone = timezone.get_current_timezone()
        start = dt.datetime.combine(day, dt.time.min, tzinfo=zone)
        end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time.min, tzinfo=zone)
        days = Q(**{f"{field}__gte": start, f"{field}__lt": end})
        if model is None:
            return days
        # The minimum of ``pk + 0``: a bare ``min(pk)`` PostgreSQL finds by the same walk.
        first = (
            model._default_manager.filter(days)
            .order_by()
            .annotate(one=Value(1))
            .values("one")
            .annotate(first=Min(F("pk") + 0))
            .values("first")
        )
        return days & Q(pk__gte=Subquery(first))

    return day_range


class Filters(serializers.Serializer[Any]):
    """The query parameters of a collection. Each field filters by the lookup of the same name in
    ``lookups`` (by default the field's own name; or a function of the value giving the
    condition); values arrive as query strings."""

    lookups: ClassVar[dict[str, str | Callable[[Any], Q]]] = {}

    def apply(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        for name, value in self.validated_data.items():
            lookup = self.lookups.get(name, name)
            queryset = queryset.filter(lookup(value) if callable(lookup) else Q(**{lookup: value}))
        return queryset


def _check_parameters(request: Request, filters: type[Filters] | None) -> Filters | None:
    known = set(filters().fields) if filters else set()
    for name in request.query_params:
        if name not in known and name not in PAGING_PARAMETERS:
            raise serializers.ValidationError(
                {name: serializers.ErrorDetail(_("paramètre inconnu"), "unknown")}
            )
    if filters is None:
        return None
    given = {k: request.query_params[k] for k in request.query_params if k in known}
    found = filters(data=given)
    found.is_valid(raise_exception=True)
    return found


class OutOfScope(DomainError):
    """The record exists, but the reader's post does not reach it (a croupier reads the séances he
    worked, not another table's)."""

    code = "not_on_duty"
    http_status = 403


class Readable(generics.GenericAPIView[Any]):
    """What collections and items share: who reads, and what they see."""

    permission_classes = [HoldsRole]
    read_roles: ClassVar[tuple[Role, ...]] = ()
    # Roles that read every record of the kind; the others read what ``scope`` lets them.
    sees_all: ClassVar[tuple[Role, ...]] = ()

    def scope(self, user: Any) -> Q:
        """The records a reader who does not see everything may read (none by default)."""
        return Q(pk__in=[])

    def sees_everything(self) -> bool:
        return bool(roles_of(self.request.user) & set(self.sees_all))

    def visible(self) -> QuerySet[Any]:
        return self._scoped(self.request.user, self.get_queryset())

    @classmethod
    def _scoped(cls, user: Any, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if roles_of(user) & set(cls.sees_all):
            return queryset
        return queryset.filter(cls().scope(user))

    @classmethod
    def readable_by(cls, user: Any) -> QuerySet[Any]:
        """What ``user`` reads of this resource, as its collection answers them: nothing without
        one of its ``read_roles`` (``HoldsRole`` refuses them), everything with one of
        ``sees_all``, else its ``scope``. Pages that list records outside the API (the pit's
        home) read through this, so that they never show what the API would refuse."""
        assert cls.queryset is not None, f"{cls.__name__} names no queryset"
        queryset = cls.queryset.all()
        if not roles_of(user) & set(cls.read_roles):
            return queryset.none()
        return cls._scoped(user, queryset)


class Collection(Readable, generics.ListAPIView[Any]):
    """``GET``: a page of the collection in its fixed order, filtered by ``filters``."""

    filters: ClassVar[type[Filters] | None] = None
    pagination_class = ReferenceCursorPagination
    ordering: ClassVar[str | tuple[str, ...]] = "id"

    def filter_queryset(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        found = _check_parameters(self.request, self.filters)
        queryset = self.visible()
        return found.apply(queryset) if found is not None else queryset


class Item(Readable, generics.RetrieveAPIView[Any]):
    """``GET``: one record by its reference (``lookup_field`` in the model, ``lookup_url_kwarg``
    in the path). Unknown: 404 ``not_found``; outside the reader's scope: 403."""

    lookup_field = "pk"
    lookup_url_kwarg = "id"
    noun: ClassVar[Any] = "record"

    def get_object(self) -> Model:
        _check_parameters(self.request, None)
        name = self.lookup_url_kwarg or self.lookup_field
        value = self.kwargs[name]
        record = self.get_queryset().filter(**{self.lookup_field: value}).first()
        if record is None:
            raise NotFound(
                _("%(noun)s %(value)s n'existe pas") % {"noun": self.noun, "value": value},
                where=name,
            )
        if not self.sees_everything() and not self.visible().filter(pk=record.pk).exists():
            raise OutOfScope(
                _("%(noun)s %(value)s n'est pas de votre poste")
                % {"noun": self.noun, "value": value},
                where=name,
            )
        return record
