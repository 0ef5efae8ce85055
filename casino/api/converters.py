"""Path parameters as the records name themselves. A reference that cannot be one (beyond a bigint,
a date that is no date) matches no URL: the API's 404, never the database's error."""

from __future__ import annotations

import datetime as dt

from django.urls import register_converter


class ReferenceConverter:
    regex = "[1-9][0-9]{0,17}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


class TableConverter(ReferenceConverter):
    regex = "[1-9][0-9]{0,4}"


class DateConverter:
    regex = "[0-9]{4}-[0-9]{2}-[0-9]{2}"

    def to_python(self, value: str) -> dt.date:
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise ValueError(value) from None  # Django answers a ValueError with "no match"

    def to_url(self, value: dt.date) -> str:
        return value.isoformat()


class CodeConverter:
    """An account's code or a person's username: letters, digits and ``:._@+-``."""

    regex = r"[\w:.@+-]{1,150}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(ReferenceConverter, "ref")
register_converter(TableConverter, "table")
register_converter(DateConverter, "day")
register_converter(CodeConverter, "code")
