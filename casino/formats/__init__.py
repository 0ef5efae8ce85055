"""How every page writes a date and a time, the same in French and in English (settings'
FORMAT_MODULE_PATH): day/month/year and the 24-hour clock, as the room reads them. Numbers keep
each language's own separators (Django's locale formats, which these fall back on)."""

DATE_FORMAT = "d/m/Y"
DATETIME_FORMAT = "d/m/Y H:i"
TIME_FORMAT = "H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
# To the second, where the order of acts within a minute matters (the audit log, a timeline).
SECONDS_FORMAT = "d/m/Y H:i:s"
