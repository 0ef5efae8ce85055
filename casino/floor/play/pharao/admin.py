"""Pharao's admin pages, read-only like every record's: a taille as its 26 draws (the bank's card
left, the players' right, the plié marked, the bottom card), the stakes by rank with their marks and
history, the banker's approvals and the refusals recorded at the table; a séance's tailles on its
page (``SHIFT_INLINES``)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from audit.models import Anomaly
from casino import shown
from casino.admin_base import RecordAdmin, RecordInline, RelatedReadWith
from casino.floor.admin import ShiftFilter, movement_lines
from casino.floor.models import Movement
from casino.floor.play.pharao.models import (
    PharaoApproval,
    PharaoDraw,
    PharaoSettlement,
    PharaoStake,
    PharaoStakeAct,
    StakeAct,
    Taille,
)
from casino.floor.play.pharao.selectors import taille_movements
from casino.floor.play.pharao.words import mark_word
from casino.floor.selectors import card_html
from casino.games.cards import Rank
from casino.games.pharao import DRAWS, SIMPLE
from casino.tallies import count_by

OUTCOME_WORDS = {
    "won": gettext_lazy("gagnée"),
    "lost": gettext_lazy("perdue"),
    "plie": gettext_lazy("pliée"),
    "dead": gettext_lazy("carte morte"),
    "returned": gettext_lazy("rendue à la fin de la taille"),
}
# The refusals recorded at a Pharao table as anomalies about the taille (tailles.py).
REFUSALS = {
    "late_stake": gettext_lazy("mise tardive"),
    "false_paroli": gettext_lazy("faux paroli"),
    "bottom_card": gettext_lazy("carte du dessous hors de sa place"),
}


def outcome_word(code: str) -> str:
    return str(OUTCOME_WORDS.get(code, code))


def _stake_link(stake: PharaoStake) -> SafeString:
    return format_html(
        '<a href="{}">{}</a>', reverse("admin:floor_pharaostake_change", args=[stake.pk]), stake.ref
    )


def settlement_text(s: PharaoSettlement) -> str:
    """``gagnée · payé 10,00 · marque paroli``: what the draw (or the end) did to one stake."""
    parts = [outcome_word(s.outcome)]
    for amount, word in (
        (s.paid, _("payé %(amount)s")),
        (s.returned, _("rendu %(amount)s")),
        (s.to_bank, _("à la banque %(amount)s")),
    ):
        if amount:
            parts.append(word % {"amount": shown.money(amount)})
    parts.append(_("marque %(mark)s") % {"mark": mark_word(s.mark)})
    return " · ".join(parts)


def act_text(act: PharaoStakeAct) -> str:
    """An act on a stake as the pit says it, with the money it moved and the approval it used."""
    said = str(StakeAct(act.act).label)
    parts = [said if act.amount is None else f"{said} {shown.money(act.amount)}"]
    parts.append(
        _("avant le tirage %(draw)s, par %(by)s, %(at)s")
        % {"draw": act.draw, "by": act.by, "at": shown.moment(act.at, seconds=True)}
    )
    if act.put:
        parts.append(_("mis sur la carte %(amount)s") % {"amount": shown.money(act.put)})
    if act.returned:
        parts.append(_("rendu %(amount)s") % {"amount": shown.money(act.returned)})
    if act.approval is not None:
        parts.append(_("approuvé par %(person)s") % {"person": act.approval.approved_by})
    parts.append(_("marque %(mark)s") % {"mark": mark_word(act.mark)})
    return " · ".join(parts)


def stake_history(stake: PharaoStake) -> list[str]:
    """The stake's life in the order it happened: placed, the acts before each draw, what each
    draw did to it, its return at the end. Acts come before the draw they precede, so ordering by
    (draw, placed < acts < settlement) is the order of the table."""
    end = DRAWS + 1
    lines: list[tuple[tuple[int, int, int], str]] = [
        (
            (stake.draw, 0, 0),
            _("posée pour le tirage %(draw)s par %(by)s, %(at)s : %(amount)s")
            % {
                "draw": stake.draw,
                "by": stake.placed_by,
                "at": shown.moment(stake.placed_at, seconds=True),
                "amount": shown.money(stake.amount),
            },
        )
    ]
    for act in stake.acts.select_related("by", "approval__approved_by"):
        lines.append(((act.draw, 1, act.pk), act_text(act)))
    for s in stake.settlements.select_related("draw"):
        number = s.draw.number if s.draw is not None else end
        when = (
            _("tirage %(draw)s") % {"draw": number} if s.draw is not None else _("fin de la taille")
        )
        said = _("%(when)s : %(what)s") % {"when": when, "what": settlement_text(s)}
        lines.append(((number, 2, s.pk), said))
    return [text for _key, text in sorted(lines, key=lambda line: line[0])]


def last_mark(stake: PharaoStake) -> str:
    """The stake's mark as last recorded (by an act or a settlement), ``simple`` before any."""
    # A settlement at draw d comes after the acts before draw d: the later of the two is the one
    # with the greater (draw, act before settlement).
    found = [(draw, 1, pk, mark) for pk, draw, mark in stake.acts.values_list("pk", "draw", "mark")]
    # A plié's line keeps the mark it had; what stands after it is a simple stake.
    found += [
        (DRAWS + 1 if draw is None else draw, 2, pk, SIMPLE if outcome == "plie" else mark)
        for pk, draw, mark, outcome in stake.settlements.values_list(
            "pk", "draw__number", "mark", "outcome"
        )
    ]
    return max(found)[3] if found else SIMPLE


