"""Serializers shared by every API view: inputs of strict JSON types with no unknown field, and
the ways our answers are written without re-reading or re-deriving what they have."""

from __future__ import annotations

import copy
from typing import Any

from django.db.models.manager import BaseManager
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop
from rest_framework import serializers

# What each kind of field takes, as JSON says it. DRF is lenient by default (the string "2500" and
# the float 2500.0 both pass as the integer 2500, 1 passes as true); money and references must not
# arrive in a form the schema does not name.
_JSON_TYPE: tuple[tuple[type[Any], type, str], ...] = (
    (serializers.BooleanField, bool, gettext_noop("un booléen JSON (true ou false)")),
    (serializers.IntegerField, int, gettext_noop("un entier JSON")),
    (serializers.ChoiceField, str, gettext_noop("une chaîne JSON")),
    (serializers.CharField, str, gettext_noop("une chaîne JSON")),
    (serializers.DateField, str, gettext_noop("une date JSON, AAAA-MM-JJ")),
    (serializers.DateTimeField, str, gettext_noop("un horodatage JSON ISO 8601")),
)


class FieldsOnce:
    """A ModelSerializer works its fields out of its model every time it is made (DRF's
    ``get_fields``: each model field mapped, its arguments derived). Each act's answer makes
    several (the coup, its stakes, their settlements), and issue 17's profile put that at a
    sixth of a request's CPU. This works them out once per class and language, then copies them
    as DRF copies a plain Serializer's declared fields. The language is part of the key because
    DRF gives a field a label only where the model's verbose name, in the active language,
    differs from the field's name. Only for serializers whose fields depend on nothing else
    (none of ours looks at its context or instance to choose them)."""

    _fields_of: dict[tuple[type, str | None], dict[str, Any]] = {}

    def get_fields(self) -> dict[str, Any]:
        key = (type(self), translation.get_language())
        fields = FieldsOnce._fields_of.get(key)
        if fields is None:
            fields = FieldsOnce._fields_of[key] = super().get_fields()  # type: ignore[misc]
        return copy.deepcopy(fields)


class Answer:
    """``Answer(CoupSerializer)``, then ``answer(coup)``: what ``CoupSerializer(coup).data`` says,
    written by one serializer kept for the purpose. Making a serializer copies its fields (DRF
    deep-copies them for every instance, nested serializers included), and issue 17's profile put
    that copying at a sixth of a settlement's CPU; writing a representation reads the fields and
    changes nothing, so one made serializer serves every answer. Only for serializers that look at
    no context (no request, no hyperlinks): the kept one has none."""

    def __init__(self, serializer_class: type[serializers.BaseSerializer[Any]]) -> None:
        self._class = serializer_class
        self._serializer: serializers.BaseSerializer[Any] | None = None

    def __call__(self, instance: Any) -> Any:
        if self._serializer is None:
            self._serializer = self._class()
        return self._serializer.to_representation(instance)


class PageOfRecords(serializers.ListSerializer[Any]):
    """A page of records whose serializer (``ReadWithPage``) reads for the whole page at once what
    each record shows beyond its own columns."""

    def to_representation(self, data: Any) -> list[Any]:
        records = list(data.all() if isinstance(data, BaseManager) else data)
        self.child.read_with_page(records)  # type: ignore[union-attr]
        return super().to_representation(records)


class ReadWithPage:
    """A record's serializer that shows what is read for a page of them at once in a few queries
    (``read_with_page``), not a few queries a record; alone, a record is its own page. Its
    ``Meta`` names ``PageOfRecords`` as its ``list_serializer_class``."""

    def read_with_page(self, records: list[Any]) -> None:
        raise NotImplementedError

    def to_representation(self, instance: Any) -> Any:
        if not isinstance(self.parent, PageOfRecords):  # type: ignore[attr-defined]
            self.read_with_page([instance])
        return super().to_representation(instance)  # type: ignore[misc]


def _type_fault(field: serializers.Field[Any, Any, Any, Any], value: Any) -> str | None:
    """Why ``value`` is not of the JSON type ``field`` takes, or None."""
    if value is None:
        return None  # allow_null decides
    if isinstance(field, serializers.ListField):
        return None if isinstance(value, list) else _("doit être une liste JSON")
    if isinstance(field, serializers.DictField):
        return None if isinstance(value, dict) else _("doit être un objet JSON")
    for kind, python_type, name in _JSON_TYPE:
        if isinstance(field, kind):
            # bool is an int in Python; an integer field takes no true/false.
            exact = type(value) is python_type if python_type is int else None
            ok = exact if exact is not None else isinstance(value, python_type)
            return None if ok else _("doit être %(type)s") % {"type": _(name)}
    return None


def _check_types(fields: dict[str, Any], data: dict[str, Any]) -> None:
    for name, value in data.items():
        field = fields[name]
        fault = _type_fault(field, value)
        if fault is None and isinstance(value, list) and isinstance(field, serializers.ListField):
            for index, item in enumerate(value):
                fault = _type_fault(field.child, item)
                if fault:
                    name = f"{name}[{index}]"
                    break
        elif fault is None and isinstance(value, dict) and isinstance(field, serializers.DictField):
            for key, item in value.items():
                fault = _type_fault(field.child, item)
                if fault:
                    name = f"{name}.{key}"
                    break
        if fault:
            raise serializers.ValidationError({name: serializers.ErrorDetail(fault, "invalid")})


class StrictSerializer(serializers.Serializer[Any]):
    """An input that refuses unknown fields, before anything else (a typo must not be silently
    ignored, nor reported as the missing field it was meant to be), then any value whose JSON type
    is not the field's."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = set(data) - set(self.fields)
            if unknown:
                raise serializers.ValidationError(
                    {sorted(unknown)[0]: serializers.ErrorDetail(_("champ inconnu"), "unknown")}
                )
            if not _is_form(self):
                _check_types(dict(self.fields), data)
        return super().to_internal_value(data)


def _is_form(serializer: serializers.Serializer[Any]) -> bool:
    """A multipart form (an upload) carries strings only: its fields are typed by the parser."""
    return any(isinstance(f, serializers.FileField) for f in serializer.fields.values())


class Empty(StrictSerializer):
    """The input of an act that takes nothing but the record it acts on."""


# A reference is a PostgreSQL bigint; anything larger is refused at the edge, not by the database.
MAX_REFERENCE = 2**63 - 1


def reference(**kwargs: Any) -> serializers.IntegerField:
    """A field naming a record by its reference (a positive JSON integer)."""
    return serializers.IntegerField(min_value=1, max_value=MAX_REFERENCE, **kwargs)


def amount(maximum: int, **kwargs: Any) -> serializers.IntegerField:
    """Money: a positive JSON integer in minor units, at most ``maximum``."""
    kwargs.setdefault("help_text", "minor units (a JSON integer: 2500 is 25.00)")
    return serializers.IntegerField(min_value=1, max_value=maximum, **kwargs)
