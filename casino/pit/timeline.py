"""A pack's timeline as sentences: what each act recorded, in the reader's language, never raw
JSON. The details are the timeline rows' own (shoes/services.py writes them); a key this module
does not know is still shown, as ``key: value``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.translation import gettext as _

from shoes.models import PackEvent

K = PackEvent.Kind


def named_cards(cards: Mapping[str, int]) -> str:
    """``{"7H": 1, "KS": 2}`` as ``7H ×1, KS ×2``."""
    return ", ".join(f"{code} ×{n}" for code, n in cards.items())


def count_verdict(details: Mapping[str, Any]) -> str:
    """What a count found: balanced, or the cards short and over."""
    missing, extra = details.get("missing") or {}, details.get("extra") or {}
    if not missing and not extra:
        return _("le compte est juste")
    parts = []
    if missing:
        parts.append(_("manquent %(cards)s") % {"cards": named_cards(missing)})
    if extra:
        parts.append(_("en trop %(cards)s") % {"cards": named_cards(extra)})
    return " ; ".join(parts)


def method_words(value: str) -> str:
    return _("lues dans l'ordre") if value == "scanned" else _("comptées à la main")


def _talon(details: Mapping[str, Any]) -> str:
    if "counted" not in details:  # the engine ended the taille at a settlement: no count yet
        reason = details.get("reason")
        said = _("%(left)s cartes restent au talon") % {"left": details.get("cards_left", "?")}
        return f"{said} ({reason})" if reason else said
    return _(
        "taille %(taille)s : %(counted)s cartes restantes %(method)s sur %(left)s attendues ; "
        "%(verdict)s"
    ) % {
        "taille": details.get("taille", "?"),
        "counted": details["counted"],
        "method": method_words(details.get("method", "counted")),
        "left": details.get("cards_left", "?"),
        "verdict": count_verdict(details),
    }


def event_text(event: PackEvent) -> str:
    """One act of the pack's life, said in a sentence (who and when are shown beside it)."""
    d: Mapping[str, Any] = event.details or {}
    kind = event.kind
    if kind == K.RECEIVED:
        return _(
            "%(maker)s, numéros %(numbers)s, scellé par %(authority)s, rangé en %(location)s"
        ) % {
            "maker": d.get("maker", "?"),
            "numbers": d.get("maker_pack_numbers", "?"),
            "authority": d.get("sealing_authority", "?"),
            "location": d.get("store_location", "?"),
        }
    if kind == K.STORED:
        return _("en magasin : %(location)s") % {"location": d.get("store_location", "?")}
    if kind in (K.VERIFIED, K.REJECTED):
        said = _("scellé lu %(seal)s : %(verdict)s") % {
            "seal": d.get("seal_number_read", "?"),
            "verdict": _verdict(d.get("verdict", "")),
        }
        return f"{said} — {d['remarks']}" if d.get("remarks") else said
    if kind == K.OPENED:
        return _("ouvert à %(table)s") % {"table": event.table} if event.table else ""
    if kind == K.SHUFFLED:
        by = d.get("by")
        if by == "player":
            return _("mêlé ouvertement par un joueur, %(person)s") % {"person": event.person}
        return _("mêlé par le tailleur") if by == "tailleur" else _("mêlé par un croupier")
    if kind == K.CUT:
        return _("coupé par %(person)s (galerie)") % {"person": event.person}
    if kind == K.BURNED:
        return _("cartes brûlées : %(cards)s") % {"cards": " ".join(d.get("cards", []))}
    if kind in (K.PASSED, K.TALON_COUNTED):
        return _talon(d)
    if kind == K.REPLACEMENT_DEMANDED:
        side = _("pour les joueurs") if d.get("side") == "players" else _("pour la banque")
        return _("un jeu neuf demandé par %(person)s, %(side)s") % {
            "person": event.person,
            "side": side,
        }
    if kind == K.WITHDRAWN:
        return _("retiré du jeu, remplacé par un jeu scellé neuf")
    if kind == K.FOREIGN_CARD:
        return _(
            "%(card)s refusée : le jeu la contient %(holds)s fois, %(already)s déjà sorties"
        ) % {
            "card": d.get("card", "?"),
            "holds": d.get("pack_holds", "?"),
            "already": d.get("already_laid", "?"),
        }
    if kind == K.RETIRED:
        return _("%(counted)s cartes recomptées ; %(verdict)s") % {
            "counted": d.get("counted", "?"),
            "verdict": count_verdict(d),
        }
    if kind == K.DESTROYED:
        return d.get("remarks") or _("détruit devant le commissaire")
    return "; ".join(f"{key}: {value}" for key, value in sorted(d.items()))


def _verdict(value: str) -> str:
    return {
        "intact": _("intact"),
        "broken": _("brisé"),
        "mismatch": _("numéro différent de celui du registre"),
    }.get(value, value)
