"""The API's one renderer: DRF's JSON, written once per answer."""

from __future__ import annotations

from typing import Any

from rest_framework import renderers


class JSONRenderer(renderers.JSONRenderer):
    """DRF's JSON renderer, which takes an answer already written as it writes it: an idempotent
    write renders its answer to keep it for a retry (``casino.api.idempotency``), and rendering
    it again for the client cost as much (issue 17: nothing computed twice). Those bytes are
    this renderer's own output for the same data, so they are sent as they are, unless the
    client asked for another layout (``Accept: application/json; indent=4``)."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        context = renderer_context or {}
        written = getattr(context.get("response"), "written_json", None)
        if written is not None and self.get_indent(accepted_media_type or "", context) is None:
            return written  # type: ignore[no-any-return]
        return super().render(data, accepted_media_type, renderer_context)