def _lines(lines: list[str]) -> SafeString:
    return format_html_join("", "<div>{}</div>", ((line,) for line in lines)) or mark_safe("–")


class ShiftTailleInline(RecordInline):
    model = Taille
    fields = ["number", "pack", "phase", "bottom", "draws_done"]
    show_change_link = True
    verbose_name_plural = gettext_lazy("tailles")

    @admin.display(description=gettext_lazy("carte du dessous"))
    def bottom(self, taille: Taille) -> str:
        return card_html(taille.bottom_card)

    @admin.display(description=gettext_lazy("tirages"))
    def draws_done(self, taille: Taille) -> str:
        return f"{taille.draws.count()} / {DRAWS}"


class TailleFilter(RelatedReadWith):
    """The tailles to filter stakes by, each named with its table and pack."""

    related = ("shift__table", "pack")


@admin.register(Taille)
class TailleAdmin(RecordAdmin):
    list_display = ["__str__", "phase", "draws_done", "opened_at", "opened_by"]
    list_select_related = ["shift__table", "pack", "opened_by"]  # what a row's name shows
    list_filter = ["shift__table", "phase", ("shift", ShiftFilter)]
    date_hierarchy = "opened_at"
    readonly_fields = [
        "shift",
        "pack",
        "pack_taille",
        "number",
        "reglement",
        "limits",
        "bottom",
        "opened_at",
        "opened_by",
        "phase",
        "draws_table",
        "stakes_by_rank",
        "approvals",
        "refusals",
        "movements",
    ]
    fields = readonly_fields

    def read_with_page(self, rows: list[Taille]) -> None:
        """Each taille's draws done, for the page in one query."""
        done = count_by(PharaoDraw.objects.filter(taille__in=rows), "taille_id")
        for taille in rows:
            taille.page_draws = done.get(taille.pk, 0)  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("tirages"))
    def draws_done(self, taille: Taille) -> str:
        return f"{taille.page_draws} / {DRAWS}"  # type: ignore[attr-defined]

    @admin.display(description=gettext_lazy("mise minimum – maximum"))
    def limits(self, taille: Taille) -> str:
        return f"{shown.money(taille.min_stake)} – {shown.money(taille.max_stake)}"

    @admin.display(description=gettext_lazy("carte du dessous"))
    def bottom(self, taille: Taille) -> str:
        return format_html(
            "{} {}", card_html(taille.bottom_card), _("montrée avant le premier tirage")
        )

    @admin.display(description=gettext_lazy("les 26 tirages"))
    def draws_table(self, taille: Taille) -> str:
        """Every draw of the taille, those still to come as a dash: the bank's card left, the
        players' right, the plié marked, and what the draw did to each stake on its ranks."""
        draws = {d.number: d for d in taille.draws.all()}
        settled: dict[int, list[PharaoSettlement]] = {}
        for s in PharaoSettlement.objects.filter(taille=taille, draw__isnull=False).select_related(
            "stake", "draw"
        ):
            settled.setdefault(s.draw.number, []).append(s)  # type: ignore[union-attr]
        rows = []
        for number in range(1, DRAWS + 1):
            draw = draws.get(number)
            if draw is None:
                rows.append((number, "–", "–", "", "–"))
                continue
            rows.append(
                (
                    number,
                    card_html(draw.bank_card),
                    self._players_card(taille, draw),
                    format_html("<strong>{}</strong>", _("plié")) if draw.plie else "",
                    _lines(
                        [
                            format_html(
                                _("{stake} (rang {rank}) : {what}"),
                                stake=_stake_link(s.stake),
                                rank=s.stake.rank,
                                what=settlement_text(s),
                            )
                            for s in settled.get(number, [])
                        ]
                    ),
                )
            )
        return format_html(
            "<table><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>"
            "</thead><tbody>{}</tbody></table>",
            _("tirage"),
            _("banque (gauche)"),
            _("joueurs (droite)"),
            _("plié"),
            _("réglé"),
            format_html_join(
                "",
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rows,
            ),
        )

    def _players_card(self, taille: Taille, draw: PharaoDraw) -> SafeString:
        if draw.number == DRAWS and draw.players_card == taille.bottom_card:
            return format_html("{} {}", card_html(draw.players_card), _("(la carte du dessous)"))
        return card_html(draw.players_card)

    @admin.display(description=gettext_lazy("mises par rang"))
    def stakes_by_rank(self, taille: Taille) -> str:
        """The layout's 13 ranks with the stakes placed on each: holder, stake, its mark as last
        recorded, and its history."""
        stakes = list(taille.stakes.select_related("holder", "placed_by"))
        rows = []
        for rank in Rank:
            for stake in (s for s in stakes if s.rank == rank.value):
                rows.append(
                    (
                        rank.value,
                        _stake_link(stake),
                        stake.holder.code,
                        shown.money(stake.amount),
                        mark_word(last_mark(stake)),
                        _lines(stake_history(stake)),
                    )
                )
        if not rows:
            return "–"
        return format_html(
            "<table><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th><th>{}</th>"
            "<th>{}</th></tr></thead><tbody>{}</tbody></table>",
            _("rang"),
            _("mise"),
            _("joueur ou place"),
            _("montant"),
            _("marque"),
            _("histoire"),
            format_html_join(
                "",
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                rows,
            ),
        )

    @admin.display(description=gettext_lazy("approbations du banquier"))
    def approvals(self, taille: Taille) -> str:
        return approval_lines(PharaoApproval.objects.filter(stake__taille=taille))

    @admin.display(description=gettext_lazy("refus enregistrés"))
    def refusals(self, taille: Taille) -> str:
        """The refusals kept as evidence (a late stake, a false paroli, the bottom card out of
        its place): each is an anomaly about the taille, to be reviewed on its own page."""
        found = Anomaly.objects.filter(
            subject_type=Taille._meta.label_lower,
            subject_id=str(taille.pk),
            detector__in=list(REFUSALS),
        ).order_by("detected_at", "id")
        return (
            format_html_join(
                "",
                '<div>{} · <a href="{}">{}</a> · {}</div>',
                (
                    (
                        shown.moment(a.detected_at, seconds=True),
                        reverse("admin:audit_anomaly_change", args=[a.pk]),
                        REFUSALS[a.detector],
                        refusal_text(a),
                    )
                    for a in found
                ),
            )
            or "–"
        )

    @admin.display(description=gettext_lazy("mouvements"))
    def movements(self, taille: Taille) -> str:
        return movement_lines(taille_movements(taille))


