"""One view per act on one record (a pack, a dispute): validate the strict input, call the
service with the record's id, answer the record as it now stands. Idempotent, like every write."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.idempotency import idempotent


class RecordAct(APIView):
    input: ClassVar[type[serializers.Serializer[Any]]]
    act: ClassVar[Callable[..., Any]]
    record_id: ClassVar[str]  # the service's name for the record's id: "pack_id", "dispute_id"
    answer: ClassVar[Callable[[int], Any]]  # the record as it now stands, serialised

    def post(self, request: Request, id: int) -> Response:
        return self.perform(request, id)

    @idempotent
    def perform(self, request: Request, id: int) -> Response:
        data = self.input(data=request.data)
        data.is_valid(raise_exception=True)
        type(self).act(actor=request.user, **{self.record_id: id}, **data.validated_data)
        return Response(type(self).answer(id), status=201)


def record_act(
    name: str,
    service: Callable[..., Any],
    input_: type[serializers.Serializer[Any]],
    doc: str,
    *,
    record_id: str,
    answer: Callable[[int], Any],
    response: type[serializers.Serializer[Any]],
) -> type[RecordAct]:
    """The view of one act: ``service(actor=…, <record_id>=pk, **input)``."""
    view = type(
        name,
        (RecordAct,),
        {
            "input": input_,
            "act": staticmethod(service),
            "record_id": record_id,
            "answer": staticmethod(answer),
            "__doc__": doc,
        },
    )

    # A function of its own per view: decorating the inherited ``RecordAct.post`` would annotate
    # that one shared function, and every act's schema would be the last one declared.
    def post(self: RecordAct, request: Request, id: int) -> Response:
        return self.perform(request, id)

    view.post = extend_schema(request=input_, responses=response)(post)  # type: ignore[method-assign]
    return view
