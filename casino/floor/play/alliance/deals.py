"""A deal of Alliance at the cercle table, act by act (RULES.md §3; REPLAY.md, Alliance): the pack
shuffled by the dealer and cut by the player on his left, the 52 cards as dealt, each call of the
auction in turn, the declarer's contract, each card played; the last card settles the deal and
its payments move between the players' accounts, the house's fee into the fee box. Each act is a
service, checked by the engine (``casino.games.alliance``), recorded in the audit chain.

Where the deal stands is never stored: every act reads the deal's records through the engine
(``deal_of``), so the floor and the replay of the deal's document cannot disagree. Refusals that
are evidence (a card the pack cannot hold, a call or card out of turn, a card not in the hand or
not following suit) are committed before the error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import transaction
from django.utils.translation import gettext as _

from audit.chain import audit_record
from casino import clock
from casino.errors import Conflict, DomainError, NotFound
from casino.floor.models import Account, Duty, Movement
from casino.floor.play.alliance.models import (
    Deal,
    DealCall,
    DealContract,
    DealPhase,
    DealPlay,
    DealSettlement,
)
from casino.floor.play.alliance.seats import (
    GAME,
    NotSeated,
    between_deals,
    cercle_locked,
    dealing_order,
)
from casino.floor.services import Entry, ledger_post, round_locked, table_account
from casino.games import alliance as engine
from casino.games import errors as engine_errors
from casino.games.cards import Card, card
from casino.games.errors import AllianceFault, ForeignCard, GameError, IllegalCard
from casino.i18n import game_message
from casino.people.services import require_role
from casino.prepared import PreparedInsert, quoted_table
from casino.round_trips import run
from shoes.errors import NotACard
from shoes.models import CardLaid, PackState
from shoes.services import (
    card_refusal_record,
    cards_dealt,
    cards_laid_in,
    current_taille,
    pack_shuffled_and_cut,
    packs_at,
    taille_ends,
)

from .seats import AT_THE_TABLE, CERCLE_STAFF


class IllegalDealPhase(Conflict):
    """The act does not fit the deal: its cards are not dealt yet, the auction is over, it is
    settled..."""

    code = "illegal_deal_phase"


class OutOfTurn(DomainError):
    """A call or a card by another player than the one whose turn it is: refused and recorded."""

    code = "out_of_turn"
    recorded = True


class WrongCutter(DomainError):
    """The player on the dealer's left cuts (RULES.md 3.1, the séance records him)."""

    code = "wrong_cutter"


class NotEnoughPlayers(Conflict):
    """Alliance is played by four, five or six seated players."""

    code = "players"


class BadDeal(DomainError):
    """Cards that are not one deal: not 52, or hands that are not the deal's."""

    code = "bad_deal"
    http_status = 400


class IllegalCall(DomainError):
    """A call the auction does not allow (RULES.md 3.2): too low, a hold out of place, after the
    end, or an auction that stops before its end. Refused and recorded."""

    code = "bad_call"
    recorded = True


class IllegalContract(DomainError):
    """A contract RULES.md 3.3 refuses: a called card of the wrong rank or held by the declarer, a
    lever's turn or discard that is not his to make, a résistance by the soloist."""

    code = "bad_contract"


class NotInHand(DomainError):
    """A card that is not in the hand of the player whose turn it is (RULES.md 3.4): refused and
    recorded."""

    code = "not_in_hand"
    recorded = True


class MustFollowSuit(DomainError):
    """A card of another suit by a player who holds the suit led (RULES.md 3.4): refused with the
    rule, and recorded."""

    code = "must_follow_suit"
    recorded = True


# --- the deal as the engine sees it ---------------------------------------------------------------


# Every act reads the deal's records (``deal_of``): the cards dealt, the calls, the contract and
# the cards played. One fixed statement, one round trip: as four ORM queries, built and compiled
# afresh at every act, they were the larger part of an act's CPU (issue 17's profile). Each row
# is (what, its order, a card, a call or the contract's JSON); ``tests/floor/
# test_alliance_records.py`` holds it to the ORM's reading.
_RECORDS = f"""
SELECT 0, c.seq, c.card::text
  FROM {quoted_table(CardLaid)} c
 WHERE c.pack_id = %(pack)s AND c.taille = %(pack_taille)s AND NOT c.burned
UNION ALL
SELECT 1, k."index", k.call::text FROM {quoted_table(DealCall)} k WHERE k.deal_id = %(deal)s
UNION ALL
SELECT 2, 0, t.contract::text FROM {quoted_table(DealContract)} t WHERE t.deal_id = %(deal)s
UNION ALL
SELECT 3, p."index", p.card::text FROM {quoted_table(DealPlay)} p WHERE p.deal_id = %(deal)s
ORDER BY 1, 2
"""


