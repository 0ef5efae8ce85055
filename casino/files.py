"""Stored and uploaded files."""

from __future__ import annotations

import hashlib

from django.core.files import File


def sha256_of(file: File) -> str:  # type: ignore[type-arg]
    """The file's SHA-256, read a chunk at a time (an upload is never held whole in memory); the
    file is left at its start for whoever reads it next."""
    digest = hashlib.sha256()
    for chunk in file.chunks():
        digest.update(chunk)
    file.seek(0)
    return digest.hexdigest()
