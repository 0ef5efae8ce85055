"""What the cercle table page shows, read from the floor and asked of the engine: the seats round
the table with each player's balance, the pack, and the deal in progress as the croupier enters
it (the hands as dealt, the auction call by call with the calls the engine allows the player
whose turn it is, the contract's form fitting the declarer's game, each player's hand with the
cards he may play, the tricks and their winners), then what the last deal settled. Reads only:
every act is a service (casino/pit/alliance.py calls casino/floor/play/alliance/).

Where the deal stands is the engine's reading of the deal's records (``deals.deal_of``), as for
the services, so the page and the acts cannot disagree about whose turn it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from casino.floor.models import Shift
from casino.floor.play.alliance import deals
from casino.floor.play.alliance.models import Deal, DealPhase, DealPlay
from casino.floor.play.alliance.seats import seated
from casino.floor.play.alliance.words import call_word, game_word, payment_word, suit_word
from casino.floor.services import balance
from casino.games import alliance as engine
from casino.games.cards import Card, Suit
from casino.games.reglement import Reglement
from casino.pit.table_view import Face, face
from casino.shown import money
from shoes.models import Pack
from shoes.services import IN_USE, packs_at

# Suits as a hand is shown: the colours alternate, so that two suits of a colour never touch.
HAND_SUITS = (Suit.SPADES, Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)


def player_name(code: str) -> str:
    """A player as the table names him: his patron's id (``patron:ana`` → ``ana``)."""
    return code.removeprefix("patron:")


@dataclass(frozen=True)
class SeatView:
    seat: int
    patron: str  # the account's code, as the acts name him
    name: str
    balance: str


@dataclass(frozen=True)
class DealerChoice:
    """A seated player who may deal, and the player on his left, who cuts (pre-filled)."""

    code: str
    name: str
    left: str


@dataclass(frozen=True)
class HandCard:
    face: Face
    legal: bool  # his to play now (the engine's ``legal_cards``)


@dataclass
class PlayerView:
    code: str
    name: str
    seat: int | None
    words: list[str]  # Vorhand, donneur, déclarant…
    hand: list[HandCard] = field(default_factory=list)
    taken: int = 0
    turn: bool = False


@dataclass(frozen=True)
class Played:
    name: str
    face: Face


@dataclass(frozen=True)
class TrickView:
    number: int
    leader: str
    cards: list[Played]
    winner: str


@dataclass(frozen=True)
class CallView:
    name: str
    word: str
    call: str