def deal_records(deal: Deal) -> tuple[list[str], list[str], dict[str, Any] | None, list[str]]:
    """The deal's cards in the order dealt, its calls, its contract (None before it is
    declared) and the cards played in order: what ``deal_of`` replays."""
    rows = run(_RECORDS, {"pack": deal.pack_id, "pack_taille": deal.pack_taille, "deal": deal.pk})
    found: tuple[list[str], list[str], list[str], list[str]] = ([], [], [], [])
    for what, _order, value in rows:
        found[what].append(value)
    cards, calls, contract, plays = found
    return cards, calls, json.loads(contract[0]) if contract else None, plays


def deal_of(deal: Deal) -> engine.AllianceDeal:
    """The deal as the engine sees it, from its records: the pack's cards of the deal's cut in the
    order dealt, the calls, the contract, the cards played."""
    table = engine.AllianceDeal(deal.players, deal.reglement.engine(), mark_value=deal.mark_value)
    cards, calls, contract, plays = deal_records(deal)
    for code in cards:
        table.receive(card(code))
    for word in calls:
        table.call(engine.Call(word))
    if contract is not None:
        table.declare(engine.contract_from_dict(contract))
    table.play_all([card(code) for code in plays])
    return table


def dealt_cards(deal: Deal) -> list[str]:
    return cards_laid_in(deal.pack_id, deal.pack_taille)


# A call and a card played are one INSERT each, written once (``casino.prepared``).
_INSERT_CALL = PreparedInsert(DealCall)
_INSERT_PLAY = PreparedInsert(DealPlay)


def _lock(deal_id: int, actor: Any, *posts: Duty.Post, act: str) -> Deal:
    """The deal locked for ``act`` by ``actor``, on duty at its table as one of ``posts``."""
    deal: Deal | None = round_locked(Deal, deal_id, actor, *posts, act=act)
    if deal is None:
        raise NotFound(_("la donne %(deal)s n'existe pas") % {"deal": deal_id}, where="deal")
    return deal


def seated_name(player: str) -> str:
    """A player as the deal names him, his account's code: ``ana`` is ``patron:ana``, as at the
    cage and the seat."""
    name = player.strip()
    return name if name.startswith("patron:") else f"patron:{name}"


def _at_deal(deal_id: int, actor: Any, phase: DealPhase, *, act: str) -> Deal:
    """The deal, locked, in ``phase``, at a table where the actor is on duty."""
    require_role(actor, *CERCLE_STAFF, act=act)
    deal = _lock(deal_id, actor, *AT_THE_TABLE, act=act)
    if deal.phase != phase:
        raise IllegalDealPhase(
            _("%(act)s : la donne %(number)s est en phase « %(phase)s »")
            % {"act": act, "number": deal.number, "phase": DealPhase(deal.phase).label},
            where="deal",
        )
    return deal


def _move(deal: Deal, phase: DealPhase) -> None:
    deal.phase = phase
    deal.save(update_fields=["phase"])


def _refused(
    deal: Deal, actor: Any, exc: DomainError, action: str, details: dict[str, Any]
) -> DomainError:
    """A refusal that is evidence: its audit event, committed with the act's block, before the
    error is raised after it."""
    audit_record(
        actor=actor,
        action=action,
        subject=deal,
        payload={"code": exc.code, "message": exc.message, **details},
    )
    return exc


def _fault(exc: GameError, *, where: str) -> DomainError:
    """The engine's refusal as the floor's, under the replay's code."""
    message = game_message(exc)
    if isinstance(exc, engine_errors.BadCall):
        return IllegalCall(message, where=where)
    if isinstance(exc, engine_errors.BadContract):
        return IllegalContract(message, where=exc.where or where)
    if isinstance(exc, engine_errors.NotInHand):
        return NotInHand(message, where=where)
    if isinstance(exc, engine_errors.MustFollowSuit):
        return MustFollowSuit(message, where=where)
    return IllegalDealPhase(message, where=where)