def refusal_text(anomaly: Anomaly) -> str:
    """What was refused, from the anomaly's evidence (written by tailles.py at the refusal)."""
    e: dict[str, Any] = anomaly.evidence
    if anomaly.detector == "late_stake":
        what = str(e.get("what", "")).removeprefix("a ")
        said = str(StakeAct(what).label) if what in StakeAct.values else _("une mise posée")
        detail = _("%(what)s pendant le tirage %(draw)s") % {"what": said, "draw": e.get("draw")}
        if e.get("ref"):
            detail += " · " + _("mise %(ref)s") % {"ref": e["ref"]}
        return detail
    if anomaly.detector == "false_paroli":
        return _("%(move)s sur la mise %(ref)s (rang %(rank)s) après le tirage %(draw)s") % {
            "move": mark_word(str(e.get("move", ""))),
            "ref": e.get("ref"),
            "rank": e.get("rank"),
            "draw": e.get("after_draw"),
        }
    return _("%(card)s refusée comme carte %(position)s") % {
        "card": e.get("card"),
        "position": e.get("position"),
    }


def approval_lines(approvals: Any) -> str:
    """Each approval: the act and stake, who recorded the stake, who approved before which draw,
    and the act that used it (an unused one lapsed when its draw began)."""
    rows = []
    for a in approvals.select_related("stake__placed_by", "approved_by", "used_by__by").order_by(
        "id"
    ):
        used = getattr(a, "used_by", None)
        rows.append(
            (
                StakeAct(a.act).label,
                shown.money(a.amount) if a.amount is not None else "",
                _stake_link(a.stake),
                _("posée par %(person)s") % {"person": a.stake.placed_by},
                _("approuvée par %(person)s avant le tirage %(draw)s, %(at)s")
                % {"person": a.approved_by, "draw": a.draw, "at": shown.moment(a.at, seconds=True)},
                _("faite par %(person)s") % {"person": used.by}
                if used is not None
                else _("non utilisée"),
            )
        )
    return format_html_join("", "<div>{} {} · {} · {} · {} · {}</div>", rows) or "–"


