"""What the floor core asks of Trente-et-Quarante (``casino/floor/registry.py``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _

from casino.errors import Conflict
from casino.floor.play.trente_et_quarante.coups import FINISHED, GAME
from casino.floor.play.trente_et_quarante.models import Coup, CoupResult
from casino.floor.play.trente_et_quarante.selectors import prisoners
from casino.floor.registry import GameModule
from casino.tallies import count_by
from shoes.errors import IllegalPackState


class TrenteEtQuarante(GameModule):
    game = GAME
    pack_kind = "sixain"
    accounts = ("layout", "bank", "prison")

    def check_closable(self, shift: Any) -> None:
        if shift.coups.exclude(phase__in=FINISHED).exists():
            raise Conflict(
                _("la séance %(shift)s a un coup en cours : réglez-le ou annulez-le d'abord")
                % {"shift": shift.pk},
                where="shift",
            )

    def check_pack_free(self, pack: Any, *, act: str) -> None:
        """Passing or retiring the cards mid-coup would leave the coup unable to settle."""
        if Coup.objects.filter(pack=pack).exclude(phase__in=FINISHED).exists():
            raise IllegalPackState(
                _("%(act)s : un coup est en cours avec le jeu %(pack)s")
                % {"act": act, "pack": pack.seal_number},
                where="state",
            )

    def terminal_state(self, table: Any, shift: Any) -> dict[str, Any]:
        """The coup in progress and the table's prison (it carries over from séance to séance)."""
        last = (
            CoupResult.objects.filter(coup__shift__table=table)
            .order_by("-id")
            .values_list("prison_after", flat=True)
            .first()
        )
        state: dict[str, Any] = {"prison": prisoners(last or [])}
        if shift is not None:
            state["open_coup"] = (
                Coup.objects.filter(shift=shift)
                .exclude(phase__in=FINISHED)
                .values_list("pk", flat=True)
                .first()
            )
        return state

    def rounds_played(self, shifts: Any) -> dict[int, int]:
        return count_by(Coup.objects.filter(shift__in=shifts, phase="settled"), "shift_id")


MODULE = TrenteEtQuarante()