# --- the deal begins: shuffle, cut, cards ----------------------------------------------------------


@transaction.atomic
def deal_open(*, actor: Any, shift_id: int, dealer: str, cut_by: str) -> Deal:
    """A new deal, between deals: the dealer (a seated player) shuffles the pack in service at
    the table, the player on his left cuts; the croupier on duty records both. The seated
    players, from the seat after the dealer's, are the deal's players in dealing order."""
    act = _("commencer une donne")
    shift = cercle_locked(shift_id, actor, act=act)
    between_deals(shift, act=act)
    players = dealing_order(shift, seated_name(dealer))
    if len(players) not in engine.ROUNDS:
        raise NotEnoughPlayers(
            _("l'Alliance se joue à 4, 5 ou 6 : %(count)s joueurs sont assis à %(table)s")
            % {"count": len(players), "table": shift.table},
            where="shift",
        )
    left = players[-2]  # the dealer deals "to the right": the player on his left is served last
    if seated_name(cut_by) != left:
        raise WrongCutter(
            _("le joueur à la gauche du donneur %(dealer)s coupe : %(left)s, pas %(cut_by)s")
            % {"dealer": players[-1], "left": left, "cut_by": cut_by},
            where="cut_by",
        )
    pack = packs_at(shift.table_id, PackState.OPENED, PackState.PASSED).first()
    if pack is None:
        raise Conflict(
            _("%(table)s n'a pas de jeu ouvert à mêler") % {"table": shift.table}, where="pack"
        )
    pack_shuffled_and_cut(actor=actor, pack_id=pack.pk, shuffled_by=players[-1], cut_by=left)
    rules = shift.reglement
    assert rules is not None
    assert shift.min_stake is not None
    deal = Deal.objects.create(
        shift=shift,
        number=shift.deals.count() + 1,
        pack=pack,
        pack_taille=current_taille(pack),
        reglement=rules,
        mark_value=shift.min_stake,  # at a cercle the table's minimum is one mark
        players=players,
        dealer=players[-1],
        cut_by=left,
        opened_at=clock.now(),
        opened_by=actor,
    )
    audit_record(
        actor=actor,
        action="deal.opened",
        subject=deal,
        payload={
            "table": shift.table.number,
            "number": deal.number,
            "pack": pack.seal_number,
            "pack_taille": deal.pack_taille,
            "players": players,
            "dealer": deal.dealer,
            "cut_by": left,
            "mark_value": deal.mark_value,
            "reglement": f"{rules.name} v{rules.version}",
        },
    )
    return deal


def _codes(raw: object, where: str) -> list[Card]:
    if not isinstance(raw, list):
        raise BadDeal(_("une liste de codes de cartes"), where=where)
    out = []
    for i, code in enumerate(raw):
        try:
            out.append(card(code))
        except (IllegalCard, TypeError) as exc:
            message = game_message(exc) if isinstance(exc, GameError) else str(exc)
            raise NotACard(message, where=f"{where}[{i}]") from None
    return out


def dealing_sequence(
    players: Sequence[str], hands: Mapping[str, object], table: Mapping[str, object]
) -> list[Card]:
    """Each hand as received and the table cards (``up``, then ``down`` in dealing order) put
    back in dealing order: the deal's plan (RULES.md 3.1) says where each card went."""
    if set(hands) != set(players):
        raise BadDeal(
            _("une main par joueur de la donne : %(players)s") % {"players": ", ".join(players)},
            where="hands",
        )
    if not isinstance(table, Mapping) or set(table) != {"up", "down"}:
        raise BadDeal(_('les cartes de table : {"up": …, "down": […]}'), where="table")
    piles = {p: _codes(hands[p], f"hands.{p}") for p in players}
    piles["table"] = _codes([table["up"], *(table["down"] or [])], "table")  # type: ignore[list-item]
    plan = engine.dealing_plan(len(players))
    wanted = {name: sum(1 for s in plan if s == seat) for seat, name in enumerate(players)}
    wanted["table"] = sum(1 for s in plan if s == engine.TABLE)
    for name, pile in piles.items():
        if len(pile) != wanted[name]:
            where = "table" if name == "table" else f"hands.{name}"
            raise BadDeal(
                _("%(count)s cartes, pas %(wanted)s")
                % {"count": len(pile), "wanted": wanted[name]},
                where=where,
            )
    taken = dict.fromkeys(piles, 0)
    order = []
    for seat in plan:
        name = "table" if seat == engine.TABLE else players[seat]
        order.append(piles[name][taken[name]])
        taken[name] += 1
    return order


