"""Refusals about people, their credentials and their logins."""

from __future__ import annotations

from casino.errors import DomainError


class InvalidCredentials(DomainError):
    """The username and password (or the second factor) do not match an active account."""

    code = "invalid_credentials"
    http_status = 401


class SecondFactorRequired(DomainError):
    """The person's roles require a TOTP code, and none (or a wrong one) was given."""

    code = "otp_required"
    http_status = 401


class TooManyAttempts(DomainError):
    """Too many failed logins for this username from this address: wait, then try again."""

    code = "too_many_attempts"
    http_status = 429


class SetupCodeInvalid(DomainError):
    """The setup code is unknown, already used, withdrawn or expired."""

    code = "setup_code_invalid"
    http_status = 400


class PasswordRefused(DomainError):
    """The new password fails the password rules (length, common passwords)."""

    code = "password_refused"
    http_status = 400
