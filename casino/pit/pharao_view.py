"""What the Pharao table page shows, read from the floor and asked of the engine: the pack, the
taille in progress (its bottom card, its draws so far left and right as cards, the engine's word
for what comes next), the layout of the 13 ranks with the stakes standing on each (holder,
amount, mark, plié) and the banker's approvals waiting to be used. Reads only: every act is a
service (casino/pit/pharao.py calls casino/floor/play/pharao/tailles.py).

What stands on a rank is the engine's reading of the taille's records (``deal_of``), as for the
services, so the page and the acts cannot disagree about a stake."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.floor.models import Shift
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    Taille,
    TaillePhase,
)
from casino.floor.play.pharao.tailles import deal_of
from casino.floor.play.pharao.words import mark_word
from casino.games import pharao as engine
from casino.games.cards import Rank
from casino.games.reglement import Reglement
from casino.pit.table_view import Face, face, holder_name, stake_limits
from casino.shown import money
from shoes.models import Pack, PackState
from shoes.services import cards_left, packs_at

# The layout as painted on the cloth: one card of each rank, ace to king.
RANKS = tuple(Rank)
APPROVAL_WORDS = {
    "reduce": gettext_lazy("réduction de %(amount)s"),
    "withdraw": gettext_lazy("retrait"),
}


def rank_label(code: str) -> str:
    return "10" if code == "T" else code


@dataclass(frozen=True)
class ApprovalView:
    act: str
    word: str
    by: str


@dataclass(frozen=True)
class StakeView:
    pk: int
    ref: str
    holder: str
    base: str
    mark: str
    mark_word: str
    riding: str
    protected: str  # "" when nothing is protected
    stands: str
    coming: bool  # placed for the draw to come: nothing changes it before that draw
    just_won: bool  # won the draw just made, no mark on that win yet: may be marked or collected
    plie: bool  # halved by a plié on its rank
    placed_by: str
    approvals: list[ApprovalView]


@dataclass
class RankView:
    code: str
    label: str
    left: int
    exhausted: bool
    stakes: list[StakeView] = field(default_factory=list)


@dataclass(frozen=True)
class DrawView:
    number: int
    left: Face
    right: Face | None
    plie: bool


@dataclass
class PharaoView:
    shift: Shift
    rules: Reglement
    limits: str
    pack: Pack | None
    left: int | None
    taille: Taille | None = None
    last_taille: Taille | None = None
    phase: str = "none"  # "none", "between" (stakes may change), "drawing" (a draw half dealt)
    bottom: Face | None = None
    draws: list[DrawView] = field(default_factory=list)
    next_word: str = ""
    ranks: list[RankView] = field(default_factory=list)
    staff: list[tuple[str, str]] = field(default_factory=list)


def _draws(taille: Taille, deal: engine.TailleDeal) -> list[DrawView]:
    draws = [
        DrawView(d.number, face(d.bank_card), face(d.players_card), d.plie)
        for d in PharaoDraw.objects.filter(taille=taille).order_by("number")
    ]
    if not deal.between_draws and not deal.complete:
        draws.append(DrawView(deal.completed + 1, face(str(deal.laid[-1])), None, False))
    return draws


def _next_word(deal: engine.TailleDeal) -> str:
    if deal.complete:
        return _("La taille est finie : les mises restantes sont rendues.")
    words = {
        engine.Side.BANK: _(
            "Tirage %(draw)s : carte de gauche, celle de la banque. Les mises changent jusque-là."
        ),
        engine.Side.PLAYERS: _(
            "Tirage %(draw)s : carte de droite, celle des joueurs. Aucune mise ne change avant."
        ),
    }
    assert deal.next_side is not None, "a taille not complete has a next card"
    return words[deal.next_side] % {"draw": deal.completed + 1}


def _ranks(taille: Taille, deal: engine.TailleDeal) -> list[RankView]:
    ranks = {
        r: RankView(r.value, rank_label(r.value), deal.rank_left(r), deal.exhausted(r))
        for r in RANKS
    }
    stakes = {
        str(s.pk): s
        for s in PharaoStake.objects.filter(taille=taille).select_related("holder", "placed_by")
    }
    plie = set(
        PharaoSettlement.objects.filter(taille=taille, outcome="plie").values_list(
            "stake_id", flat=True
        )
    )
    approvals: dict[int, list[ApprovalView]] = {}
    for approval in PharaoApproval.objects.filter(
        stake__taille=taille, draw=deal.completed + 1, used_by__isnull=True
    ).select_related("approved_by"):
        word = APPROVAL_WORDS[approval.act] % {"amount": money(approval.amount or 0)}
        by = approval.approved_by.get_full_name() or approval.approved_by.username
        approvals.setdefault(approval.stake_id, []).append(ApprovalView(approval.act, word, by))
    for standing in deal.standing.values():
        stake = stakes[standing.id]
        ranks[standing.rank].stakes.append(
            StakeView(
                pk=stake.pk,
                ref=stake.ref,
                holder=holder_name(stake.holder),
                base=money(standing.base),
                mark=standing.mark,
                mark_word=mark_word(standing.mark),
                riding=money(standing.riding),
                protected=money(standing.protected) if standing.protected else "",
                stands=money(standing.stands),
                coming=stake.draw > deal.completed,
                just_won=(
                    deal.between_draws and standing.won_on == deal.completed and not standing.marked
                ),
                plie=stake.pk in plie,
                placed_by=stake.placed_by.get_full_name() or stake.placed_by.username,
                approvals=approvals.get(stake.pk, []),
            )
        )
    return list(ranks.values())


def pharao_view(shift: Shift) -> PharaoView:
    """Everything the Pharao page shows of the table where ``shift`` is open."""
    pack = packs_at(shift.table_id, PackState.IN_PLAY).first()
    rules = shift.rules()
    view = PharaoView(
        shift=shift,
        rules=rules,
        limits=stake_limits(rules),
        pack=pack,
        left=cards_left(pack)[0] if pack else None,
    )
    taille = (
        Taille.objects.filter(shift=shift, phase=TaillePhase.DEALING)
        .select_related("reglement", "pack")
        .first()
    )
    if taille is None:
        last = Taille.objects.filter(shift=shift).order_by("-number").first()
        if last is not None:
            # The taille just ended stays in sight, its draws as they came, until the next one.
            view.last_taille = last
            view.bottom = face(last.bottom_card)
            view.draws = [
                DrawView(d.number, face(d.bank_card), face(d.players_card), d.plie)
                for d in PharaoDraw.objects.filter(taille=last).order_by("number")
            ]
        view.ranks = [RankView(r.value, rank_label(r.value), 4, False) for r in RANKS]
        return view
    deal = deal_of(taille)
    view.taille = taille
    view.phase = "between" if deal.between_draws else "drawing"
    view.bottom = face(taille.bottom_card)
    view.draws = _draws(taille, deal)
    view.next_word = _next_word(deal)
    view.ranks = _ranks(taille, deal)
    return view
