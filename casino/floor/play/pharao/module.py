"""What the floor core asks of Pharao (``casino/floor/registry.py``)."""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.errors import Conflict
from casino.floor.play.pharao.models import PharaoDraw, Taille, TaillePhase
from casino.floor.play.pharao.selectors import pharao_records, taille_document
from casino.floor.registry import GameModule
from casino.tallies import count_by
from shoes.errors import IllegalPackState

GAME = "pharao"


class Pharao(GameModule):
    game = GAME
    pack_kind = "single"
    accounts = ("layout", "bank")
    rounds_word = gettext_lazy("tirages")

    def check_closable(self, shift: Any) -> None:
        if shift.tailles.filter(phase=TaillePhase.DEALING).exists():
            raise Conflict(
                _("la séance %(shift)s a une taille en cours : donnez-la jusqu'au bout d'abord")
                % {"shift": shift.pk},
                where="shift",
            )

    def check_pack_free(self, pack: Any, *, act: str) -> None:
        """Passing or retiring the pack mid-taille would leave its draws unable to go on."""
        if Taille.objects.filter(pack=pack, phase=TaillePhase.DEALING).exists():
            raise IllegalPackState(
                _("%(act)s : une taille est en cours avec le jeu %(pack)s")
                % {"act": act, "pack": pack.seal_number},
                where="state",
            )

    def rounds_played(self, shifts: Any) -> dict[int, int]:
        """The draws settled in each séance."""
        return count_by(PharaoDraw.objects.filter(taille__shift__in=shifts), "taille__shift_id")

    def export_records(self, shifts: Any) -> dict[str, list[dict[str, Any]]]:
        """Tailles, draws, stakes, the acts on them, the banker's approvals and the settlements:
        the ids are those the replay documents name (a stake's id is its ``id`` there)."""
        return pharao_records(shifts)

    def replay_documents(self, shifts: Any) -> list[tuple[str, dict[str, Any]]]:
        """Each taille's document, the one the floor itself rebuilds the taille from
        (``taille_document``): its file named like a talon's, by the pack's seal and its cut."""
        return [
            (f"{t.pack.seal_number}-{t.pack_taille}.json", taille_document(t))
            for t in Taille.objects.filter(shift__in=shifts)
            .select_related("pack", "reglement")
            .order_by("id")
        ]


MODULE = Pharao()
