"""Recorded values as text people read, never raw JSON: an audit event's payload, an anomaly's
evidence, a posted règlement's parameters, a decision's findings.

A mapping is a list of labelled values (``<dl>``), a nested one indented under its label; a known
key is labelled in the reader's language, an unknown one by its own name. Amounts are money,
card codes are cards, times are the casino's (casino/shown.py), and a reference to a record that
has a page is a link to it. The records themselves keep what was written: this is how they are
shown, not a rewrite.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils.functional import Promise
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext_lazy as _

from casino import shown
from casino.floor.selectors import card_html

CARD = re.compile(r"^[A2-9TJQK][SHDC]$")
ISO_MOMENT = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")
ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")

LABELS: dict[str, Promise] = {
    "action": _("suite donnée"),
    "active": _("actif"),
    "already_laid": _("déjà sorties"),
    "amount": _("montant"),
    "articles": _("articles"),
    "awaiting_approval": _("attend une seconde approbation"),
    "before": _("avant"),
    "burn": _("cartes à brûler"),
    "by": _("par"),
    "card": _("carte"),
    "cards": _("cartes"),
    "cards_left": _("cartes au talon"),
    "chain_to": _("chaîne jusqu'à"),
    "chance": _("chance"),
    "change": _("changement n°"),
    "checks": _("vérifications"),
    "chips": _("jetons"),
    "claim": _("réclamation"),
    "closing": _("fonds compté"),
    "code_issued_by": _("code remis par"),
    "complete": _("rangée complète"),
    "computed": _("selon la règle"),
    "corrections": _("corrections"),
    "correction_approval_threshold": _("seuil de la seconde approbation"),
    "couleur": _("couleur"),
    "count": _("comptage"),
    "counted": _("comptées"),
    "counted_by": _("compté par"),
    "countersigned_by": _("contresigné par"),
    "coup": _("coup"),
    "credits": _("retours"),
    "cut_card_from_end": _("carte de coupe avant la fin"),
    "day": _("journée"),
    "decision": _("décision"),
    "detector": _("détecteur"),
    "details": _("détails"),
    "due": _("suite due le"),
    "duty": _("service"),
    "effective_from": _("en vigueur à partir du"),
    "employer": _("employeur"),
    "end_rule": _("règle de fin de taille"),
    "event": _("acte n°"),
    "evidence": _("éléments"),
    "expected": _("attendu"),
    "expires_at": _("expire le"),
    "extra": _("en trop"),
    "fills": _("apports"),
    "findings": _("faits constatés"),
    "first_broken_seq": _("premier événement rompu"),
    "float": _("fonds d'ouverture"),
    "follow_up_due": _("suite due le"),
    "from": _("de"),
    "full_name": _("nom complet"),
    "game": _("jeu"),
    "head_hash": _("empreinte de la tête"),
    "held": _("en prison"),
    "holder": _("joueur ou place"),
    "injunctions": _("injonctions"),
    "insurance": _("assurance"),
    "insured": _("assurée"),
    "kind": _("sorte"),
    "last": _("dernier coup de la taille"),
    "late": _("en retard"),
    "level": _("niveau"),
    "licence_number": _("agrément ou commission"),
    "maker": _("fabricant"),
    "maker_pack_numbers": _("numéros du fabricant"),
    "max_stake": _("mise maximum"),
    "method": _("méthode"),
    "min_stake": _("mise minimum"),
    "missing": _("manquantes"),
    "moment": _("moment"),
    "movement": _("mouvement"),
    "movements": _("mouvements"),
    "name": _("nom"),
    "noir": _("noir"),
    "note": _("note"),
    "number": _("numéro"),
    "observation": _("observation"),
    "on_behalf_of": _("pour"),
    "on_refait": _("au refait"),
    "opening": _("fonds d'ouverture"),
    "outcome": _("issue"),
    "override_reason": _("motif de l'écart"),
    "pack": _("jeu de cartes"),
    "pack_holds": _("le jeu en contient"),
    "pages": _("pages"),
    "paid": _("payé"),
    "parameters": _("paramètres"),
    "people": _("personnes"),
    "person": _("personne"),
    "phase": _("phase"),
    "post": _("poste"),
    "prefix": _("préfixe"),
    "premium": _("prime"),
    "prison_after": _("prison après le coup"),
    "reason": _("motif"),
    "recorded": _("enregistré"),
    "recorded_by": _("enregistré par"),
    "ref": _("référence"),
    "reglement": _("règlement"),
    "remark": _("remarque"),
    "remarks": _("observations"),
    "result": _("résultat"),
    "returned": _("rendu"),
    "review": _("examen n°"),
    "roles": _("rôles"),
    "rouge": _("rouge"),
    "row": _("rangée"),
    "row_total": _("point de la rangée"),
    "seal": _("scellé"),
    "seal_number": _("n° de scellé"),
    "seal_number_read": _("n° de scellé lu"),
    "sealing_authority": _("autorité de scellement"),
    "seals": _("scellés"),
    "second_factor": _("second facteur"),
    "seq": _("rang"),
    "settlements": _("règlements des mises"),
    "severity": _("gravité"),
    "sha256": _("SHA-256"),
    "shift": _("séance"),
    "side": _("côté"),
    "signer": _("signataire"),
    "size": _("taille (octets)"),
    "spoken": _("annonce faite"),
    "stake": _("mise"),
    "stakes": _("mises"),
    "stakes_returned": _("mises rendues"),
    "statement": _("déclaration du joueur"),
    "store_location": _("emplacement"),
    "subject": _("objet"),
    "subject_id": _("objet n°"),
    "summary": _("résumé"),
    "supersedes": _("remplace"),
    "table": _("table"),
    "taille": _("taille"),
    "talon": _("talon"),
    "to": _("à"),
    "to_bank": _("à la banque"),
    "total": _("total"),
    "touches_prison": _("touche la prison"),
    "transfer": _("apport ou retour n°"),
    "username": _("identifiant"),
    "variance": _("écart"),
    "verdict": _("constat"),
    "verification": _("vérification n°"),
    "version": _("version"),
    "visited_at": _("visite le"),
    "void": _("coup nul"),
    "what": _("quoi"),
}

# A posted règlement's parameters (RULES.md's names).
LABELS |= {
    "alliance_bonuses": _("primes de l'alliance"),
    "alliance_honours": _("honneurs de l'alliance"),
    "alliance_values": _("valeurs de l'alliance"),
    "cercle_fee": _("droit du cercle"),
    "end_min_cards": _("cartes minimum pour un nouveau coup"),
    "end_min_points": _("points minimum pour un nouveau coup"),
    "face_value": _("valeur des figures"),
    "gain": _("gain"),
    "insurance_min_stake": _("mise minimum pour l'assurance"),
    "insurance_premium": _("prime d'assurance"),
    "insurance_unit": _("unité d'assurance"),
    "mark": _("marque"),
    "max_prison_level": _("niveau de prison maximum"),
    "max_stake_ratio": _("rapport maximum entre mise maximum et minimum"),
    "move": _("manière"),
    "no_new_taille_before_close": _("minutes sans nouvelle taille avant la fermeture"),
    "pharao_last_card": _("dernière carte au pharaon"),
    "pharao_marks": _("marques du pharaon"),
    "pharao_plie_share": _("part de la banque sur un plié"),
    "player_may_shuffle": _("un joueur peut mêler"),
    "prison_at_end": _("prison à la fin du jeu"),
    "prison_repeat": _("prison répétée"),
    "protected": _("protégé"),
    "refait_default": _("au refait, sans choix"),
    "refait_mode": _("au refait"),
    "refait_void_on_last_coup": _("refait nul au dernier coup"),
    "riding": _("en jeu"),
}

# Keys whose whole numbers are amounts in minor units, wherever they appear.
MONEY = frozenset(
    {
        "amount",
        "closing",
        "correction_approval_threshold",
        "credits",
        "fills",
        "float",
        "held",
        "insurance_min_stake",
        "insurance_unit",
        "max_stake",
        "min_stake",
        "opening",
        "paid",
        "premium",
        "returned",
        "to_bank",
        "total",
        "variance",
    }
)
# Keys whose codes are cards ("KS"), or lists of them, or counts by card.
CARDS = frozenset({"burned", "card", "cards", "counted", "extra", "missing", "undealt"})
# References to records that have a page in the admin: their whole numbers are links.
PAGES = {
    "coup": "admin:floor_coup_change",
    "shift": "admin:floor_shift_change",
    "movement": "admin:floor_movement_change",
    "dispute": "admin:disputes_dispute_change",
    "report": "admin:reports_report_change",
    "anomaly": "admin:audit_anomaly_change",
    "observation": "admin:police_observation_change",
}


# Sentences the services write into records in both languages (a report's reason, why a
# decision waits for a second approver): shown in the reader's. The records keep them as written.
RECORDED_WORDS = {
    "séance fermée / shift closed": _("séance fermée"),
    "journée close / day closed": _("journée close"),
    "s'écarte du calcul / departs from the engine's computation": _("s'écarte du calcul"),
}
MOVES = re.compile(r"^déplace / moves (\d+) > seuil / threshold (\d+)$")
CORRECTIONS = re.compile(r"^corrections sur contestation / dispute corrections \((.*)\)$")


def recorded_words(text: str) -> str:
    """A recorded sentence (or several, joined by ``; ``) in the reader's language when the
    services wrote it in both, else as written."""

    def one(part: str) -> str:
        if part in RECORDED_WORDS:
            return str(RECORDED_WORDS[part])
        if moves := MOVES.match(part):
            moved, threshold = (shown.money(int(n)) for n in moves.groups())
            return _("déplace %(moved)s, plus que le seuil de %(threshold)s") % {
                "moved": moved,
                "threshold": threshold,
            }
        if corrections := CORRECTIONS.match(part):
            return _("corrections sur contestation (%(dispute)s)") % {
                "dispute": corrections.group(1)
            }
        return part

    return "; ".join(one(part) for part in text.split("; ")) if text else "–"


def transfer(source: str, target: str, amount: int) -> str:
    """A movement of money between two accounts: ``T1:bank → T1:seat:3 : 20,00``."""
    return _("%(from)s → %(to)s : %(amount)s") % {
        "from": source,
        "to": target,
        "amount": shown.money(amount),
    }


def readable(value: Any, *, money: Collection[str] = ()) -> SafeString:
    """``value`` (a mapping, a list, a scalar, or JSON text of one) as HTML to read. ``money``:
    keys that are amounts here beyond those that always are (``expected`` in a séance's rundown
    is money, in a talon's count it is cards)."""
    return _value(_parsed(value), None, MONEY | frozenset(money))


def _parsed(value: Any) -> Any:
    """JSON kept as text inside a record (a règlement's parameters) is read as what it holds."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def label(key: str) -> str:
    known = LABELS.get(key)
    return str(known) if known is not None else key.replace("_", " ")


def _value(value: Any, key: str | None, money: frozenset[str]) -> SafeString:
    value = _parsed(value)
    if isinstance(value, Mapping):
        return _mapping(value, key, money)
    if isinstance(value, (list, tuple)):
        return _sequence(value, key, money)
    return _scalar(value, key, money)


def _mapping(value: Mapping[str, Any], key: str | None, money: frozenset[str]) -> SafeString:
    if not value:
        return mark_safe("–")
    if key in CARDS and all(CARD.match(str(k)) for k in value):
        return format_html_join(", ", "{} ×{}", ((card_html(k), n) for k, n in value.items()))
    if key == "chips" and all(str(k).isdigit() for k in value):
        return chips_text(value)
    rows = format_html_join(
        "",
        "<dt>{}</dt><dd>{}</dd>",
        ((label(k), _value(v, k, money)) for k, v in value.items()),
    )
    return format_html('<dl class="readable">{}</dl>', rows)


def chips_text(chips: Mapping[str, int]) -> SafeString:
    """A count's chips, the largest value first: ``40 × 100,00 · 100 × 5,00``."""
    rows = sorted(((int(v), n) for v, n in chips.items()), reverse=True)
    return format_html_join(" · ", "{} × {}", ((n, shown.money(v)) for v, n in rows)) or "–"


def _sequence(
    value: list[Any] | tuple[Any, ...], key: str | None, money: frozenset[str]
) -> SafeString:
    if not value:
        return mark_safe("–")
    if all(isinstance(v, str) and CARD.match(v) for v in value):
        return format_html_join("", "{}", ((card_html(v),) for v in value))
    if all(not isinstance(v, (Mapping, list, tuple)) for v in value):
        return format_html_join(", ", "{}", ((_scalar(v, key, money),) for v in value))
    items = format_html_join("", "<li>{}</li>", ((_value(v, key, money),) for v in value))
    return format_html('<ol class="readable">{}</ol>', items)


def _scalar(value: Any, key: str | None, money: frozenset[str]) -> SafeString:
    if value is None or value == "":
        return mark_safe("–")
    if isinstance(value, bool):
        return format_html("{}", _("oui") if value else _("non"))
    if isinstance(value, int) and key in money:
        return format_html("{}", shown.money(value))
    if isinstance(value, int) and key in PAGES:
        return _link(PAGES[key], value, f"{label(key)} {value}")
    if isinstance(value, str):
        if key == "outcome":
            from casino.pit.table_view import OUTCOME_WORDS

            return format_html("{}", OUTCOME_WORDS.get(value, value))
        if key in CARDS and CARD.match(value):
            return card_html(value)
        if ISO_MOMENT.match(value):
            return format_html("{}", _moment(value))
        if ISO_DAY.match(value):
            return format_html("{}", shown.day(dt.date.fromisoformat(value)))
        if key == "subject" and ":" in value:
            return subject_link(*value.split(":", 1))
    return format_html("{}", value)


def _moment(text: str) -> str:
    try:
        return shown.moment(dt.datetime.fromisoformat(text.replace("Z", "+00:00")), seconds=True)
    except ValueError:
        return text


def _link(url_name: str, pk: Any, text: str) -> SafeString:
    try:
        url = reverse(url_name, args=[pk])
    except NoReverseMatch:
        return format_html("{}", text)
    return format_html('<a href="{}">{}</a>', url, text)


def subject_link(subject_type: str, subject_id: str) -> SafeString:
    """A record named as the audit chain names it (``floor.coup``, ``12``): a link to its page
    when it has one, else its kind and number."""
    if not subject_type:
        return mark_safe("–")
    from django.apps import apps

    app_label, _dot, model_name = subject_type.partition(".")
    try:
        model = apps.get_model(app_label, model_name)
    except (LookupError, ValueError):
        return format_html("{} {}", subject_type, subject_id)
    text = f"{model._meta.verbose_name} {subject_id}"
    if not subject_id.isdigit():
        return format_html("{}", text)
    return _link(f"admin:{app_label}_{model_name}_change", subject_id, text)
