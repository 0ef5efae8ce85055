"""The Alliance replay (REPLAY.md, Alliance): one recorded deal in, its play and payments out.

``casino.games.replay`` reads the JSON and hands a document whose ``game`` is ``alliance`` here. The
input is checked field by field in the page's order; the first fault is a ``GameError`` with the
replay's code and ``where`` (the command prints it with exit status 2): unknown top-level field,
missing field, ``game``, ``players``, ``reglement``, ``mark_value``, ``cards`` (codes, then a
repeated card at its later index, then the count), ``auction``, ``contract``, ``tricks`` (the count
first, then trick by trick, card by card).

Readings (REPLAY.md leaves these open; each has a test):

- A call that is not a string, or a word that is none of ``pass alliance lever solo hold`` (in
  lower case), is ``bad_input`` at ``auction[i]``, as Pharao's unknown ``do`` is; ``bad_call`` is
  for a call the rules refuse (out of turn, too low, after the end; a list that stops before the
  end is ``bad_call`` at ``auction``).
- ``contract``: keys of another game's contract are unknown (``unknown_field``); a missing key and a
  value of the wrong type are ``bad_input``; ``discard`` absent with ``"take": true`` or present
  without it is ``bad_input`` (as Pharao's ``amount`` on the wrong act); what breaks RULES.md 3.3
  (the called rank, a card the declarer holds, a ``turn`` beyond the face-down cards, a discard not
  in his hand or repeated, the number of discards, a résistance by the soloist or by no player of
  the deal) is ``bad_contract``. Suits (``trumps``) are read like card codes, in either case.
  Inside ``discard``: codes first (``bad_card``), then card by card, then the count.
- ``tricks``: a trick that is not a list is ``bad_input`` at ``tricks[i]``; its length is checked
  when its turn comes (trick by trick), before its cards; a card that is not a code is
  ``bad_card`` at ``tricks[i][j]``; a card already played, lying on the table or discarded is
  ``not_in_hand``.
- ``players``: a name that is not a non-empty string, or a repeated one (at its later index), is
  ``bad_input`` at ``players[i]``; a list of another length than 4, 5 or 6 at ``players``.
"""

from __future__ import annotations

from typing import Any

from casino.games.alliance import (
    AllianceContract,
    AllianceDeal,
    Call,
    Contract,
    Game,
    LeverContract,
    Phase,
    SoloContract,
    check_pack,
    check_trick_length,
    check_tricks_count,
    render,
)
from casino.games.cards import Card, Suit, cards_of_codes
from casino.games.errors import GameError
from casino.games.replay import (
    _card,
    _codes,
    _fail,
    _from_engine,
    _integer,
    _object,
    _required,
    _rules,
    _string,
)

GAME = "alliance"
FIELDS = ("game", "reglement", "players", "mark_value", "cards", "auction", "contract", "tricks")
REQUIRED = ("game", "players", "mark_value", "cards", "auction", "contract", "tricks")
CONTRACT_FIELDS = {
    Game.ALLIANCE: ("trumps", "called"),
    Game.LEVER: ("turn", "take", "discard", "called"),
    Game.SOLO: ("trumps", "resistance"),
}


def _players(value: Any) -> list[str]:
    if not isinstance(value, list):
        raise _fail("bad_input", "players is a list of 4, 5 or 6 names", "players")
    names: list[str] = []
    for index, name in enumerate(value):
        name = _string(name, f"players[{index}]")
        if name in names:
            raise _fail("bad_input", f"the player {name!r} is listed twice", f"players[{index}]")
        names.append(name)
    if len(names) not in (4, 5, 6):
        raise _fail("bad_input", f"Alliance is played by 4, 5 or 6, not {len(names)}", "players")
    return names


def _cards(value: Any) -> list[Card]:
    if not isinstance(value, list):
        raise _fail("bad_input", "cards is a list of the 52 card codes", "cards")
    cards = _codes(value)
    try:
        check_pack(cards)
    except GameError as exc:
        raise _from_engine("bad_pack", exc, exc.where or "cards") from None
    return cards


def _engine(exc: GameError) -> GameError:
    """An engine's fault as the replay reports it: its own code and ``where``."""
    return _from_engine(exc.code, exc, exc.where)


