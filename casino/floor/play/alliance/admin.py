"""Alliance's admin pages, read-only like every record's: a deal as it was dealt (the hands and
the table cards as cards), called, declared and played (each trick with who played each card and
who took it), and what it settled (the payments, the fee, each player's result); a séance's seats
and deals on its page (``SHIFT_INLINES``).

The hands of a deal are the players' secret while it is played: the pit and those who oversee
read every deal, a croupier the deals of the séances he worked, nobody else any (the API's scope
for the floor's records, ``casino/floor/api.py``).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from casino import shown
from casino.admin_base import RecordAdmin, RecordInline
from casino.api.permissions import PIT
from casino.floor.admin import movement_lines
from casino.floor.models import Duty, Movement
from casino.floor.play.alliance.deal_view import DealSeen, deal_seen
from casino.floor.play.alliance.models import CercleSeat, Deal, DealPhase
from casino.floor.play.alliance.words import call_word, game_word, payment_word, suit_word
from casino.floor.selectors import card_html
from casino.people.services import roles_of


def readable_deals(user: Any, deals: QuerySet[Deal]) -> QuerySet[Deal]:
    """The deals ``user`` may read: all of them for the pit and oversight (and a superuser, whom
    the admin's menus open to), those of the séances he worked for anyone else."""
    if getattr(user, "is_superuser", False) or roles_of(user) & set(PIT):
        return deals
    worked = Duty.objects.filter(person=user).values("shift_id")
    return deals.filter(shift__in=worked)


def _cards(codes: Any) -> SafeString:
    return format_html_join("", "{}", ((card_html(c),) for c in codes)) or mark_safe("–")


def _table(head: list[Any], rows: list[tuple[Any, ...]]) -> SafeString:
    """An HTML table of ``rows`` under ``head``, every cell escaped unless already safe."""
    cells = "".join(["<td>{}</td>"] * len(head))
    return format_html(
        "<table><thead><tr>{}</tr></thead><tbody>{}</tbody></table>",
        format_html_join("", "<th>{}</th>", ((h,) for h in head)),
        format_html_join("", f"<tr>{cells}</tr>", rows),
    )


def _seen(deal: Deal) -> DealSeen:
    """The deal as read once per page: every field of the page reads the same reading."""
    cached: DealSeen | None = deal.__dict__.get("_seen")
    if cached is None:
        cached = deal.__dict__["_seen"] = deal_seen(deal)
    return cached


def _outcome(deal: Deal) -> dict[str, Any] | None:
    settlement = getattr(deal, "settlement", None) if deal.phase == DealPhase.OVER else None
    return None if settlement is None else settlement.outcome


class SettledShown:
    """What a deal settled, for the lists of deals: its declarer, game and winners once over."""

    @admin.display(description=gettext_lazy("déclarant"))
    def declarer(self, deal: Deal) -> str:
        outcome = _outcome(deal)
        return outcome["declarer"] if outcome else "–"

    @admin.display(description=gettext_lazy("jeu"))
    def game(self, deal: Deal) -> str:
        outcome = _outcome(deal)
        return game_word(outcome["game"], forced=outcome["forced"]) if outcome else "–"

    @admin.display(description=gettext_lazy("gagnants"))
    def winners(self, deal: Deal) -> str:
        outcome = _outcome(deal)
        if not outcome:
            return "–"
        return ", ".join(outcome["winners"]) or _("personne")


class ShiftSeatInline(RecordInline):
    model = CercleSeat
    fields = ["seat", "patron", "at", "by", "left"]
    verbose_name_plural = gettext_lazy("places au cercle")

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).select_related("patron", "by", "end__by")

    @admin.display(description=gettext_lazy("levé"))
    def left(self, seating: CercleSeat) -> str:
        end = getattr(seating, "end", None)
        if end is None:
            return _("toujours assis")
        return _("%(at)s par %(by)s (%(reason)s)") % {
            "at": shown.moment(end.at),
            "by": end.by,
            "reason": end.reason,
        }


class ShiftDealInline(SettledShown, RecordInline):
    model = Deal
    fields = ["number", "dealer", "phase", "declarer", "game", "winners"]
    show_change_link = True
    verbose_name_plural = gettext_lazy("donnes")

    def get_queryset(self, request: HttpRequest) -> Any:
        deals = super().get_queryset(request).select_related("settlement")
        return readable_deals(request.user, deals)