def deal_cards(
    *,
    actor: Any,
    deal_id: int,
    cards: list[str] | None = None,
    hands: Mapping[str, object] | None = None,
    table: Mapping[str, object] | None = None,
) -> engine.AllianceDeal:
    """The 52 cards as dealt: in dealing order (``cards``), or each hand and the table cards as
    dealt (``hands`` and ``table``). A card twice in the deal, which a single pack cannot hold,
    is refused and recorded as a foreign card."""
    act = _("enregistrer la donne")
    refused: DomainError
    with transaction.atomic():
        deal = _at_deal(deal_id, actor, DealPhase.DEALING, act=act)
        if (cards is None) == (hands is None and table is None):
            raise BadDeal(
                _("les cartes dans l'ordre donné, ou les mains et la table"), where="cards"
            )
        if cards is not None:
            order = _codes(cards, "cards")
        else:
            order = dealing_sequence(deal.players, hands or {}, table or {})
        try:
            engine.check_pack(order)
        except ForeignCard as exc:
            if exc.where == "cards":  # not 52 cards: not a deal, nothing to record
                raise BadDeal(game_message(exc), where="cards") from None
            twice = next(c for i, c in enumerate(order) if c in order[:i])
            refused = card_refusal_record(
                actor=actor, pack_id=deal.pack_id, code=str(twice), shift=deal.shift
            )
        else:
            laid = cards_dealt(
                actor=actor, pack_id=deal.pack_id, codes=[str(c) for c in order], shift=deal.shift
            )
            state = deal_of(deal)
            _move(deal, DealPhase.AUCTION)
            audit_record(
                actor=actor,
                action="deal.dealt",
                subject=deal,
                payload={
                    "cards": [str(c) for c in order],
                    "seq": [laid[0].seq, laid[-1].seq],
                    "couleur": state.couleur.value if state.couleur else None,
                },
            )
            return state
    raise refused


# --- the auction and the contract ------------------------------------------------------------------


def _turn(
    deal: Deal, actor: Any, player: str, due: str | None, what: str, where: str
) -> OutOfTurn | None:
    """A call or card by the player whose turn it is; anyone else's is refused and recorded."""
    if player == due:
        return None
    exc = OutOfTurn(
        _("%(what)s de %(player)s : c'est à %(due)s")
        % {"what": what, "player": player, "due": due},
        where=where,
    )
    _refused(deal, actor, exc, "deal.out_of_turn", {"player": player, "due": due, "what": what})
    return exc


def deal_call(*, actor: Any, deal_id: int, player: str, call: str) -> engine.Called:
    """A call of the auction by the player whose turn it is (RULES.md 3.2), checked by the
    engine. The call that ends the auction names the declarer and his game."""
    act = _("enregistrer une annonce")
    try:
        word = engine.Call(call)
    except ValueError:
        raise BadDeal(
            _("%(call)r : pass, alliance, lever, solo ou hold") % {"call": call}, where="call"
        ) from None
    refused: DomainError
    with transaction.atomic():
        deal = _at_deal(deal_id, actor, DealPhase.AUCTION, act=act)
        state = deal_of(deal)
        index = len(state.calls)
        player = seated_name(player)
        out_of_turn = _turn(deal, actor, player, state.next_caller, _("l'annonce"), "player")
        if out_of_turn is not None:
            refused = out_of_turn
        else:
            try:
                called = state.call(word)
            except AllianceFault as exc:
                refused = _refused(
                    deal,
                    actor,
                    _fault(exc, where="call"),
                    "deal.call_refused",
                    {"player": player, "call": call, "index": index},
                )
            else:
                _INSERT_CALL.create(
                    deal=deal, index=index, player=player, call=word.value, at=clock.now(), by=actor
                )
                if called.ended:
                    _move(deal, DealPhase.CONTRACT)
                audit_record(
                    actor=actor,
                    action="deal.called",
                    subject=deal,
                    payload={
                        "index": index,
                        "player": player,
                        "call": word.value,
                        "ended": called.ended,
                        "declarer": called.declarer,
                        "game": called.game.value if called.ended and called.game else None,
                        "forced": called.forced,
                    },
                )
                return called
    raise refused


