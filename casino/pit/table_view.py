"""What the table page shows, read from the floor and asked of the engine: the séance and its
limits, the pack, the coup in progress (its rows as cards with their totals and the engine's word
for what comes next, its stakes on the layout beside the prison, the announcement and the
settlement stake by stake before it is confirmed), the cards passing. Reads only: every act is a
service (casino/pit/table.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino.floor.coups import FINISHED, deal_of, rules_of, table_prison
from casino.floor.models import Account, Coup, CoupPhase, CoupResult, Duty, Shift, Stake
from casino.floor.selectors import settlement_preview
from casino.games.reglement import Reglement
from casino.games.trente_et_quarante import CoupDeal, Row
from shoes.models import Pack, PackState
from shoes.services import cards_left, current_taille, packs_at

# The layout as the table is drawn: the two rows' chances, then the colour's.
CHANCES = ("noir", "rouge", "couleur", "inverse")
CHANCE_WORDS = {
    "noir": gettext_lazy("noir"),
    "rouge": gettext_lazy("rouge"),
    "couleur": gettext_lazy("couleur"),
    "inverse": gettext_lazy("inverse"),
}
PHASE_WORDS = {
    CoupPhase.BETTING: gettext_lazy("Faites vos jeux"),
    CoupPhase.CLOSED: gettext_lazy("Le jeu est fait"),
    CoupPhase.DEALING: gettext_lazy("Tirage"),
    CoupPhase.COMPLETE: gettext_lazy("Rangées complètes"),
}
ROW_WORDS = {
    "noir": gettext_lazy("Première rangée — noir"),
    "rouge": gettext_lazy("Seconde rangée — rouge"),
}
NEXT_ROW_WORDS = {
    "noir": gettext_lazy("Carte suivante : première rangée (noir)"),
    "rouge": gettext_lazy("Carte suivante : seconde rangée (rouge)"),
}
OUTCOME_WORDS = {
    "won": gettext_lazy("gagnée"),
    "lost": gettext_lazy("perdue"),
    "push": gettext_lazy("rendue"),
    "half_lost": gettext_lazy("moitié perdue"),
    "imprisoned": gettext_lazy("en prison"),
    "still_imprisoned": gettext_lazy("reste en prison"),
    "freed": gettext_lazy("libérée"),
    "prison_lost": gettext_lazy("perdue en prison"),
    "void": gettext_lazy("coup nul, rendue"),
    "refunded": gettext_lazy("remboursée à la fin de la taille"),
}
# The announcements a tailleur may speak (RULES.md 1.2.8), offered when the spoken one is written.
PHRASES = (
    "rouge gagne et couleur",
    "rouge gagne, couleur perd",
    "rouge perd et couleur",
    "rouge perd, couleur gagne",
    "après",
    "refait",
)
SUITS = (("S", "♠", False), ("H", "♥", True), ("D", "♦", True), ("C", "♣", False))
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "T", "J", "Q", "K")


def money(minor: int) -> str:
    """Minor units as the pit reads an amount, in the request's language (``1 234,50``); exact
    (a Decimal, never a float)."""
    return number_format(Decimal(minor).scaleb(-2), 2, force_grouping=True)


def holder_name(account: Account) -> str:
    if account.kind == Account.Kind.SEAT:
        return _("place %(seat)s") % {"seat": account.name}
    return _("patron %(patron)s") % {"patron": account.code.removeprefix("patron:")}


@dataclass(frozen=True)
class Face:
    """A card as drawn: its code, rank as printed, suit glyph and colour."""

    code: str
    rank: str
    glyph: str
    red: bool

    @property
    def label(self) -> str:
        return f"{self.rank}{self.glyph}"


GLYPHS = {suit: (glyph, red) for suit, glyph, red in SUITS}


def face(code: str) -> Face:
    glyph, red = GLYPHS[code[1]]
    return Face(code, "10" if code[0] == "T" else code[0], glyph, red)


# The card picker: 52 buttons, a row per suit.
PICKER = [[face(rank + suit) for rank in RANKS] for suit, _glyph, _red in SUITS]


@dataclass(frozen=True)
class RowView:
    name: str
    label: str
    cards: list[Face]
    total: int
    word: str | None
    closed: bool
    next: bool


def row_view(name: str, row: Row, next_row: str | None) -> RowView:
    return RowView(
        name=name,
        label=str(ROW_WORDS[name]),
        cards=[face(str(c)) for c in row.cards],
        total=row.total,
        word=row.word,
        closed=row.closed,
        next=name == next_row,
    )


@dataclass(frozen=True)
class StakeView:
    pk: int
    ref: str
    holder: str
    chance: str
    amount: str
    insured: bool
    on_refait: str
    withdrawn: bool


@dataclass(frozen=True)
class PrisonerView:
    holder: str
    chance: str
    held: str
    level: int


@dataclass
class Box:
    """One chance on the layout: the stakes of the coup on it, and its prisoners."""

    chance: str
    label: str
    stakes: list[StakeView] = field(default_factory=list)
    prisoners: list[PrisonerView] = field(default_factory=list)


@dataclass(frozen=True)
class PreviewRow:
    holder: str
    chance: str
    stake: str  # the amount staked, or held in prison
    prisoner: bool
    outcome: str
    outcome_code: str
    paid: str
    returned: str
    to_bank: str
    premium: str
    held: str
    level: int


@dataclass(frozen=True)
class Preview:
    rows: list[PreviewRow]
    cut_card: bool
    void: bool
    last: bool
    to_players: str  # paid and returned
    to_bank: str  # collected, premiums included


@dataclass(frozen=True)
class Announcement:
    noir: str | None
    rouge: str | None
    result: str | None


@dataclass(frozen=True)
class LastCoup:
    number: int
    rows: list[RowView]
    announcement: Announcement
    spoken: str
    void: bool
    last: bool
    settled_at: Any
    settled_by: str


@dataclass(frozen=True)
class Passing:
    """The cards passing: required when the engine ended the taille and the undealt cards are
    not recorded yet; offered between coups while the pack is in play."""

    pack: Pack
    left: int
    required: bool


@dataclass
class TableView:
    shift: Shift
    rules: Reglement
    limits: str
    insurance: str | None
    refait: str
    refait_choices: list[tuple[str, str]]
    pack: Pack | None
    taille: int | None
    left: int | None
    coup: Coup | None = None
    phase: str = ""
    rows: list[RowView] = field(default_factory=list)
    next_word: str = ""
    boxes: list[Box] = field(default_factory=list)
    stakes: list[StakeView] = field(default_factory=list)
    announcement: Announcement | None = None
    preview: Preview | None = None
    last_coup: LastCoup | None = None
    passing: Passing | None = None
    staff: list[tuple[str, str]] = field(default_factory=list)  # the whole page's (staff_on_duty)
    phrases: tuple[str, ...] = PHRASES


def stake_limits(rules: Reglement) -> str:
    """The table's limits as the pit reads them (both games' pages)."""
    return _("Mises de %(minimum)s à %(maximum)s, chacune seule") % {
        "minimum": money(rules.min_stake or 0),
        "maximum": money(rules.max_stake or 0),
    }


def _limits(rules: Reglement) -> tuple[str, str | None, str, list[tuple[str, str]]]:
    limits = stake_limits(rules)
    insurance = None
    if rules.insurance:
        insurance = _(
            "Assurance contre le refait : %(premium)s par tranche de %(unit)s commencée"
        ) % {"premium": money(rules.insurance_premium), "unit": money(rules.insurance_unit)}
        if rules.insurance_min_stake:
            insurance += _(" (mise d'au moins %(minimum)s)") % {
                "minimum": money(rules.insurance_min_stake)
            }
    choices: list[tuple[str, str]] = []
    if rules.refait_mode == "prison":
        refait = _("Refait : en prison (%(levels)s niveaux au plus)") % {
            "levels": rules.max_prison_level
        }
    elif rules.refait_mode == "half":
        refait = _("Refait : la banque prend la moitié")
    else:
        default = _("en prison") if rules.refait_default == "prison" else _("la moitié rendue")
        refait = _("Refait : au choix du joueur (à défaut : %(default)s)") % {"default": default}
        choices = [
            ("", _("à défaut (%(default)s)") % {"default": default}),
            ("prison", _("en prison")),
            ("half", _("la moitié rendue")),
        ] + [
            (f"move:{c}", _("en prison sur %(chance)s") % {"chance": CHANCE_WORDS[c]})
            for c in CHANCES
        ]
    return limits, insurance, refait, choices


def _refait_word(value: str) -> str:
    if not value:
        return ""
    if value.startswith("move:"):
        return _("refait : en prison sur %(chance)s") % {"chance": CHANCE_WORDS[value[5:]]}
    return _("refait : en prison") if value == "prison" else _("refait : la moitié rendue")


def _stake_view(stake: Stake) -> StakeView:
    return StakeView(
        pk=stake.pk,
        ref=stake.ref,
        holder=holder_name(stake.holder),
        chance=stake.chance,
        amount=money(stake.amount),
        insured=stake.insured,
        on_refait=_refait_word(stake.on_refait),
        withdrawn=hasattr(stake, "withdrawal"),
    )


def staff_on_duty(shift: Shift) -> list[tuple[str, str]]:
    """Who is on duty at the séance, by post (the page's header; the panel does not show it)."""
    duties = (
        Duty.objects.filter(shift=shift, end__isnull=True)
        .select_related("person")
        .order_by("post", "started_at")
    )
    return [(d.get_post_display(), d.person.get_full_name() or d.person.username) for d in duties]


def _preview(coup: Coup) -> Preview | None:
    found = settlement_preview(coup)
    if found is None:
        return None
    plan = found.plan
    rows = []
    to_players = to_bank = 0
    for r in plan.results:
        stake = plan.stakes[int(r.stake)]
        prisoner = stake.coup_id != coup.pk
        to_players += r.paid + r.returned
        to_bank += r.to_bank + r.premium
        rows.append(
            PreviewRow(
                holder=holder_name(stake.holder),
                chance=(r.chance.value if r.chance else stake.chance),
                stake=money(stake.amount),
                prisoner=prisoner,
                outcome=str(OUTCOME_WORDS[r.outcome.value]),
                outcome_code=r.outcome.value,
                paid=money(r.paid) if r.paid else "",
                returned=money(r.returned) if r.returned else "",
                to_bank=money(r.to_bank) if r.to_bank else "",
                premium=money(r.premium) if r.premium else "",
                held=money(r.held) if r.held else "",
                level=r.level,
            )
        )
    return Preview(rows, found.cut_card, plan.void, plan.last, money(to_players), money(to_bank))


def _announcement(deal: CoupDeal) -> Announcement:
    said = deal.outcome().announcement
    return Announcement(said.noir, said.rouge, said.result)


def _prison(shift: Shift) -> list[tuple[str, PrisonerView]]:
    prisoners = table_prison(shift)
    holders = {
        s.pk: s.holder
        for s in Stake.objects.filter(pk__in=[int(p.stake) for p in prisoners]).select_related(
            "holder"
        )
    }
    return [
        (
            p.chance.value,
            PrisonerView(
                holder_name(holders[int(p.stake)]), p.chance.value, money(p.held), p.level
            ),
        )
        for p in prisoners
    ]


def _last_coup(shift: Shift) -> LastCoup | None:
    result = (
        CoupResult.objects.filter(coup__shift=shift)
        .select_related("coup", "settled_by")
        .order_by("-id")
        .first()
    )
    if result is None:
        return None
    said = result.announcement

    def row(name: str, cards: list[str], total: int) -> RowView:
        faces = [face(c) for c in cards]
        return RowView(name, str(ROW_WORDS[name]), faces, total, said[name], total > 30, False)

    return LastCoup(
        number=result.coup.number,
        rows=[
            row("noir", result.noir_cards, result.noir_total),
            row("rouge", result.rouge_cards, result.rouge_total),
        ],
        announcement=Announcement(said["noir"], said["rouge"], said["result"]),
        spoken=result.spoken,
        void=result.void,
        last=result.last,
        settled_at=result.settled_at,
        settled_by=result.settled_by.get_full_name() or result.settled_by.username,
    )


def _passing(shift: Shift, pack: Pack | None, left: int | None, coup_open: bool) -> Passing | None:
    if coup_open:
        return None
    if pack is not None:
        return Passing(pack, left or 0, required=False)
    for passed in packs_at(shift.table_id, PackState.PASSED):
        counted = passed.talon_counts.filter(taille=current_taille(passed)).exists()
        left = cards_left(passed)[0]
        if not counted and left:
            return Passing(passed, left, required=True)
    return None


def table_view(shift: Shift) -> TableView:
    """Everything the page shows of the table where ``shift`` is open."""
    rules = shift.rules()
    limits, insurance, refait, choices = _limits(rules)
    pack = packs_at(shift.table_id, PackState.IN_PLAY).first()
    coup = (
        Coup.objects.filter(shift=shift)
        .exclude(phase__in=FINISHED)
        .select_related("shift__table", "pack", "reglement")
        .first()
    )
    view = TableView(
        shift=shift,
        rules=rules,
        limits=limits,
        insurance=insurance,
        refait=refait,
        refait_choices=choices,
        pack=pack,
        taille=(coup.taille if coup else current_taille(pack)) if pack else None,
        left=cards_left(pack)[0] if pack else None,
        coup=coup,
    )
    view.boxes = [Box(c, str(CHANCE_WORDS[c])) for c in CHANCES]
    by_chance = {box.chance: box for box in view.boxes}
    for chance, prisoner in _prison(shift):
        by_chance[chance].prisoners.append(prisoner)
    view.passing = _passing(shift, pack, view.left, coup is not None)
    if coup is None:
        view.last_coup = _last_coup(shift)
        return view
    view.phase = str(PHASE_WORDS[CoupPhase(coup.phase)])
    stakes = coup.stakes.select_related("holder", "withdrawal").order_by("id")
    view.stakes = [_stake_view(s) for s in stakes]
    for stake in view.stakes:
        if not stake.withdrawn:
            by_chance[stake.chance].stakes.append(stake)
    deal = deal_of(coup, rules_of(coup))
    view.rows = [
        row_view("noir", deal.noir, deal.next_row),
        row_view("rouge", deal.rouge, deal.next_row),
    ]
    # Only a coup that can be settled now has a preview: rows complete, no card left, or the
    # cut card's rule in force (the selector decides; this spares it the look otherwise).
    if deal.complete or view.left == 0 or rules.end_rule == "cut_card":
        view.preview = _preview(coup)
    if coup.phase == CoupPhase.BETTING:
        view.next_word = _("Les mises sont ouvertes ; puis le tailleur : « le jeu est fait ».")
    elif view.preview is not None and view.preview.cut_card:
        view.next_word = _("La carte de coupe est sortie : le coup est nul, la taille finit.")
    elif deal.complete:
        view.next_word = _("Rangées complètes : annoncez, puis réglez.")
        view.announcement = _announcement(deal)
    elif view.preview is not None:
        view.next_word = _("Plus de cartes : le coup est nul.")
    else:
        view.next_word = str(NEXT_ROW_WORDS[deal.next_row or "noir"])
    return view
