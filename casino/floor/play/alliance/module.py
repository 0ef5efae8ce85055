"""What the floor core asks of Alliance (``casino/floor/registry.py``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.errors import Conflict
from casino.floor.play.alliance.models import CercleSeat, Deal, DealPhase
from casino.floor.play.alliance.seats import seats_end
from casino.floor.play.alliance.selectors import alliance_records, deal_document, open_deal
from casino.floor.registry import GameModule
from casino.tallies import count_by
from shoes.errors import IllegalPackState

GAME = "alliance"


class Alliance(GameModule):
    game = GAME
    pack_kind = "single"
    # The house banks nothing at a cercle: its one account is the fee box (RULES.md 3.6).
    accounts = ("fee_box",)
    till = "fee_box"
    tailleur = False
    rounds_word = gettext_lazy("donnes")

    def check_closable(self, shift: Any) -> None:
        if shift.deals.exclude(phase=DealPhase.OVER).exists():
            raise Conflict(
                _("la séance %(shift)s a une donne en cours : jouez-la jusqu'au bout d'abord")
                % {"shift": shift.pk},
                where="shift",
            )

    def closing(self, shift: Any, actor: Any) -> None:
        """The players leave their seats; the worker looks for collusion once it has closed."""
        from casino.outbox.outbox import enqueue

        seats_end(shift, actor)
        enqueue("alliance.collusion_watch", shift_id=shift.pk)

    def check_cash_out(self, account: Any) -> None:
        seat = (
            CercleSeat.objects.filter(
                patron=account, end__isnull=True, shift__closed_at__isnull=True
            )
            .select_related("shift__table")
            .first()
        )
        if seat is not None:
            raise Conflict(
                _("%(patron)s est assis à %(table)s : il se lève avant d'être payé")
                % {"patron": account.code, "table": seat.shift.table},
                where="patron",
            )

    def check_pack_free(self, pack: Any, *, act: str) -> None:
        """Passing or retiring the pack mid-deal would leave the deal unable to go on."""
        if Deal.objects.filter(pack=pack).exclude(phase=DealPhase.OVER).exists():
            raise IllegalPackState(
                _("%(act)s : une donne est en cours avec le jeu %(pack)s")
                % {"act": act, "pack": pack.seal_number},
                where="state",
            )

    def terminal_state(self, table: Any, shift: Any) -> dict[str, Any]:
        return {"open_deal": open_deal(shift)}

    def rounds_played(self, shifts: Any) -> dict[int, int]:
        """The deals played out in each séance."""
        return count_by(Deal.objects.filter(shift__in=shifts, phase=DealPhase.OVER), "shift_id")

    def export_records(self, shifts: Any) -> dict[str, list[dict[str, Any]]]:
        """Seats, deals, calls, contracts, cards played and what each deal settled."""
        return alliance_records(shifts)

    def replay_documents(self, shifts: Any) -> list[tuple[str, dict[str, Any]]]:
        """Each deal played out, as its replay document, named by the pack's seal and its cut."""
        return [
            (f"{d.pack.seal_number}-{d.pack_taille}.json", deal_document(d))
            for d in Deal.objects.filter(shift__in=shifts, phase=DealPhase.OVER)
            .select_related("pack", "reglement")
            .order_by("id")
        ]


MODULE = Alliance()