CONTRACT_KEYS = {
    engine.Game.ALLIANCE: {"trumps", "called"},
    engine.Game.LEVER: {"turn", "take", "discard", "called"},
    engine.Game.SOLO: {"trumps", "resistance"},
}


def _contract(game: engine.Game, data: object) -> engine.Contract:
    """The contract as REPLAY.md writes it, for the declarer's game, each key checked."""
    if not isinstance(data, Mapping):
        raise IllegalContract(_("un contrat est un objet"), where="contract")
    unknown = sorted(set(data) - CONTRACT_KEYS[game])
    if unknown:
        raise IllegalContract(
            _("%(key)r n'est pas une clé d'un contrat de %(game)s")
            % {"key": unknown[0], "game": game.value},
            where=f"contract.{unknown[0]}",
        )
    try:
        if game is engine.Game.LEVER:
            take = data.get("take", False)
            if not isinstance(take, bool) or not isinstance(data.get("turn"), int):
                raise ValueError("turn, take")
            if take != ("discard" in data):
                raise ValueError("discard")
            return engine.LeverContract(
                data["turn"],
                card(data["called"]),
                take,
                tuple(card(c) for c in data.get("discard", ())),
            )
        if game is engine.Game.ALLIANCE:
            return engine.AllianceContract(engine.Suit(data["trumps"]), card(data["called"]))
        resistance = data.get("resistance")
        if resistance is not None and not isinstance(resistance, str):
            raise ValueError("resistance")
        return engine.SoloContract(engine.Suit(data["trumps"]), resistance)
    except (KeyError, ValueError, TypeError, GameError) as exc:
        raise IllegalContract(
            _("contrat de %(game)s mal formé (%(what)s) : %(example)s")
            % {"game": game.value, "what": exc, "example": CONTRACT_EXAMPLES[game]},
            where="contract",
        ) from None


CONTRACT_EXAMPLES = {
    engine.Game.ALLIANCE: '{"trumps": "H", "called": "KS"}',
    engine.Game.LEVER: '{"turn": 1, "take": true, "discard": [...], "called": "KS"}',
    engine.Game.SOLO: '{"trumps": "S", "resistance": null}',
}


@transaction.atomic
def deal_declare(*, actor: Any, deal_id: int, contract: Mapping[str, Any]) -> engine.Contract:
    """The declarer's contract (RULES.md 3.3): trumps, the card called, a lever's turn and take,
    a solo's résistance; the engine checks it against his game and his cards."""
    deal = _at_deal(deal_id, actor, DealPhase.CONTRACT, act=_("enregistrer le contrat"))
    state = deal_of(deal)
    assert state.game is not None
    assert state.declarer is not None
    parsed = _contract(state.game, contract)
    try:
        state.declare(parsed)
    except AllianceFault as exc:
        raise _fault(exc, where="contract") from None
    written = engine.contract_dict(parsed)
    DealContract.objects.create(
        deal=deal, declarer=state.declarer, contract=written, at=clock.now(), by=actor
    )
    _move(deal, DealPhase.PLAY)
    audit_record(
        actor=actor,
        action="deal.declared",
        subject=deal,
        payload={
            "declarer": state.declarer,
            "game": state.game.value,
            "forced": state.forced,
            "contract": written,
            "trumps": state.trumps.value if state.trumps else None,
        },
    )
    return parsed


# --- the play and the settlement -------------------------------------------------------------------