def _auction(value: Any, deal: AllianceDeal) -> None:
    if not isinstance(value, list):
        raise _fail("bad_input", "auction is a list of calls", "auction")
    known = ", ".join(c.value for c in Call)
    for index, raw in enumerate(value):
        where = f"auction[{index}]"
        if not isinstance(raw, str):
            raise _fail("bad_input", f"{raw!r} is not a call ({known})", where)
        try:
            call = Call(raw)
        except ValueError:
            raise _fail("bad_input", f"{raw!r} is not a call ({known})", where) from None
        try:
            deal.call(call)
        except GameError as exc:
            raise _engine(exc) from None
    if deal.phase is Phase.AUCTION:
        raise _engine(deal.auction_unfinished())


def _suit(value: Any, where: str) -> Suit:
    if isinstance(value, str):
        try:
            return Suit(value.strip().upper())
        except ValueError:
            pass
    raise _fail("bad_input", f"{value!r} is not a suit (S, H, D, C)", where)


def _contract(value: Any, deal: AllianceDeal) -> Contract:
    game = deal.game
    assert game is not None
    keys = CONTRACT_FIELDS[game]
    fields = _object(value, "contract", keys)
    required = {Game.ALLIANCE: keys, Game.LEVER: ("turn", "called"), Game.SOLO: ("trumps",)}
    for key in required[game]:
        _required(fields, key, "contract")
    contract: Contract
    if game is Game.ALLIANCE:
        trumps = _suit(fields["trumps"], "contract.trumps")
        contract = AllianceContract(trumps, _card(fields["called"], "contract.called"))
    elif game is Game.SOLO:
        trumps = _suit(fields["trumps"], "contract.trumps")
        resistance = fields.get("resistance")
        if resistance is not None:
            resistance = _string(resistance, "contract.resistance")
        contract = SoloContract(trumps, resistance)
    else:
        turn = fields["turn"]
        if not isinstance(turn, int) or isinstance(turn, bool):
            raise _fail("bad_input", f"{turn!r} is not an integer", "contract.turn")
        take = fields.get("take", False)
        if not isinstance(take, bool):
            raise _fail("bad_input", f"{take!r} is not true or false", "contract.take")
        discard: tuple[Card, ...] = ()
        if take:
            raw = _required(fields, "discard", "contract")
            if not isinstance(raw, list):
                raise _fail("bad_input", "discard is a list of card codes", "contract.discard")
            discard = tuple(_card(c, f"contract.discard[{i}]") for i, c in enumerate(raw))
        elif "discard" in fields:
            raise _fail("bad_input", "discard is given only with take: true", "contract.discard")
        called = _card(fields["called"], "contract.called")
        contract = LeverContract(turn, called, take, discard)
    try:
        deal.declare(contract)
    except GameError as exc:
        raise _engine(exc) from None
    return contract


def _tricks(value: Any, deal: AllianceDeal) -> None:
    if not isinstance(value, list):
        raise _fail("bad_input", "tricks is a list of tricks", "tricks")
    try:
        check_tricks_count(value, deal.n)
    except GameError as exc:
        raise _engine(exc) from None
    for index, trick in enumerate(value):
        if not isinstance(trick, list):
            raise _fail("bad_input", "a trick is a list of card codes", f"tricks[{index}]")
        try:
            check_trick_length(index, trick, deal.n)
        except GameError as exc:
            raise _engine(exc) from None
        # A trick of codes as records write them is played at once (``play_all`` names a fault
        # as the card-by-card reading below does); other codes are read and played one by one.
        cards = cards_of_codes(trick)
        if cards is not None:
            try:
                deal.play_all(cards)
            except GameError as exc:
                raise _engine(exc) from None
            continue
        for position, code in enumerate(trick):
            c = _card(code, f"tricks[{index}][{position}]")
            try:
                deal.play(c)
            except GameError as exc:
                raise _engine(exc) from None


def replay_alliance(document: Any) -> dict[str, Any]:
    """Replay one (parsed) Alliance document of REPLAY.md; return the output document."""
    top = _object(document, "", FIELDS)
    for key in REQUIRED:
        _required(top, key, "")
    if top["game"] != GAME:
        raise _fail("bad_input", f"{top['game']!r} is not {GAME}", "game")
    players = _players(top["players"])
    rules = _rules(top.get("reglement", "baden-1854"))
    mark_value = _integer(top["mark_value"], "mark_value", minimum=0)
    cards = _cards(top["cards"])
    deal = AllianceDeal(players, rules, mark_value=mark_value)
    for c in cards:
        deal.receive(c)
    _auction(top["auction"], deal)
    _contract(top["contract"], deal)
    _tricks(top["tricks"], deal)
    assert deal.outcome is not None
    return render(deal.outcome)