@admin.register(Deal)
class DealAdmin(SettledShown, RecordAdmin):
    list_display = [
        "table",
        "shift",
        "number",
        "players_list",
        "dealer",
        "phase",
        "declarer",
        "game",
        "winners",
    ]
    list_filter = ["shift__table", "phase"]
    date_hierarchy = "opened_at"
    readonly_fields = [
        "shift",
        "number",
        "pack",
        "pack_taille",
        "reglement",
        "mark",
        "opened_at",
        "opened_by",
        "phase",
        "players_in_order",
        "hands",
        "table_cards",
        "auction",
        "contract_words",
        "tricks",
        "taken",
        "fahne",
        "payments",
        "results",
        "movements",
    ]
    fields = readonly_fields

    def get_queryset(self, request: HttpRequest) -> Any:
        deals = super().get_queryset(request).select_related("shift__table", "settlement")
        return readable_deals(request.user, deals)

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        # A deal outside the reader's séances exists: it is refused (403), not said missing.
        try:
            return Deal.objects.select_related(
                "shift__table", "pack", "reglement", "opened_by"
            ).get(pk=int(object_id))
        except (Deal.DoesNotExist, ValueError):
            return None

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        if not super().has_view_permission(request, obj):
            return False
        return obj is None or readable_deals(request.user, Deal.objects.filter(pk=obj.pk)).exists()

    # --- the list

    @admin.display(description=gettext_lazy("table"), ordering="shift__table__number")
    def table(self, deal: Deal) -> str:
        return str(deal.shift.table)

    @admin.display(description=gettext_lazy("joueurs"))
    def players_list(self, deal: Deal) -> str:
        return ", ".join(deal.players)

    # --- the page

    @admin.display(description=gettext_lazy("valeur de la marque"))
    def mark(self, deal: Deal) -> str:
        return shown.money(deal.mark_value)

    @admin.display(description=gettext_lazy("joueurs dans l'ordre de la donne"))
    def players_in_order(self, deal: Deal) -> str:
        seen = _seen(deal)
        rows = [
            (
                i,
                p.seat if p.seat is not None else "–",
                p.code,
                p.name or "–",
                self._roles(deal, seen, i, p.code),
            )
            for i, p in enumerate(seen.players, start=1)
        ]
        return _table([_("ordre"), _("place"), _("joueur"), _("nom"), _("rôle")], rows)

    def _roles(self, deal: Deal, seen: DealSeen, order: int, code: str) -> str:
        roles = []
        if order == 1:
            roles.append(_("Vorhand : reçoit, annonce et entame la première"))
        if code == deal.dealer:
            roles.append(_("donneur : a mêlé"))
        if code == deal.cut_by:
            roles.append(_("a coupé"))
        if code == seen.declarer:
            roles.append(_("déclarant"))
        if code == seen.ally:
            roles.append(_("allié"))
        if code == seen.resister:
            roles.append(_("résistant"))
        return " · ".join(roles) or "–"

    @admin.display(description=gettext_lazy("mains telles que données"))
    def hands(self, deal: Deal) -> str:
        seen = _seen(deal)
        if not seen.hands:
            return _("pas encore données")
        rows = [
            (p.seat if p.seat is not None else "–", p.code, _cards(seen.hands[p.code]))
            for p in seen.players
        ]
        return _table([_("place"), _("joueur"), _("cartes, dans l'ordre reçu")], rows)

    @admin.display(description=gettext_lazy("cartes de table"))
    def table_cards(self, deal: Deal) -> str:
        seen = _seen(deal)
        if seen.table_up is None:
            return _("pas encore données")
        return format_html(
            "<div>{} {} · {}</div><div>{} {}</div>",
            _("retournée :"),
            card_html(seen.table_up),
            _("la couleur est %(suit)s") % {"suit": suit_word(seen.table_up[1])},
            _("couvertes, dans l'ordre donné :"),
            _cards(seen.table_down),
        )

    @admin.display(description=gettext_lazy("enchères"))
    def auction(self, deal: Deal) -> str:
        calls = _seen(deal).calls
        if not calls:
            return "–"
        rows = [
            (c.index + 1, c.player, call_word(c.call), shown.moment(c.at, seconds=True), c.by)
            for c in calls
        ]
        head = [_("tour"), _("joueur"), _("annonce"), _("heure"), _("enregistrée par")]
        return _table(head, rows)

    @admin.display(description=gettext_lazy("contrat"))
    def contract_words(self, deal: Deal) -> str:
        seen = _seen(deal)
        if seen.declarer is None or seen.game is None:
            return _("pas encore de déclarant")
        lines = [
            _("%(declarer)s joue %(game)s")
            % {"declarer": seen.declarer, "game": game_word(seen.game, forced=seen.forced)}
        ]
        contract = seen.contract
        if contract is None:
            return format_html_join(
                "", "<div>{}</div>", ((x,) for x in [*lines, _("contrat à venir")])
            )
        parts: list[Any] = []
        if "turn" in contract:
            turned = seen.table_down[contract["turn"] - 1]
            parts.append(
                format_html(
                    "{} {}",
                    _("carte couverte retournée : la n° %(turn)s,") % {"turn": contract["turn"]},
                    card_html(turned),
                )
            )
            if contract.get("take"):
                parts.append(
                    format_html(
                        "{} {}",
                        _("prend les cartes de table et écarte :"),
                        _cards(contract["discard"]),
                    )
                )
            else:
                parts.append(_("sans prise des cartes de table"))
        assert seen.trumps is not None
        parts.append(_("atout : %(suit)s") % {"suit": suit_word(seen.trumps)})
        if seen.table_up and seen.trumps == seen.table_up[1]:
            parts.append(_("l'atout est la couleur : tout se paie double"))
        if "called" in contract:
            parts.append(format_html("{} {}", _("carte appelée :"), card_html(contract["called"])))
            parts.append(self._ally(seen))
        else:
            resister = contract.get("resistance")
            parts.append(
                _("résistance de %(player)s, les autres sont neutres") % {"player": resister}
                if resister
                else _("sans résistance : le soliste joue seul contre tous")
            )
        return format_html_join("", "<div>{}</div>", ((x,) for x in [*lines, *parts]))

    def _ally(self, seen: DealSeen) -> str:
        if seen.ally is not None:
            return _("allié : %(player)s") % {"player": seen.ally}
        if seen.outcome is not None:
            return _("pas d'allié : le déclarant joue seul contre tous")
        return _("allié : pas encore connu (la carte appelée n'est pas jouée)")

    @admin.display(description=gettext_lazy("plis"))
    def tricks(self, deal: Deal) -> str:
        seen = _seen(deal)
        if not seen.tricks:
            return "–"
        n = len(deal.players)
        rows = []
        for trick in seen.tricks:
            plays = [
                format_html("{}<br><small>{}</small>", card_html(card), player)
                for player, card in trick.plays
            ]
            plays += [""] * (n - len(plays))
            won = (
                format_html("<strong>{}</strong>", trick.winner) if trick.winner else _("en cours")
            )
            rows.append((trick.number, *plays, won))
        head = [_("pli"), _("entame"), *[_("%(n)se carte") % {"n": i} for i in range(2, n + 1)]]
        return _table([*head, _("gagné par")], rows)

    @admin.display(description=gettext_lazy("plis pris"))
    def taken(self, deal: Deal) -> str:
        seen = _seen(deal)
        if not seen.tricks:
            return "–"
        return " · ".join(f"{p} {n}" for p, n in seen.taken.items())

    @admin.display(description=gettext_lazy("Fahne"))
    def fahne(self, deal: Deal) -> str:
        seen = _seen(deal)
        if seen.fahne is None:
            return _("connue avec l'atout")
        where = {
            "tricks": _("dans les plis de %(player)s"),
            "table": _("sur la table : elle ne compte pour personne"),
            "discards": _("dans l'écart du lever : elle ne compte pour personne"),
            "trick": _("dans le pli en cours, jouée par %(player)s"),
            "hand": _("encore en main chez %(player)s"),
        }
        said = where[seen.fahne_at] if seen.fahne_at else "–"
        return format_html("{} {}", card_html(seen.fahne), said % {"player": seen.fahne_with})

    @admin.display(description=gettext_lazy("paiements"))
    def payments(self, deal: Deal) -> str:
        outcome = _seen(deal).outcome
        if outcome is None:
            return _("à la fin de la donne")
        rows = [
            (
                _("%(payer)s → %(payee)s") % {"payer": p["from"], "payee": p["to"]},
                p["marks"],
                payment_word(p["for"]),
                shown.money(p["marks"] * deal.mark_value),
            )
            for p in outcome["payments"]
        ]
        if not rows:
            return _("aucun paiement")
        return _table([_("qui paie qui"), _("marques"), _("pour"), _("argent")], rows)

    @admin.display(description=gettext_lazy("résultat de chaque joueur"))
    def results(self, deal: Deal) -> str:
        outcome = _seen(deal).outcome
        if outcome is None:
            return _("à la fin de la donne")
        winners = set(outcome["winners"])
        rows = [
            (
                p,
                outcome["taken"][p],
                _("oui") if p in winners else "–",
                outcome["marks"][p],
                shown.money(outcome["marks"][p] * deal.mark_value),
                shown.money(outcome["fee"]),
                format_html("<strong>{}</strong>", shown.money(outcome["money"][p])),
            )
            for p in deal.players
        ]
        fee = format_html(
            "<div>{}</div>",
            _("droit du cercle : %(fee)s par joueur, %(total)s à la cagnotte")
            % {
                "fee": shown.money(outcome["fee"]),
                "total": shown.money(outcome["fee"] * len(deal.players)),
            },
        )
        head = [
            _("joueur"),
            _("plis"),
            _("gagnant"),
            _("marques"),
            _("argent des marques"),
            _("droit du cercle"),
            _("résultat"),
        ]
        return format_html("{}{}", _table(head, rows), fee)

    @admin.display(description=gettext_lazy("mouvements"))
    def movements(self, deal: Deal) -> str:
        reference = f"deal:{deal.pk}"
        found = (
            Movement.objects.filter(reference=reference)
            .select_related("debit", "credit")
            .order_by("id")
        )
        url = reverse("admin:floor_movement_changelist") + "?" + urlencode({"reference": reference})
        return format_html(
            '{}<div><a href="{}">{}</a></div>',
            movement_lines(found),
            url,
            _("les mouvements de la donne dans le grand livre"),
        )


SHIFT_INLINES = [ShiftSeatInline, ShiftDealInline]