def deal_play(*, actor: Any, deal_id: int, player: str, code: str) -> engine.Played:
    """A card played by the player whose turn it is (RULES.md 3.4). A card not in his hand or not
    following suit is refused with the rule, and recorded; the last card settles the deal."""
    act = _("enregistrer une carte jouée")
    try:
        playing = card(code)
    except IllegalCard as exc:
        raise NotACard(game_message(exc), where="code") from None
    refused: DomainError
    with transaction.atomic():
        deal = _at_deal(deal_id, actor, DealPhase.PLAY, act=act)
        state = deal_of(deal)
        index = state.cards_played
        player = seated_name(player)
        out_of_turn = _turn(deal, actor, player, state.next_player, _("la carte"), "player")
        if out_of_turn is not None:
            refused = out_of_turn
        else:
            try:
                played = state.play(playing)
            except AllianceFault as exc:
                refused = _refused(
                    deal,
                    actor,
                    _fault(exc, where="code"),
                    "deal.card_refused",
                    {"player": player, "card": str(playing), "index": index},
                )
            else:
                _INSERT_PLAY.create(
                    deal=deal,
                    index=index,
                    player=player,
                    card=str(playing),
                    at=clock.now(),
                    by=actor,
                )
                trick = played.trick
                audit_record(
                    actor=actor,
                    action="deal.card_played",
                    subject=deal,
                    payload={
                        "index": index,
                        "player": player,
                        "card": str(playing),
                        "trick": trick.number if trick else None,
                        "winner": trick.winner if trick else None,
                    },
                )
                if played.outcome is not None:
                    _settle(deal, actor, played.outcome)
                return played
    raise refused


def _settle(deal: Deal, actor: Any, outcome: engine.Outcome) -> DealSettlement:
    """The engine's payments between the players' accounts at the deal's mark value, each
    player's fee into the fee box; the deal is over and the pack passes (every card was dealt)."""
    rendered = engine.render(outcome)
    settlement = DealSettlement.objects.create(
        deal=deal, outcome=rendered, at=clock.now(), by=actor
    )
    movements = ledger_post(
        actor=actor, shift=deal.shift, entries=settlement_entries(deal, outcome)
    )
    _move(deal, DealPhase.OVER)
    audit_record(
        actor=actor,
        action="deal.settled",
        subject=deal,
        payload={
            "settlement": settlement.pk,
            "winners": rendered["winners"],
            "marks": rendered["marks"],
            "fee": outcome.fee,
            "money": rendered["money"],
            "movements": [m.pk for m in movements],
        },
    )
    taille_ends(actor=actor, pack=deal.pack, reason="deal over")
    return settlement


def settlement_entries(deal: Deal, outcome: engine.Outcome) -> list[Entry]:
    """What a deal played out moves: each payment payer → payee at the deal's mark value, each
    player's fee into the fee box (a dispute's replay of the deal as found reads the same)."""
    accounts = {a.code: a for a in Account.objects.filter(code__in=deal.players)}
    ref = f"deal:{deal.pk}"
    entries = [
        Entry(
            Movement.Kind.MARKS_PAID,
            accounts[p.payer],
            accounts[p.payee],
            p.marks * deal.mark_value,
            ref,
            f"{ref}:pay:{i}",
        )
        for i, p in enumerate(outcome.payments)
        if p.marks * deal.mark_value
    ]
    if outcome.fee:
        fee_box = table_account(deal.shift.table, Account.Kind.FEE_BOX)
        entries += [
            Entry(
                Movement.Kind.CERCLE_FEE, accounts[p], fee_box, outcome.fee, ref, f"{ref}:fee:{p}"
            )
            for p in deal.players
        ]
    return entries


# --- a whole deal from a paper deal sheet ----------------------------------------------------------