@dataclass
class ContractForm:
    """What the contract's form offers for the declarer's game: the suits, the cards of the rank
    he calls (his own among them: the engine refuses those), the face-down table cards a lever
    turns, the cards he may discard after a take, the opponents who may resist a solo."""

    game: str
    suits: list[tuple[str, str]] = field(default_factory=list)
    called: list[Face] = field(default_factory=list)
    turns: list[tuple[int, Face]] = field(default_factory=list)
    pool: list[tuple[Face, bool]] = field(
        default_factory=list
    )  # a card, and whether it is a table card
    table_cards: int = 0
    opponents: list[tuple[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class PaymentView:
    payer: str
    payee: str
    marks: int
    word: str
    amount: str


@dataclass(frozen=True)
class ResultRow:
    name: str
    taken: int
    marks: int
    money: str
    won: bool


@dataclass(frozen=True)
class Settled:
    """What a deal played out settled, from its settlement (the engine's output document)."""

    number: int
    declarer: str
    game: str
    trumps: str
    called: Face | None
    ally: str | None
    resister: str | None
    fahne: Face
    fahne_with: str | None
    winners: list[str]
    payments: list[PaymentView]
    rows: list[ResultRow]
    fee: str
    fee_total: str


@dataclass
class AllianceView:
    shift: Shift
    rules: Reglement
    limits: str
    seats: list[SeatView]
    pack: Pack | None
    deal: Deal | None = None
    phase: str = "none"  # the deal's phase, "none" between deals
    next_word: str = ""
    dealer_name: str = ""  # the deal's dealer and cutter, as the table names them
    cutter_name: str = ""
    hand_size: int = 0
    down_size: int = 0
    dealers: list[DealerChoice] = field(default_factory=list)
    dealer: str = ""
    cutter: str = ""
    players: list[PlayerView] = field(default_factory=list)
    up: Face | None = None
    down: list[Face] = field(default_factory=list)
    couleur: str = ""
    calls: list[CallView] = field(default_factory=list)
    caller: str = ""  # whose call it is (his account's code)
    caller_name: str = ""
    legal_calls: list[tuple[str, str]] = field(default_factory=list)
    declarer: str = ""
    declarer_name: str = ""
    game: str = ""
    contract_form: ContractForm | None = None
    contract: list[str] = field(default_factory=list)  # the contract as the table says it
    tricks: list[TrickView] = field(default_factory=list)
    current: list[Played] = field(default_factory=list)
    trick_number: int = 0
    player: str = ""  # whose card it is (his account's code)
    player_name: str = ""
    settled: Settled | None = None
    staff: list[tuple[str, str]] = field(default_factory=list)


def mark_limits(shift: Shift, rules: Reglement) -> str:
    return _("Marque à %(mark)s ; cagnotte : %(fee)s par joueur et par donne") % {
        "mark": money(shift.min_stake),
        "fee": money(rules.cercle_fee),
    }


def _sorted(cards: list[Card], trumps: Suit | None) -> list[Card]:
    """A hand as the croupier reads it: by suit, each suit highest first (RULES.md 3.4's order
    once trumps are known)."""
    order = {c: i for s in HAND_SUITS for i, c in enumerate(engine.suit_order(s, trumps))}
    return sorted(cards, key=lambda c: (HAND_SUITS.index(c.suit), order[c]))


def _seats(shift: Shift) -> list[SeatView]:
    return [
        SeatView(s.seat, s.patron.code, player_name(s.patron.code), money(balance(s.patron)))
        for s in seated(shift)
    ]


def _dealers(shift: Shift, seats: list[SeatView]) -> tuple[list[DealerChoice], str]:
    """Who may deal (every seated player, the player on his left cutting) and who is offered:
    the deal goes round with the cards, to the last deal's Vorhand when he is still seated."""
    choices = [DealerChoice(s.patron, s.name, seats[i - 1].patron) for i, s in enumerate(seats)]
    last = Deal.objects.filter(shift=shift).order_by("-number").first()
    codes = [c.code for c in choices]
    dealer = codes[0] if codes else ""
    if last is not None and last.players[0] in codes:
        dealer = last.players[0]
    return choices, dealer


def _players(deal: Deal, state: engine.AllianceDeal, seats: list[SeatView]) -> list[PlayerView]:
    seat_of = {s.patron: s.seat for s in seats}
    legal = set(state.legal_cards())
    taken = {p: 0 for p in deal.players}
    for trick in state.tricks:
        taken[trick.winner] += 1
    out = []
    for i, code in enumerate(deal.players):
        words = []
        if i == 0:
            words.append(_("Vorhand"))
        if code == deal.dealer:
            words.append(_("donneur"))
        if code == state.declarer and state.phase is not engine.Phase.AUCTION:
            words.append(_("déclarant"))
        turn = code in (state.next_caller, state.next_player)
        hand = [
            HandCard(face(str(c)), turn and c in legal)
            for c in _sorted(list(state.hands[i]), state.trumps)
        ]
        out.append(
            PlayerView(code, player_name(code), seat_of.get(code), words, hand, taken[code], turn)
        )
    return out


def _contract_form(state: engine.AllianceDeal) -> ContractForm:
    assert state.game is not None
    assert state.declarer is not None
    table = state.table
    assert table is not None
    hand = list(state.hands[state.players.index(state.declarer)])
    form = ContractForm(state.game.value)
    suits = [(s.value, suit_word(s.value)) for s in HAND_SUITS]
    if state.game is engine.Game.SOLO:
        form.suits = suits
        form.opponents = [(p, player_name(p)) for p in state.players if p != state.declarer]
        return form
    ranks = [engine.called_rank(hand)]
    if state.game is engine.Game.LEVER:
        form.turns = [(i, face(str(c))) for i, c in enumerate(table.down, start=1)]
        form.pool = [
            (face(str(c)), c in table.cards) for c in _sorted(hand + list(table.cards), None)
        ]
        form.table_cards = len(table.cards)
        # After a take he calls on his new hand: the rank may fall by one if the table held the
        # fourth card of the rank he lacked. Both are offered; the engine judges the one called.
        ranks.append(engine.called_rank(hand + list(table.cards)))
    else:
        form.suits = suits
    form.called = [face(r.value + s.value) for r in dict.fromkeys(ranks) for s in HAND_SUITS]
    return form


def _said_contract(contract: dict[str, Any], state: engine.AllianceDeal) -> list[str]:
    words = []
    if state.trumps is not None:
        words.append(_("atout : %(suit)s") % {"suit": suit_word(state.trumps.value)})
    if "turn" in contract:
        words.append(_("carte couverte n° %(turn)s retournée") % {"turn": contract["turn"]})
        if contract.get("take"):
            words.append(
                _("prise ; écart : %(cards)s")
                % {"cards": " ".join(face(c).label for c in contract["discard"])}
            )
    if contract.get("called"):
        words.append(_("appelle %(card)s") % {"card": face(contract["called"]).label})
    if "resistance" in contract:
        resister = contract["resistance"]
        words.append(
            _("résistance : %(player)s") % {"player": player_name(resister)}
            if resister
            else _("pas de résistance")
        )
    return words


def _tricks(deal: Deal, state: engine.AllianceDeal) -> tuple[list[TrickView], list[Played]]:
    tricks = [
        TrickView(
            t.number,
            player_name(t.leader),
            [Played(player_name(p), face(str(c))) for p, c in zip(t.players, t.cards, strict=True)],
            player_name(t.winner),
        )
        for t in state.tricks
    ]
    done = len(state.tricks) * len(deal.players)
    current = [
        Played(player_name(p.player), face(p.card))
        for p in DealPlay.objects.filter(deal=deal, index__gte=done).order_by("index")
    ]
    return tricks, current


def settled(deal: Deal) -> Settled:
    outcome = deal.settlement.outcome
    winners = set(outcome["winners"])
    rows = [
        ResultRow(
            player_name(p),
            outcome["taken"][p],
            outcome["marks"][p],
            money(outcome["money"][p]),
            p in winners,
        )
        for p in deal.players
    ]
    return Settled(
        number=deal.number,
        declarer=player_name(outcome["declarer"]),
        game=game_word(outcome["game"], forced=outcome["forced"]),
        trumps=suit_word(outcome["trumps"]),
        called=face(outcome["called"]) if outcome["called"] else None,
        ally=player_name(outcome["ally"]) if outcome["ally"] else None,
        resister=player_name(outcome["resister"]) if outcome["resister"] else None,
        fahne=face(str(engine.fahne(Suit(outcome["trumps"])))),
        fahne_with=player_name(outcome["fahne_with"]) if outcome["fahne_with"] else None,
        winners=[player_name(p) for p in outcome["winners"]],
        payments=[
            PaymentView(
                player_name(p["from"]),
                player_name(p["to"]),
                p["marks"],
                payment_word(p["for"]),
                money(p["marks"] * deal.mark_value),
            )
            for p in outcome["payments"]
        ],
        rows=rows,
        fee=money(outcome["fee"]),
        fee_total=money(outcome["fee"] * len(deal.players)),
    )


def _next_word(view: AllianceView, state: engine.AllianceDeal) -> str:
    phase = state.phase
    if phase is engine.Phase.DEALING:
        return _("Entrez les cartes telles que données : chaque main, puis les cartes de table.")
    if phase is engine.Phase.AUCTION:
        return _("Enchères : à %(player)s d'annoncer.") % {"player": view.caller_name}
    if phase is engine.Phase.CONTRACT:
        return _("%(player)s joue %(game)s : son contrat.") % {
            "player": view.declarer_name,
            "game": view.game,
        }
    return _("Pli n° %(trick)s : à %(player)s de jouer.") % {
        "trick": view.trick_number,
        "player": view.player_name,
    }


def alliance_view(shift: Shift) -> AllianceView:
    """Everything the cercle page shows of the table where ``shift`` is open."""
    rules = shift.rules()
    seats = _seats(shift)
    view = AllianceView(
        shift=shift,
        rules=rules,
        limits=mark_limits(shift, rules),
        seats=seats,
        pack=packs_at(shift.table_id, *IN_USE).first(),
    )
    deal = (
        Deal.objects.filter(shift=shift)
        .exclude(phase=DealPhase.OVER)
        .select_related("reglement", "pack")
        .first()
    )
    if deal is None:
        view.dealers, view.dealer = _dealers(shift, seats)
        left = {d.code: d.left for d in view.dealers}
        view.cutter = left.get(view.dealer, "")
        last = (
            Deal.objects.filter(shift=shift, phase=DealPhase.OVER)
            .select_related("settlement")
            .order_by("-number")
            .first()
        )
        if last is not None:
            view.settled = settled(last)
        return view
    state = deals.deal_of(deal)
    view.deal = deal
    view.phase = deal.phase
    view.dealer_name = player_name(deal.dealer)
    view.cutter_name = player_name(deal.cut_by)
    rounds, packet = engine.ROUNDS[len(deal.players)]
    view.hand_size, view.down_size = rounds * packet, rounds - 1
    view.players = _players(deal, state, seats)
    if state.table is not None:
        view.up = face(str(state.table.up))
        view.down = [face(str(c)) for c in state.table.down]
        view.couleur = suit_word(state.table.up.suit.value)
    view.calls = [
        CallView(player_name(deal.players[i % len(deal.players)]), call_word(c.value), c.value)
        for i, c in enumerate(state.calls)
    ]
    view.caller = state.next_caller or ""
    view.caller_name = player_name(view.caller)
    view.legal_calls = [(c.value, call_word(c.value)) for c in state.legal_calls()]
    if (
        state.declarer is not None
        and state.game is not None
        and state.phase is not engine.Phase.AUCTION
    ):
        view.declarer = state.declarer
        view.declarer_name = player_name(state.declarer)
        view.game = game_word(state.game.value, forced=state.forced)
    if state.phase is engine.Phase.CONTRACT:
        view.contract_form = _contract_form(state)
    if state.contract is not None:
        view.contract = _said_contract(engine.contract_dict(state.contract), state)
        view.tricks, view.current = _tricks(deal, state)
        view.trick_number = len(state.tricks) + 1
        view.player = state.next_player or ""
        view.player_name = player_name(view.player)
    view.next_word = _next_word(view, state)
    return view
