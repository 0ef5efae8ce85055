from casino.formats import (  # noqa: F401 (read by Django by name)
    DATE_FORMAT,
    DATETIME_FORMAT,
    SHORT_DATE_FORMAT,
    SHORT_DATETIME_FORMAT,
    TIME_FORMAT,
)