def deal_record(*, actor: Any, shift_id: int, sheet: Mapping[str, Any]) -> Deal:
    """A whole deal transcribed from a paper deal sheet, the replay document of REPLAY.md
    (Alliance), through the same acts in one transaction: the deal opened with the dealer last
    of ``players`` and the player on his left cutting, the cards, each call, the contract, each
    card. The first fault refuses the whole sheet, named as the replay names it (``auction[3]``,
    ``tricks[4][2]``); a card the pack cannot hold is recorded all the same."""
    _check_sheet(sheet)
    players = sheet["players"]
    foreign: tuple[int, str] | None = None
    try:
        with transaction.atomic():
            # Opened first: who may record it, at which séance, comes before what the sheet says.
            try:
                deal = deal_open(
                    actor=actor, shift_id=shift_id, dealer=players[-1], cut_by=players[-2]
                )
            except (NotSeated, WrongCutter) as exc:
                exc.where = "players"  # the sheet names the dealer and his left by their places
                raise
            shift = deal.shift
            if sheet["mark_value"] != deal.mark_value:
                raise BadDeal(
                    _("la marque vaut %(value)s à cette séance, pas %(sheet)s")
                    % {"value": deal.mark_value, "sheet": sheet["mark_value"]},
                    where="mark_value",
                )
            if "reglement" in sheet and _rules(sheet["reglement"]) != _rules(deal.reglement):
                raise BadDeal(
                    _("la feuille porte un autre règlement que celui de la séance (%(posted)s)")
                    % {"posted": deal.reglement},
                    where="reglement",
                )
            if deal.players != list(players):
                raise BadDeal(
                    _("les joueurs assis, dans l'ordre de la donne, sont %(seated)s")
                    % {"seated": ", ".join(deal.players)},
                    where="players",
                )
            try:
                state = deal_cards(actor=actor, deal_id=deal.pk, cards=sheet["cards"])
            except DomainError as exc:
                if exc.code == "foreign_card":
                    foreign = (deal.pack_id, getattr(exc, "card", ""))
                raise
            caller, ended = state.next_caller, False
            for i, word in enumerate(sheet["auction"]):
                called = _at(
                    f"auction[{i}]",
                    deal_call,
                    actor=actor,
                    deal_id=deal.pk,
                    player=caller or "",
                    call=word,
                )
                caller, ended = called.next_caller, called.ended
            if not ended:
                raise _fault(deal_of(deal).auction_unfinished(), where="auction")
            _at("contract", deal_declare, actor=actor, deal_id=deal.pk, contract=sheet["contract"])
            player: str | None = deal.players[0]  # the Vorhand leads the first trick
            for t, trick in enumerate(sheet["tricks"]):
                for c, code in enumerate(trick):
                    played = _at(
                        f"tricks[{t}][{c}]",
                        deal_play,
                        actor=actor,
                        deal_id=deal.pk,
                        player=player or "",
                        code=code,
                    )
                    player = played.next_player
            deal.refresh_from_db()
            if deal.phase != DealPhase.OVER:
                raise BadDeal(_("la feuille s'arrête avant la fin de la donne"), where="tricks")
            return deal
    except DomainError as exc:
        if foreign is not None:  # the refusal is evidence: it outlives the sheet
            card_refusal_record(actor=actor, pack_id=foreign[0], code=foreign[1], shift=shift)
        else:
            # A refusal an act recorded (a card not in hand...) went with the sheet, rolled back
            # as a whole: nothing of it is kept, and a retry is judged afresh.
            exc.recorded = False  # type: ignore[attr-defined]
        raise


SHEET = ("game", "reglement", "players", "mark_value", "cards", "auction", "contract", "tricks")


def _check_sheet(sheet: object) -> None:
    """The sheet's shape, as the replay reads it: its fields known and present, the players a
    list of at least two names; the rest is checked act by act."""
    if not isinstance(sheet, Mapping):
        raise BadDeal(_("une feuille de donne est un objet"), where="sheet")
    unknown = [key for key in sheet if key not in SHEET]
    missing = [key for key in SHEET[2:] if key not in sheet]
    if unknown or missing or sheet.get("game", GAME) != GAME:
        where = (unknown or missing or ["game"])[0]
        raise BadDeal(
            _("une feuille de donne d'Alliance a %(fields)s ; %(where)r n'y va pas ou y manque")
            % {"fields": ", ".join(SHEET), "where": where},
            where=where,
        )
    players = sheet["players"]
    if (
        not isinstance(players, list)
        or len(players) < 2
        or not all(isinstance(p, str) for p in players)
    ):
        raise BadDeal(_("les joueurs : une liste de comptes (patron:<id>)"), where="players")
    if not all(isinstance(sheet[key], list) for key in ("cards", "auction", "tricks")) or not all(
        isinstance(t, list) for t in sheet["tricks"]
    ):
        raise BadDeal(_("cards, auction et tricks sont des listes"), where="sheet")


def _rules(spec: Any) -> str:
    """A règlement's engine parameters without its name, to compare a sheet's with a séance's."""
    from dataclasses import replace

    from casino.games.reglement import reglement

    try:
        engine_rules = spec.engine() if hasattr(spec, "engine") else reglement(spec)
    except GameError as exc:
        raise BadDeal(game_message(exc), where="reglement") from None
    return replace(engine_rules, name="").to_json()


def _at(where: str, act: Any, **kwargs: Any) -> Any:
    """One act of the sheet, its refusal named where the sheet has it (a contract's own key
    stays: ``contract.called``)."""
    try:
        return act(**kwargs)
    except DomainError as exc:
        if not (exc.where or "").startswith("contract."):
            exc.where = where
        raise
