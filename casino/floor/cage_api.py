"""The cage over the API, for patrons who play from an account of the house (at the cercle): the
buy-in, money from outside into the patron's account, and the cash-out, back outside. Each is the
cashier's act; the answer is the movement and the patron's account as it now stands. Every write is
idempotent."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from casino.api.idempotency import idempotent
from casino.api.serializers import StrictSerializer, amount
from casino.floor import cage
from casino.floor.api import ACCOUNTS, MOVEMENTS, AccountSerializer, MovementSerializer
from casino.floor.models import Movement
from casino.floor.services import MAX_AMOUNT

PATRON = "patron:<id> (or <id>): 1 to 40 letters, digits, dots, dashes or underscores"


class CageMovementSerializer(serializers.Serializer[Any]):
    movement = MovementSerializer()
    account = AccountSerializer(help_text="the patron's account, its balance after the movement")


def _answer(movement: Movement, code: str) -> Any:
    return CageMovementSerializer(
        {"movement": MOVEMENTS.get(pk=movement.pk), "account": ACCOUNTS.get(code=code)}
    ).data


class BuyInInput(StrictSerializer):
    patron = serializers.CharField(max_length=48, help_text=PATRON)
    amount = amount(MAX_AMOUNT)
    name = serializers.CharField(
        max_length=120, required=False, allow_blank=True, help_text="his name, at his first buy-in"
    )


class BuyIn(APIView):
    """The cashier changes a patron's money: it enters his account (opened at his first buy-in)."""

    @extend_schema(request=BuyInInput, responses=CageMovementSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = BuyInInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        movement = cage.patron_buy_in(actor=request.user, **v)
        return Response(_answer(movement, movement.debit.code), status=201)


class CashOutInput(StrictSerializer):
    patron = serializers.CharField(max_length=48, help_text=PATRON)
    amount = amount(MAX_AMOUNT, required=False, help_text="minor units; absent: his whole balance")


class CashOut(APIView):
    """The cashier pays a patron out: his whole balance, or part of it, leaves for outside."""

    @extend_schema(request=CashOutInput, responses=CageMovementSerializer)
    @idempotent
    def post(self, request: Request) -> Response:
        data = CashOutInput(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        movement = cage.patron_cash_out(actor=request.user, **v)
        return Response(_answer(movement, movement.credit.code), status=201)


routes = [
    path("cage/buy-ins", BuyIn.as_view(), name="cage-buy-ins"),
    path("cage/cash-outs", CashOut.as_view(), name="cage-cash-outs"),
]
