"""Input serializers shared by every API view."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class StrictSerializer(serializers.Serializer[Any]):
    """An input that refuses unknown fields, before anything else: a typo must not be silently
    ignored, nor reported as the missing field it was meant to be."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = set(data) - set(self.fields)
            if unknown:
                raise serializers.ValidationError({sorted(unknown)[0]: "unknown field"})
        return super().to_internal_value(data)


class Empty(StrictSerializer):
    """The input of an act that takes nothing but the record it acts on."""