@admin.register(PharaoStake)
class PharaoStakeAdmin(RecordAdmin):
    list_display = ["__str__", "taille", "holder", "rank", "sum", "draw", "placed_by"]
    list_filter = ["taille__shift__table", "rank", ("taille", TailleFilter)]
    readonly_fields = [
        "taille",
        "ref",
        "holder",
        "rank",
        "sum",
        "draw",
        "placed_at",
        "placed_by",
        "mark",
        "history",
        "approvals",
        "movements",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("montant"), ordering="amount")
    def sum(self, stake: PharaoStake) -> str:
        return shown.money(stake.amount)

    @admin.display(description=gettext_lazy("marque"))
    def mark(self, stake: PharaoStake) -> str:
        return mark_word(last_mark(stake))

    @admin.display(description=gettext_lazy("histoire"))
    def history(self, stake: PharaoStake) -> str:
        return _lines(stake_history(stake))

    @admin.display(description=gettext_lazy("approbations du banquier"))
    def approvals(self, stake: PharaoStake) -> str:
        return approval_lines(stake.approvals.all())

    @admin.display(description=gettext_lazy("mouvements"))
    def movements(self, stake: PharaoStake) -> str:
        return movement_lines(
            Movement.objects.filter(reference=f"taille:{stake.taille_id}:pharao_stake:{stake.pk}")
            .select_related("debit", "credit")
            .order_by("id")
        )


@admin.register(PharaoApproval)
class PharaoApprovalAdmin(RecordAdmin):
    list_display = ["stake", "act", "sum", "draw", "recorded_by", "approved_by", "at", "used"]
    list_filter = ["act", "stake__taille__shift__table"]
    readonly_fields = [
        "stake",
        "act",
        "sum",
        "draw",
        "recorded_by",
        "approved_by",
        "at",
        "used",
    ]
    fields = readonly_fields

    @admin.display(description=gettext_lazy("montant"))
    def sum(self, approval: PharaoApproval) -> str:
        return shown.money(approval.amount) if approval.amount is not None else "–"

    @admin.display(description=gettext_lazy("mise posée par"))
    def recorded_by(self, approval: PharaoApproval) -> str:
        return str(approval.stake.placed_by)

    @admin.display(description=gettext_lazy("utilisée par"))
    def used(self, approval: PharaoApproval) -> str:
        act = PharaoStakeAct.objects.filter(approval=approval).select_related("by").first()
        if act is None:
            return _("non utilisée")
        return act_text(act)


SHIFT_INLINES = [ShiftTailleInline]
