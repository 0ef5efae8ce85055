"""Uploads: a body too large for the endpoint is refused before it is read.

Django streams a multipart file of more than ``FILE_UPLOAD_MAX_MEMORY_SIZE`` to a temporary file;
the parser below refuses a request whose declared length exceeds what the endpoint accepts before
parsing anything, so no large body is read at all.
"""

from __future__ import annotations

from typing import IO, Any

from django.utils.translation import gettext as _
from rest_framework.parsers import MultiPartParser

from casino.errors import DomainError

# The multipart envelope around the file: boundaries, part headers, the other form fields.
ENVELOPE_BYTES = 64 * 1024


class UploadTooLarge(DomainError):
    """The request's body is larger than the endpoint accepts."""

    code = "upload_too_large"
    http_status = 413


def limited_multipart(max_file_bytes: int) -> type[MultiPartParser]:
    """A multipart parser for files of at most ``max_file_bytes`` (the service checks the file's
    exact size; this refuses, unread, a body that cannot hold such a file)."""

    class LimitedMultiPartParser(MultiPartParser):
        def parse(self, stream: IO[Any], media_type: Any = None, parser_context: Any = None) -> Any:
            meta = parser_context["request"].META
            try:
                length = int(meta.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > max_file_bytes + ENVELOPE_BYTES:
                raise UploadTooLarge(
                    _(
                        "une requête de %(length)s octets dépasse ce que fait un fichier "
                        "d'au plus %(max)s octets"
                    )
                    % {"length": length, "max": max_file_bytes},
                    where="file",
                )
            return super().parse(stream, media_type, parser_context)

    return LimitedMultiPartParser
