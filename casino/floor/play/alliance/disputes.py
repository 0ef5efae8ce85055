"""What disputes ask of Alliance (``casino/disputes/games.py``): a deal played out is contested, the
chef de partie states what the records got wrong (a card misplayed, a call), the engine replays
the deal as found, and the correction is, player by player, the difference between what the deal
as found settles and what was posted for it.

A finding is ``{"trick": n, "place": k, "card": code}``, the card actually played at place ``k``
(1 the leader's) of trick ``n`` (1 the first), or ``{"auction": [...], "contract": {...}}``, the
auction as found in full and, when it changes, the contract as REPLAY.md writes it (either may be
given alone). The deal as found is the deal's replay document with those places, that auction and
that contract; what the rules refuse in it is refused under the engine's code, ``where`` naming
the place in the deal as found (``tricks[3][1]``, ``auction[2]``, ``contract.called``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from django.db.models import Q
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext as _

from casino import shown
from casino.disputes.games import GameDisputes
from casino.disputes.recompute import InvalidFinding, Recomputation, RefusedAsFound, transfers
from casino.errors import Conflict
from casino.floor.models import Account, Movement
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import Deal, DealPhase
from casino.floor.play.alliance.selectors import deal_document
from casino.games import alliance as engine
from casino.games.cards import Card, card
from casino.games.errors import GameError
from shoes.models import CardLaid

PLACE = ("trick", "place", "card")
CALLS = ("auction", "contract")


def _card(code: Any, where: str) -> Card:
    try:
        return card(code)
    except (GameError, TypeError, AttributeError):
        raise InvalidFinding(
            _("%(code)r n'est pas une carte") % {"code": code}, where=where
        ) from None


def _number(value: Any, last: int, where: str, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= last:
        raise InvalidFinding(
            _("%(what)s est un nombre de 1 à %(last)s, pas %(value)r")
            % {"what": what, "last": last, "value": value},
            where=where,
        )
    return value


def _calls(value: Any, where: str) -> list[engine.Call]:
    if not isinstance(value, list):
        raise InvalidFinding(_("les annonces dans l'ordre, une liste"), where=where)
    calls = []
    for i, word in enumerate(value):
        try:
            calls.append(engine.Call(word))
        except ValueError:
            raise InvalidFinding(
                _("%(call)r : pass, alliance, lever, solo ou hold") % {"call": word},
                where=f"{where}[{i}]",
            ) from None
    return calls


def _findings(
    deal: Deal, tricks: int, findings: Any
) -> tuple[dict[tuple[int, int], Card], list[engine.Call] | None, Mapping[str, Any] | None]:
    """The cards found at places (by trick and place, 1-based), the auction and the contract
    found (None: as recorded), each checked for its shape; the rules come with the replay."""
    if not isinstance(findings, list):
        raise InvalidFinding(
            _("les constats sont une liste de {trick, place, card} ou de {auction, contract}"),
            where="findings",
        )
    places: dict[tuple[int, int], Card] = {}
    auction: list[engine.Call] | None = None
    contract: Mapping[str, Any] | None = None
    called = False
    for index, finding in enumerate(findings):
        where = f"findings[{index}]"
        keys = set(finding) if isinstance(finding, dict) else set()
        if keys == set(PLACE):
            trick = _number(finding["trick"], tricks, f"{where}.trick", _("le pli"))
            place = _number(finding["place"], len(deal.players), f"{where}.place", _("la place"))
            if (trick, place) in places:
                raise InvalidFinding(
                    _("la carte %(place)s du pli %(trick)s est constatée deux fois")
                    % {"place": place, "trick": trick},
                    where=f"{where}.trick",
                )
            places[trick, place] = _card(finding["card"], f"{where}.card")
        elif keys and keys <= set(CALLS):
            if called:
                raise InvalidFinding(_("les annonces sont constatées une fois"), where=where)
            called = True
            if "auction" in finding:
                auction = _calls(finding["auction"], f"{where}.auction")
            if "contract" in finding:
                contract = finding["contract"]
                if not isinstance(contract, Mapping):
                    raise InvalidFinding(_("un contrat est un objet"), where=f"{where}.contract")
        else:
            raise InvalidFinding(
                _("un constat est {trick, place, card} ou {auction, contract}"), where=where
            )
    return places, auction, contract


def deal_as_found(deal: Deal, findings: list[dict[str, Any]] | None) -> engine.Outcome:
    """The deal replayed by the engine (``play_deal``) from its records with ``findings``; what
    the rules refuse in it is ``RefusedAsFound``."""
    document = deal_document(deal)
    places, auction, contract = _findings(deal, len(document["tricks"]), findings or [])
    tricks = [[card(c) for c in trick] for trick in document["tricks"]]
    for (trick, place), found in places.items():
        tricks[trick - 1][place - 1] = found
    cards = [card(c) for c in document["cards"]]
    calls = auction if auction is not None else [engine.Call(w) for w in document["auction"]]
    rules = deal.reglement.engine()
    try:
        if contract is None:
            declared = engine.contract_from_dict(document["contract"])
        else:
            # The contract is read for the game the auction as found gives its declarer.
            auctioned = engine.AllianceDeal(deal.players, rules, mark_value=deal.mark_value)
            for c in cards:
                auctioned.receive(c)
            for call in calls:
                auctioned.call(call)
            if auctioned.phase is engine.Phase.AUCTION:
                raise auctioned.auction_unfinished()
            assert auctioned.game is not None
            # The floor's reading of a contract, as when it was declared (bad_contract, with
            # its key: contract.called).
            declared = deals._contract(auctioned.game, contract)
        return engine.play_deal(
            deal.players, cards, calls, declared, tricks, rules, mark_value=deal.mark_value
        )
    except GameError as exc:
        raise RefusedAsFound(exc) from None


def _rows(deal: Deal, money: Counter[str], marks: Mapping[str, int]) -> list[dict[str, Any]]:
    return [
        {"deal": deal.pk, "account": code, "marks": marks.get(code), "money": money[code]}
        for code in money
    ]


def recompute_deal(deal: Deal, findings: list[dict[str, Any]] | None = None) -> Recomputation:
    """What the deal as found settles beside what was posted for it (``deal:<id>``), account by
    account: the players' and the fee box's; the difference is the correction."""
    found = deal_as_found(deal, findings)
    posted: Counter[str] = Counter({code: 0 for code in deal.players})
    paid = (Movement.Kind.MARKS_PAID, Movement.Kind.CERCLE_FEE)
    for m in Movement.objects.filter(reference=f"deal:{deal.pk}", kind__in=paid).select_related(
        "credit", "debit"
    ):
        posted[m.debit.code] += m.amount
        posted[m.credit.code] -= m.amount
    settled: Counter[str] = Counter({code: 0 for code in deal.players})
    for entry in deals.settlement_entries(deal, found):
        settled[entry.debit.code] += entry.amount
        settled[entry.credit.code] -= entry.amount
    difference = Counter(settled)
    difference.subtract(posted)
    return Recomputation(
        recorded=_rows(deal, posted, deal.settlement.outcome["marks"]),
        computed=_rows(deal, settled, found.marks),
        corrections=transfers(difference),
        touches_prison=False,
    )


class AllianceDisputes(GameDisputes):
    subjects = {"deal": Deal}

    def reglement(self, kind: str, record: Any) -> Any:
        return record.reglement  # the version the deal was settled under

    def check_raisable(self, kind: str, record: Any) -> None:
        if record.phase != DealPhase.OVER:
            raise Conflict(
                _("la donne %(number)s se joue encore : contestez-la une fois jouée")
                % {"number": record.number},
                where="subject_id",
            )

    def seance(self, kind: str, record: Any) -> Any:
        return record.shift

    def about_seances(self, shift_ids: list[int]) -> Q:
        return Q(deal__shift__in=shift_ids)

    def recorders(self, kind: str, record: Any) -> set[int]:
        """Who opened the deal, laid its cards, recorded its calls, its contract, its cards
        played, and whose last card settled it."""
        laid = CardLaid.objects.filter(pack_id=record.pack_id, taille=record.pack_taille)
        people = {record.opened_by_id, *laid.values_list("actor_id", flat=True)}
        for acts in (record.calls, record.plays):
            people |= set(acts.values_list("by_id", flat=True))
        for one in ("contract", "settlement"):
            if hasattr(record, one):
                people.add(getattr(record, one).by_id)
        return people

    def accounts(self, kind: str, record: Any, seance: Any) -> Q:
        """The deal's players and the table's fee box: the house banks nothing at a cercle."""
        return Q(code__in=record.players, kind=Account.Kind.PATRON) | Q(
            table_id=seance.table_id, kind=Account.Kind.FEE_BOX
        )

    def recompute(self, kind: str, record: Any, findings: list[dict[str, Any]] | None) -> Any:
        return recompute_deal(record, findings)

    def finding_rows(self, dispute: Any, data: Any) -> list[Any]:
        from casino.floor.play.alliance.dispute_form import finding_rows

        return finding_rows(dispute, data)

    def beside(self, recomputed: dict[str, Any]) -> str | None:
        """Account by account: as posted, as found, the difference."""
        posted = {r["account"]: r for r in recomputed["recorded"]}
        found = {r["account"]: r for r in recomputed["computed"]}

        def cell(row: dict[str, Any] | None) -> str:
            if row is None:
                return "–"
            if row["marks"] is None:
                return shown.money(row["money"])
            return _("%(marks)s marques, %(money)s") % {
                "marks": row["marks"],
                "money": shown.money(row["money"]),
            }

        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    code,
                    cell(posted.get(code)),
                    cell(found.get(code)),
                    shown.money(
                        found.get(code, {}).get("money", 0) - posted.get(code, {}).get("money", 0)
                    ),
                )
                for code in dict.fromkeys([*posted, *found])
            ),
        )
        return format_html(
            "<table><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr>{}</table>",
            _("compte"),
            _("passé aux comptes"),
            _("la donne telle que constatée"),
            _("différence"),
            rows,
        )


DISPUTES = AllianceDisputes()
