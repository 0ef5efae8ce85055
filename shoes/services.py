"""Every act on a sealed pack, from receipt to destruction. Each one is audited.

The order of a pack's life is the state machine of ``models.TRANSITIONS``, enforced here with a
clear error and again in PostgreSQL. Refusals that are evidence (a foreign card) are committed
before the error is raised.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from django.db import transaction
from django.db.models import QuerySet
from django.utils.translation import gettext as _
from psycopg.types.json import Jsonb

from audit.chain import audit_record
from audit.models import Severity
from audit.services import anomaly_raise
from casino import clock, shown
from casino.errors import Conflict, DomainError, NotFound, WrongGame
from casino.floor.models import Duty, Game, Shift, Table
from casino.floor.registry import game_module
from casino.floor.services import require_duty_at_table, require_on_duty
from casino.games.cards import SINGLE_PACK, SIXAIN, Composition, card
from casino.games.errors import IllegalCard
from casino.i18n import either, game_message
from casino.people.roles import Role
from casino.people.services import require_role
from casino.prepared import Prepared, PreparedInsert
from casino.round_trips import USING, run
from shoes.errors import (
    CardRefused,
    CountInvalid,
    IllegalPackState,
    NotACard,
    SealNotVerified,
    ShuffleOrderViolated,
    TalonCounted,
    TalonNotCounted,
)
from shoes.models import (
    CardLaid,
    Pack,
    PackEvent,
    PackKind,
    PackState,
    Reconciliation,
    RegisterVisa,
    SealVerification,
    TalonCount,
)

CARD_ROOM = (Role.CAISSIER,)  # the cage receives and stores sealed packs
DEALERS = (Role.TAILLEUR, Role.CROUPIER)
IN_USE = (PackState.OPENED, PackState.IN_PLAY, PackState.PASSED)


class _GamePacks(Mapping[Game, PackKind]):
    """The kind of pack each game is dealt from, as the game's module says (asked when read: the
    games' modules import this one)."""

    def __getitem__(self, game: Game) -> PackKind:
        return PackKind(game_module(Game(game)).pack_kind)

    def __iter__(self) -> Iterator[Game]:
        return iter(Game)

    def __len__(self) -> int:
        return len(Game)


GAME_PACK = _GamePacks()
# Cards laid together (a deal, the cards burned at the cut) are one INSERT: written once
# (casino/prepared.py). A card at a time is ``shoes_lay_card``'s (``card_lay``).
_INSERT_CARD = PreparedInsert(CardLaid)


def composition(pack: Pack) -> Composition:
    return composition_of(PackKind(pack.kind))


def composition_of(kind: PackKind) -> Composition:
    return SIXAIN if kind == PackKind.SIXAIN else SINGLE_PACK


# The pack's acts lock it: prepared once (casino/prepared.py).
_PACK_LOCK = Prepared(lambda pk: Pack.objects.select_for_update().filter(pk=pk))


def _lock(pack_id: int) -> Pack:
    pack = _PACK_LOCK.first(int(pack_id))  # an id as the ORM takes it, text or number
    if pack is None:
        raise NotFound(_("le jeu %(pack)s n'existe pas") % {"pack": pack_id}, where="pack")
    return pack


def _require_state(pack: Pack, *states: PackState, act: str) -> None:
    if pack.state not in states:
        raise IllegalPackState(
            _("%(act)s : le jeu %(pack)s est %(state)s, pas %(states)s")
            % {
                "act": act,
                "pack": pack.seal_number,
                "state": pack.state,
                "states": either(s.value for s in states),
            },
            where="state",
        )


def _record(
    pack: Pack,
    actor: Any,
    kind: PackEvent.Kind,
    *,
    to_state: PackState | None = None,
    table: Table | None = None,
    shift: Shift | None = None,
    person: str = "",
    details: dict[str, Any] | None = None,
    evidence: dict[str, Any] | None = None,
) -> PackEvent:
    """The act's timeline row, the state move (if any) and the audit event, together.
    ``evidence``: what the audit event pins besides the timeline's details (the cards counted)."""
    before = pack.state
    if to_state is not None:
        pack.state = to_state
        pack.save(update_fields=["state"])
    event = PackEvent.objects.create(
        pack=pack,
        at=clock.now(),
        actor=actor,
        kind=kind,
        table=table,
        shift=shift,
        person=person,
        details=details or {},
    )
    audit_record(
        actor=actor,
        action=f"pack.{kind}",
        subject=pack,
        payload={
            "seal": pack.seal_number,
            "from": before,
            "to": pack.state,
            "event": event.pk,
            "table": table.number if table else None,
            "shift": shift.pk if shift else None,
            "person": person,
            "details": details or {},
            **(evidence or {}),
        },
    )
    return event


def packs_at(table_id: int, *states: PackState) -> QuerySet[Pack]:
    """The packs opened at this table that are now in one of ``states`` (one query: a pack is
    opened once, at one table)."""
    return Pack.objects.filter(
        state__in=states, events__kind=PackEvent.Kind.OPENED, events__table_id=table_id
    ).order_by("id")


def current_shift(pack: Pack) -> Shift | None:
    """The séance in which the pack was opened (None before it is opened)."""
    opened = pack.events.filter(kind=PackEvent.Kind.OPENED).order_by("-at").first()
    return opened.shift if opened else None


def current_taille(pack: Pack) -> int:
    """Which taille the pack is in: one per cut (a re-shuffled sixain plays its cards again)."""
    return pack.events.filter(kind=PackEvent.Kind.CUT).count()


def _at_table(pack: Pack, actor: Any, *posts: Duty.Post, act: str) -> Shift:
    """A pack act happens at the table where the pack was opened, by staff on duty in the séance
    open there now (which may be a later séance than the one it was opened in)."""
    opened_in = current_shift(pack)
    assert opened_in is not None
    return require_duty_at_table(opened_in.table_id, actor, *posts, act=act)


def _no_round_open(pack: Pack, act: str) -> None:
    """Passing or retiring the cards mid-round would leave the round unable to go on: the game
    of the table where the pack was opened says whether one is being played with it."""
    opened_in = current_shift(pack)
    if opened_in is not None:
        game_module(opened_in.table.game).check_pack_free(pack, act=act)


@transaction.atomic
def pack_receive(
    *,
    actor: Any,
    kind: PackKind | str,
    maker: str,
    maker_pack_numbers: str,
    seal_number: str,
    sealing_authority: str,
    store_location: str,
) -> Pack:
    """Enter a delivered sealed pack in the receipt register (carnet de prise en charge)."""
    require_role(actor, *CARD_ROOM, act=_("recevoir des jeux scellés"))
    seal_number = seal_number.strip()
    if Pack.objects.filter(seal_number=seal_number).exists():
        raise Conflict(
            _("le numéro de scellé %(seal)s est déjà au registre") % {"seal": seal_number},
            where="seal_number",
        )
    pack = Pack.objects.create(
        kind=PackKind(kind),
        maker=maker,
        maker_pack_numbers=maker_pack_numbers,
        seal_number=seal_number,
        sealing_authority=sealing_authority,
        received_at=clock.now(),
        received_by=actor,
        store_location=store_location,
    )
    _record(
        pack,
        actor,
        PackEvent.Kind.RECEIVED,
        details={
            "kind": pack.kind,
            "maker": maker,
            "maker_pack_numbers": maker_pack_numbers,
            "sealing_authority": sealing_authority,
            "store_location": store_location,
        },
    )
    return pack


@transaction.atomic
def delivery_receive(
    *,
    actor: Any,
    kind: PackKind | str,
    maker: str,
    sealing_authority: str,
    store_location: str,
    packs: list[dict[str, str]],
) -> list[Pack]:
    """A delivery of several sealed packs entered in the receipt register at once: one
    ``pack_receive`` each (``packs``: their ``seal_number`` and ``maker_pack_numbers``), all of
    them or none. The first refused refuses the delivery, named by its place in it."""
    received = []
    for index, each in enumerate(packs):
        try:
            received.append(
                pack_receive(
                    actor=actor,
                    kind=kind,
                    maker=maker,
                    sealing_authority=sealing_authority,
                    store_location=store_location,
                    seal_number=each["seal_number"],
                    maker_pack_numbers=each["maker_pack_numbers"],
                )
            )
        except DomainError as refusal:
            refusal.message = _("jeu %(row)s de la livraison : %(message)s") % {
                "row": index + 1,
                "message": refusal.message,
            }
            refusal.where = f"packs[{index}]" + (f".{refusal.where}" if refusal.where else "")
            raise
    return received


@transaction.atomic
def pack_store(*, actor: Any, pack_id: int) -> Pack:
    require_role(actor, *CARD_ROOM, act=_("ranger un jeu scellé"))
    pack = _lock(pack_id)
    _require_state(pack, PackState.RECEIVED, act=_("ranger"))
    _record(
        pack,
        actor,
        PackEvent.Kind.STORED,
        to_state=PackState.IN_STORE,
        details={"store_location": pack.store_location},
    )
    return pack


@transaction.atomic
def register_visa(*, actor: Any, day: dt.date, remarks: str = "") -> RegisterVisa:
    """The commissioner's visa on the register page of ``day`` (the packs received that day)."""
    require_role(actor, Role.COMMISSAIRE, act=_("viser le registre de prise en charge"))
    if RegisterVisa.objects.filter(day=day).exists():
        raise Conflict(
            _("la page du registre du %(day)s porte déjà un visa") % {"day": day}, where="day"
        )
    received = Pack.objects.filter(received_at__date=day)
    visa = RegisterVisa.objects.create(
        day=day, commissaire=actor, at=clock.now(), packs_seen=received.count(), remarks=remarks
    )
    audit_record(
        actor=actor,
        action="register.visa",
        subject=visa,
        payload={
            "day": day,
            "seals": sorted(received.values_list("seal_number", flat=True)),
            "remarks": remarks,
        },
    )
    return visa


@transaction.atomic
def seal_verify(
    *,
    actor: Any,
    pack_id: int,
    seal_number_read: str,
    verdict: SealVerification.Verdict | str,
    remarks: str = "",
) -> SealVerification:
    """The commissioner checks the seal. A broken or different seal rejects the pack."""
    require_role(actor, Role.COMMISSAIRE, act=_("vérifier un scellé"))
    pack = _lock(pack_id)
    verdict = SealVerification.Verdict(verdict)
    seal_number_read = seal_number_read.strip()
    if seal_number_read != pack.seal_number:
        verdict = SealVerification.Verdict.MISMATCH  # what was read decides, not what was said
    if verdict == SealVerification.Verdict.INTACT:
        _require_state(pack, PackState.IN_STORE, act=_("vérifier"))
    else:
        _require_state(pack, PackState.RECEIVED, PackState.IN_STORE, act=_("vérifier"))
    verification = SealVerification.objects.create(
        pack=pack,
        commissaire=actor,
        at=clock.now(),
        seal_number_read=seal_number_read,
        verdict=verdict,
        remarks=remarks,
    )
    details = {
        "verification": verification.pk,
        "seal_number_read": seal_number_read,
        "verdict": verdict.value,
        "remarks": remarks,
    }
    if verdict == SealVerification.Verdict.INTACT:
        _record(pack, actor, PackEvent.Kind.VERIFIED, to_state=PackState.VERIFIED, details=details)
        return verification
    _record(pack, actor, PackEvent.Kind.REJECTED, to_state=PackState.REJECTED, details=details)
    anomaly_raise(
        detector=f"seal_{verdict.value}",
        severity=Severity.CRITICAL,
        subject=pack,
        summary=f"seal of pack {pack.seal_number} found {verdict.value} "
        f"(read {seal_number_read!r})",
        evidence={"seal_number": pack.seal_number, **details},
        involved=[actor.pk],  # the commissioner who read the seal does not review it
        dedup_key=f"seal:{pack.pk}:{verification.pk}",
    )
    return verification


@transaction.atomic
def pack_open(*, actor: Any, pack_id: int, shift_id: int) -> Pack:
    """Break the seal at a table, in a séance. Only after an intact verification."""
    require_role(actor, Role.CHEF_DE_PARTIE, Role.TAILLEUR, act=_("ouvrir un jeu scellé"))
    pack = _lock(pack_id)
    try:
        shift = Shift.objects.select_related("table").get(pk=shift_id)
    except Shift.DoesNotExist:
        raise NotFound(
            _("la séance %(shift)s n'existe pas") % {"shift": shift_id}, where="shift"
        ) from None
    if not pack.verifications.filter(verdict=SealVerification.Verdict.INTACT).exists():
        raise SealNotVerified(
            _(
                "le jeu %(pack)s ne peut pas être ouvert : aucun commissaire n'a trouvé son "
                "scellé intact"
            )
            % {"pack": pack.seal_number},
            where="pack",
        )
    _require_state(pack, PackState.VERIFIED, act=_("ouvrir"))
    if shift.closed_at is not None:
        raise Conflict(_("la séance %(shift)s est fermée") % {"shift": shift.pk}, where="shift")
    require_on_duty(
        shift, actor, Duty.Post.CHEF_DE_PARTIE, Duty.Post.TAILLEUR, act=_("ouvrir un jeu scellé")
    )
    table = shift.table
    if GAME_PACK[Game(table.game)] != pack.kind:
        raise Conflict(
            _("%(table)s se joue avec un %(wanted)s, pas un %(kind)s")
            % {
                "table": table,
                "wanted": GAME_PACK[Game(table.game)].label,
                "kind": pack.get_kind_display(),
            },
            where="pack",
        )
    busy = packs_at(table.pk, *IN_USE).first()
    if busy is not None:
        raise Conflict(
            _("%(table)s a déjà le jeu %(pack)s en service")
            % {"table": table, "pack": busy.seal_number},
            where="shift",
        )
    _record(pack, actor, PackEvent.Kind.OPENED, to_state=PackState.OPENED, table=table, shift=shift)
    return pack


def _shuffles_since_last_deal(pack: Pack) -> list[PackEvent]:
    """The shuffles since the pack was opened or last passed."""
    marks = (
        pack.events.filter(kind__in=[PackEvent.Kind.OPENED, PackEvent.Kind.PASSED])
        .order_by("-at", "-id")
        .first()
    )
    if marks is None:
        return []
    return list(pack.events.filter(kind=PackEvent.Kind.SHUFFLED, id__gt=marks.id).order_by("id"))


@transaction.atomic
def pack_shuffle(*, actor: Any, pack_id: int, player: str = "") -> PackEvent:
    """A shuffle: by a croupier, by the tailleur, or openly by a player where allowed."""
    require_role(actor, *DEALERS, act=_("enregistrer un mélange"))
    pack = _lock(pack_id)
    _require_state(pack, PackState.OPENED, PackState.PASSED, act=_("mêler"))
    shift = _at_table(pack, actor, Duty.Post.TAILLEUR, Duty.Post.CROUPIER, act=_("mêler"))
    _require_talon_counted(pack, _("mêler"))
    rules = shift.rules()
    player = player.strip()
    if player and not rules.player_may_shuffle:
        raise ShuffleOrderViolated(
            _("le règlement %(reglement)s ne laisse pas un joueur mêler")
            % {"reglement": rules.name},
            where="player",
        )
    role = "player" if player else ("tailleur" if Role.TAILLEUR in _roles(actor) else "croupier")
    return _record(
        pack,
        actor,
        PackEvent.Kind.SHUFFLED,
        table=shift.table,
        shift=shift,
        person=player,
        details={"by": role},
    )


def _roles(actor: Any) -> frozenset[Role]:
    from casino.people.services import roles_of

    return roles_of(actor)


def pack_cut(*, actor: Any, pack_id: int, cut_by: str, burn: list[str] | None = None) -> Pack:
    """The galerie cuts with a blank card; burned cards are set aside; play may begin.

    A burned card the pack cannot hold is refused like any foreign card: recorded, then raised.
    """
    require_role(actor, Role.TAILLEUR, act=_("présenter la coupe"))
    with transaction.atomic():
        pack = _lock(pack_id)
        _require_state(pack, PackState.OPENED, PackState.PASSED, act=_("couper"))
        shift = _at_table(pack, actor, Duty.Post.TAILLEUR, act=_("présenter la coupe"))
        shuffles = _shuffles_since_last_deal(pack)
        if not shuffles or shuffles[-1].details.get("by") != "tailleur":
            raise ShuffleOrderViolated(
                _("le tailleur mêle en dernier, après les croupiers, avant la coupe"),
                where="shuffles",
            )
        if not any(s.details.get("by") == "croupier" for s in shuffles):
            raise ShuffleOrderViolated(_("les croupiers mêlent d'abord"), where="shuffles")
        cut_by = cut_by.strip()
        if not cut_by:
            raise ShuffleOrderViolated(_("un membre du public coupe : nommez-le"), where="cut_by")
        rules = shift.rules()
        burned = [_card_code(code, f"burn[{i}]") for i, code in enumerate(burn or [])]
        if len(burned) != rules.burn:
            raise ShuffleOrderViolated(
                _("le règlement %(reglement)s brûle %(burn)s carte(s), pas %(burned)s")
                % {"reglement": rules.name, "burn": rules.burn, "burned": len(burned)},
                where="burn",
            )
        # The cut begins a new taille: every card of the pack is in the talon again.
        taille = current_taille(pack) + 1
        laid = Counter(burned)
        foreign = next((c for c in burned if laid[c] > composition(pack)[card(c)]), None)
        if foreign is not None:
            refused = _foreign(pack, actor, shift, foreign, composition(pack)[card(foreign)])
        else:
            _record(
                pack,
                actor,
                PackEvent.Kind.CUT,
                to_state=PackState.IN_PLAY,
                table=shift.table,
                shift=shift,
                person=cut_by,
            )
            if burned:
                _lay(pack, actor, shift, burned, burned_cards=True, taille=taille)
                _record(
                    pack,
                    actor,
                    PackEvent.Kind.BURNED,
                    table=shift.table,
                    shift=shift,
                    details={"cards": burned},
                )
            return pack
    raise refused


# --- at a cercle table: the players shuffle and cut, the croupier records ----------------------------


def _at_cercle(pack: Pack, actor: Any, act: str) -> Shift:
    """The séance open where the pack is, at a cercle table, with the actor on duty there as a
    croupier. Checked by these acts themselves, not only by the game's act that calls them: each
    is a service of its own, which a croupier on duty elsewhere (or relieved) could call, and at a
    banking table it would put a pack in play without the tailleur's shuffle and cut
    (``pack_cut``), or lay cards outside a round."""
    shift = _at_table(pack, actor, Duty.Post.CROUPIER, act=act)
    if game_module(shift.table.game).tailleur:
        raise WrongGame(
            _("%(act)s : à %(table)s le tailleur mêle en dernier, présente la coupe et donne")
            % {"act": act, "table": shift.table},
            where="pack",
        )
    return shift


@transaction.atomic
def pack_shuffled_and_cut(*, actor: Any, pack_id: int, shuffled_by: str, cut_by: str) -> Pack:
    """At a cercle (Alliance) the dealer, a player, shuffles and the player on his left cuts,
    before every deal; the croupier on duty records both, and the pack is in play for one deal
    (a taille of the pack). The game's act has checked who may shuffle and cut."""
    act = _("enregistrer le mélange et la coupe")
    require_role(actor, Role.CROUPIER, act=act)
    pack = _lock(pack_id)
    _require_state(pack, PackState.OPENED, PackState.PASSED, act=_("mêler"))
    shift = _at_cercle(pack, actor, act)
    _require_talon_counted(pack, _("mêler"))
    _record(
        pack,
        actor,
        PackEvent.Kind.SHUFFLED,
        table=shift.table,
        shift=shift,
        person=shuffled_by,
        details={"by": "player"},
    )
    _record(
        pack,
        actor,
        PackEvent.Kind.CUT,
        to_state=PackState.IN_PLAY,
        table=shift.table,
        shift=shift,
        person=cut_by,
    )
    return pack


def cards_dealt(*, actor: Any, pack_id: int, codes: list[str], shift: Shift) -> list[CardLaid]:
    """A whole deal's cards, in dealing order, recorded by the croupier on duty at a cercle (the
    game's act has checked the deal). A card the pack cannot hold in this taille is refused and
    the refusal committed before the error, as ``card_lay`` does."""
    act = _("enregistrer la donne")
    require_role(actor, Role.CROUPIER, act=act)
    codes = [_card_code(code, f"cards[{i}]") for i, code in enumerate(codes)]
    with transaction.atomic(savepoint=False):
        pack = _lock(pack_id)
        _require_state(pack, PackState.IN_PLAY, act=_("donner"))
        here = _at_cercle(pack, actor, act)
        if here.pk != shift.pk:  # the cards of one séance's pack are not another séance's
            raise Conflict(
                _("%(act)s : le jeu %(pack)s est en service à la séance %(here)s, pas %(shift)s")
                % {"act": act, "pack": pack.seal_number, "here": here.pk, "shift": shift.pk},
                where="shift",
            )
        refused, done = _lay(
            pack, actor, shift, codes, burned_cards=False, taille=current_taille(pack)
        )
        if refused is None:
            return done
    raise refused


def _card_code(code: Any, where: str) -> str:
    try:
        return str(card(code))
    except IllegalCard as exc:
        raise NotACard(game_message(exc), where=where) from None


def _laid_counts(pack: Pack, taille: int) -> Counter[str]:
    """The cards out of the pack in that taille (laid or burned)."""
    return Counter(pack.cards_laid.filter(taille=taille).values_list("card", flat=True))


def _lay(
    pack: Pack,
    actor: Any,
    shift: Shift,
    codes: list[str],
    *,
    burned_cards: bool,
    taille: int,
    coup_id: int | None = None,
) -> tuple[CardRefused | None, list[CardLaid]]:
    """Lay cards in order; stop at the first foreign card and return its refusal (not raised)
    with the cards laid before it. The pack's integrity is counted per taille. Several cards at
    once (a cercle's deal, the cards burned at the cut); a card at a time is ``card_lay``'s, which
    counts the same in the database (``shoes_lay_card``)."""
    holds = composition(pack)
    laid = _laid_counts(pack, taille)
    last = pack.cards_laid.order_by("-seq").values_list("seq", flat=True).first() or 0
    # The cards up to the first foreign one are written in one statement (a cercle's deal is 52
    # cards: 52 round trips were a tenth of its statements), then that card's refusal.
    cards: list[CardLaid] = []
    foreign = None
    for code in codes:
        if laid[code] + 1 > holds[card(code)]:
            foreign = code
            break
        last += 1
        laid[code] += 1
        cards.append(
            CardLaid(
                pack=pack,
                seq=last,
                taille=taille,
                card=code,
                burned=burned_cards,
                at=clock.now(),
                actor=actor,
                shift=shift,
                coup_id=coup_id,
            )
        )
    done = _INSERT_CARD.insert_all(cards)
    if foreign is None:
        return None, done
    return _foreign(pack, actor, shift, foreign, laid[foreign]), done


def _foreign(pack: Pack, actor: Any, shift: Shift, code: str, already: int) -> CardRefused:
    holds = composition(pack)[card(code)]
    message = (
        f"{code} refused: pack {pack.seal_number} holds it {holds} time(s) and "
        f"{already} already came out; a foreign card"
    )
    _record(
        pack,
        actor,
        PackEvent.Kind.FOREIGN_CARD,
        table=shift.table,
        shift=shift,
        details={"card": code, "pack_holds": holds, "already_laid": already},
    )
    anomaly_raise(
        detector="foreign_card",
        severity=Severity.CRITICAL,
        subject=pack,
        summary=message,
        involved=[actor.pk],
        evidence={
            "card": code,
            "pack": pack.seal_number,
            "pack_holds": holds,
            "already_laid": already,
            "shift": shift.pk,
            "table": shift.table.number,
        },
    )
    refused = _(
        "%(card)s refusée : le jeu %(pack)s la contient %(holds)s fois et %(already)s sont déjà "
        "sorties ; une carte étrangère"
    ) % {"card": code, "pack": pack.seal_number, "holds": holds, "already": already}
    return CardRefused(refused, where="code", card=code)


@transaction.atomic
def card_refusal_record(*, actor: Any, pack_id: int, code: str, shift: Shift) -> CardRefused:
    """Record the refusal of a foreign card again, after the act that met it was rolled back as a
    whole (a coup transcribed from paper): the refusal is evidence and must outlive the act."""
    pack = _lock(pack_id)
    code = _card_code(code, "code")
    return _foreign(pack, actor, shift, code, composition(pack)[card(code)])


def card_lay(
    *, actor: Any, pack_id: int, code: str, taille: int, shift: Shift, coup_id: int | None = None
) -> CardLaid:
    """Lay the next card from the pack in a round (the game's act, which has checked the
    tailleur's duty and the round's phase: cards are laid only in a round, a coup or a Pharao
    taille, burned cards only at the cut). A card the pack cannot hold in this taille is refused,
    and the refusal (timeline event and critical ``foreign_card`` anomaly) is committed before the
    error. In a coup (``coup_id``) the card comes back with ``coup_cards``: the coup's cards in
    their order, this one last, read in the same round trip (Trente-et-Quarante's engine replays
    them at every card); None otherwise.
    """
    require_role(actor, Role.TAILLEUR, act=_("poser une carte"))
    code = _card_code(code, "code")
    laying = card(code)
    at = clock.now()
    # Inside the coup's act no savepoint is needed: a refusal is returned, not raised, and any
    # other error rolls the whole act back.
    pack_id = int(pack_id)  # an id as the ORM takes it, text or number
    with transaction.atomic(savepoint=False):
        # The pack locked, its figures read and the card written in one round trip, where they
        # were three statements for every card of every game (issue 17, tenth round).
        ((_pack_state, laid_id, seq, already, coup_cards),) = run(
            "SELECT * FROM shoes_lay_card(%s, %s, %s, %s, %s, %s, %s, %s)",
            [
                pack_id,
                code,
                taille,
                Jsonb({kind: composition_of(kind)[laying] for kind in PackKind}),
                at,
                actor.pk,
                shift.pk,
                coup_id,
            ],
        )
        if laid_id is not None:
            laid = CardLaid(
                pk=laid_id,
                pack_id=pack_id,
                seq=seq,
                taille=taille,
                card=code,
                burned=False,
                at=at,
                actor=actor,
                shift=shift,
                coup_id=coup_id,
            )
            laid._state.adding, laid._state.db = False, USING
            laid.coup_cards = coup_cards
            return laid
        # Nothing laid: why, with the pack, locked by now if it exists.
        pack = _lock(pack_id)
        _require_state(pack, PackState.IN_PLAY, act=_("poser une carte"))
        refused = _foreign(pack, actor, shift, code, already)
    raise refused


@transaction.atomic
def cards_pass(
    *,
    actor: Any,
    pack_id: int,
    undealt: list[str],
    method: TalonCount.Method | str = TalonCount.Method.COUNTED,
) -> TalonCount:
    """ "Messieurs, les cartes passent": the taille is over (RULES.md 1.3), and the tailleur
    records the undealt cards of the talon, the next card to deal first: ``scanned`` in the order
    they lie, or ``counted`` by hand and listed (then the order is only the listing's).

    On a pack in play this is the announcement and the count in one act. When the engine ended
    the taille at a coup's settlement (``taille_ends``: the count rule, the cut card, the cards
    run out) the pack is already passed and this act records the count. Either way the talon is
    counted once per taille, before it is shuffled again or leaves the table. A count that does
    not reconcile with the pack is recorded as counted, with critical ``missing_card`` /
    ``extra_card`` anomalies naming the cards; a code that is no card refuses the whole act.
    """
    require_role(actor, Role.TAILLEUR, act=_("annoncer que les cartes passent"))
    pack = _lock(pack_id)
    _require_state(pack, PackState.IN_PLAY, PackState.PASSED, act=_("faire passer les cartes"))
    shift = _at_table(pack, actor, Duty.Post.TAILLEUR, act=_("annoncer que les cartes passent"))
    _no_round_open(pack, _("faire passer les cartes"))
    taille = current_taille(pack)
    done = pack.talon_counts.filter(taille=taille).select_related("counted_by").first()
    if done is not None:
        raise TalonCounted(
            _(
                "les cartes restantes de la taille %(taille)s du jeu %(seal)s ont été "
                "enregistrées par %(by)s à %(at)s"
            )
            % {
                "taille": taille,
                "seal": pack.seal_number,
                "by": done.counted_by,
                "at": shown.hour(done.at, seconds=True),  # the casino's hour, not UTC's
            },
            where="state",
        )
    try:
        method = TalonCount.Method(method)
    except ValueError:
        raise CountInvalid(
            _("%(method)r : les cartes restantes sont lues (scanned) ou comptées (counted)")
            % {"method": method},
            where="method",
        ) from None
    if not isinstance(undealt, list):
        raise CountInvalid(
            _("les cartes restantes sont une liste de codes de cartes"), where="undealt"
        )
    codes = [_card_code(code, f"undealt[{i}]") for i, code in enumerate(undealt)]
    # What the talon must hold: the pack less every card out of it in this taille.
    expected = Counter({str(c): n for c, n in composition(pack).counts.items()})
    expected.subtract(_laid_counts(pack, taille))
    expected = +expected
    left = sum(expected.values())
    counted = Counter(codes)
    missing = dict(sorted((expected - counted).items()))
    extra = dict(sorted((counted - expected).items()))
    talon = TalonCount.objects.create(
        pack=pack,
        taille=taille,
        at=clock.now(),
        counted_by=actor,
        shift=shift,
        method=method,
        cards=codes,
        expected=left,
        missing=missing,
        extra=extra,
    )
    details = {
        "taille": taille,
        "cards_left": left,
        "talon": talon.pk,
        "method": method.value,
        "counted": len(codes),
        "missing": missing,
        "extra": extra,
    }
    passing = pack.state == PackState.IN_PLAY
    _record(
        pack,
        actor,
        PackEvent.Kind.PASSED if passing else PackEvent.Kind.TALON_COUNTED,
        to_state=PackState.PASSED if passing else None,
        table=shift.table,
        shift=shift,
        details=details,
        evidence={"cards": codes},
    )
    for detector, cards in (("missing_card", missing), ("extra_card", extra)):
        if cards:
            named = ", ".join(f"{code} x{n}" for code, n in cards.items())
            anomaly_raise(
                detector=detector,
                severity=Severity.CRITICAL,
                subject=pack,
                summary=f"pack {pack.seal_number}, taille {taille}: "
                f"{detector.replace('_', ' ')} {named} in the undealt cards when the cards passed",
                evidence={
                    "pack": pack.seal_number,
                    "taille": taille,
                    "count": "pass",
                    "talon": talon.pk,
                    "cards": cards,
                    "expected": left,
                    "counted": len(codes),
                    "table": shift.table.number,
                    "shift": shift.pk,
                },
                involved=[actor.pk],  # the tailleur who counted does not review his count
                dedup_key=f"{detector}:{pack.pk}:taille:{taille}",
            )
    return talon


def _require_talon_counted(pack: Pack, act: str) -> None:
    """Before a passed talon is shuffled into the next taille or leaves the table, its undealt
    cards are recorded (a talon the engine ended at a settlement is passed, not yet counted)."""
    if pack.state != PackState.PASSED:
        return
    taille = current_taille(pack)
    if pack.talon_counts.filter(taille=taille).exists():
        return
    left, _codes = cards_left(pack)
    if left == 0:  # an exhausted talon: nothing is undealt, nothing to count
        return
    raise TalonNotCounted(
        _(
            "%(act)s : les %(left)s cartes restantes de la taille %(taille)s du jeu %(seal)s ne "
            "sont pas enregistrées ; le tailleur fait d'abord passer les cartes avec elles"
        )
        % {"act": act, "left": left, "taille": taille, "seal": pack.seal_number},
        where="state",
    )


@transaction.atomic
def replacement_demand(*, actor: Any, pack_id: int, demanded_by: str, side: str) -> Pack:
    """The players or the bank demand a new sealed pack: the old one is withdrawn, intact in its
    history; a verified new one is then opened at the table (``pack_open``)."""
    require_role(
        actor, Role.CHEF_DE_PARTIE, Role.TAILLEUR, act=_("enregistrer une demande de cartes neuves")
    )
    if side not in ("players", "bank"):
        raise ShuffleOrderViolated(
            _("%(side)r : la demande vient des joueurs ou de la banque") % {"side": side},
            where="side",
        )
    demanded_by = demanded_by.strip()
    if not demanded_by:
        raise ShuffleOrderViolated(_("nommez qui a demandé le nouveau jeu"), where="demanded_by")
    pack = _lock(pack_id)
    _require_state(pack, PackState.PASSED, act=_("remplacer"))
    shift = _at_table(
        pack,
        actor,
        Duty.Post.CHEF_DE_PARTIE,
        Duty.Post.TAILLEUR,
        act=_("enregistrer une demande de cartes neuves"),
    )
    _require_talon_counted(pack, _("remplacer"))
    _record(
        pack,
        actor,
        PackEvent.Kind.REPLACEMENT_DEMANDED,
        table=shift.table,
        shift=shift,
        person=demanded_by,
        details={"side": side},
    )
    _record(
        pack,
        actor,
        PackEvent.Kind.WITHDRAWN,
        to_state=PackState.WITHDRAWN,
        table=shift.table,
        shift=shift,
    )
    return pack


@transaction.atomic
def pack_retire(*, actor: Any, pack_id: int, counted: dict[str, int]) -> Reconciliation:
    """Count the cards back: per card, laid + burned + counted must equal the pack. Any
    difference raises a critical ``missing_card`` or ``extra_card`` anomaly naming the cards."""
    require_role(actor, Role.CHEF_DE_PARTIE, act=_("retirer un jeu"))
    pack = _lock(pack_id)
    _require_state(pack, PackState.IN_PLAY, PackState.PASSED, PackState.WITHDRAWN, act=_("retirer"))
    _no_round_open(pack, _("retirer"))
    # A passed talon whose undealt cards were never recorded may still be retired: this count
    # takes every card back, and a pack must never be stuck at a table for want of a tailleur.
    opened_in = current_shift(pack)
    if opened_in is not None and opened_in.table.shifts.filter(closed_at__isnull=True).exists():
        # At a table in séance the chef de partie on duty there counts the pack back; a pack
        # left at a closed table is counted back in the card room by a chef de partie.
        _at_table(pack, actor, Duty.Post.CHEF_DE_PARTIE, act=_("retirer un jeu"))
    if not isinstance(counted, dict):
        raise CountInvalid(
            _("le compte est un objet de codes de cartes et de nombres"), where="counted"
        )
    counts: Counter[str] = Counter()
    for raw, number in counted.items():
        code = _card_code(raw, f"counted.{raw}")
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise CountInvalid(
                _("%(number)r n'est pas un compte") % {"number": number}, where=f"counted.{raw}"
            )
        if code in counts:
            raise CountInvalid(
                _("%(card)s est comptée deux fois (aussi comme %(raw)r)")
                % {"card": code, "raw": raw},
                where=f"counted.{raw}",
            )
        counts[code] = number
    # Every card once: those out of the pack in its last taille, and those counted back.
    accounted = _laid_counts(pack, current_taille(pack)) + counts
    expected = Counter({str(c): n for c, n in composition(pack).counts.items()})
    missing = {code: n for code, n in sorted((expected - accounted).items())}
    extra = {code: n for code, n in sorted((accounted - expected).items())}
    reconciliation = Reconciliation.objects.create(
        pack=pack,
        at=clock.now(),
        counted_by=actor,
        counted=dict(sorted(counts.items())),
        missing=missing,
        extra=extra,
    )
    shift = current_shift(pack)
    _record(
        pack,
        actor,
        PackEvent.Kind.RETIRED,
        to_state=PackState.RETIRED,
        table=shift.table if shift else None,
        shift=shift,
        details={"counted": sum(counts.values()), "missing": missing, "extra": extra},
    )
    for detector, cards in (("missing_card", missing), ("extra_card", extra)):
        if cards:
            named = ", ".join(f"{code} x{n}" for code, n in cards.items())
            anomaly_raise(
                detector=detector,
                severity=Severity.CRITICAL,
                subject=pack,
                summary=f"pack {pack.seal_number}: {detector.replace('_', ' ')} {named}",
                evidence={"pack": pack.seal_number, "cards": cards},
                dedup_key=f"{detector}:{pack.pk}",
            )
    return reconciliation


@transaction.atomic
def pack_destroy(*, actor: Any, pack_id: int, remarks: str = "") -> Pack:
    """Destruction, witnessed by a commissioner, only after the cards were counted back."""
    require_role(actor, Role.COMMISSAIRE, act=_("assister à la destruction d'un jeu"))
    pack = _lock(pack_id)
    _require_state(pack, PackState.RETIRED, PackState.REJECTED, act=_("détruire"))
    if pack.state == PackState.RETIRED and not Reconciliation.objects.filter(pack=pack).exists():
        raise IllegalPackState(_("un jeu n'est détruit qu'après son rapprochement"), where="state")
    _record(
        pack,
        actor,
        PackEvent.Kind.DESTROYED,
        to_state=PackState.DESTROYED,
        details={"remarks": remarks},
    )
    return pack


def cards_laid_in(pack_id: int, taille: int) -> list[str]:
    """The cards laid (not burned) in one taille of the pack, in the order laid: a Pharao
    taille's, a cercle deal's."""
    return list(
        CardLaid.objects.filter(pack_id=pack_id, taille=taille, burned=False)
        .order_by("seq")
        .values_list("card", flat=True)
    )


def cards_left(pack: Pack) -> tuple[int, list[str]]:
    """How many cards the talon still holds, and their codes (composition less those laid and
    burned in the current taille)."""
    left = Counter({str(c): n for c, n in composition(pack).counts.items()})
    # Asked at every settlement (is the taille over?): one fixed statement, the taille and the
    # cards out of it counted by the database, where the ORM built and compiled a count and a
    # list of every card laid (issue 17's profile).
    rows = run(
        "SELECT card, count(*) FROM shoes_cardlaid WHERE pack_id = %s AND taille = "
        "(SELECT count(*) FROM shoes_packevent WHERE pack_id = %s AND kind = %s) "
        "GROUP BY card",
        [pack.pk, pack.pk, PackEvent.Kind.CUT.value],
    )
    left.subtract(dict(rows))
    codes = [code for code, n in left.items() for _ in range(max(n, 0))]
    return len(codes), codes


def taille_ends(*, actor: Any, pack: Pack, reason: str) -> None:
    """The floor's call when the engine says the taille is over (no role check: the act that
    ended it was checked). Same record as the tailleur's "les cartes passent", without the
    count: the tailleur on duty records the undealt cards next (``cards_pass`` on the passed
    pack), before the talon is shuffled again or leaves the table."""
    shift = current_shift(pack)
    assert shift is not None
    left, _codes = cards_left(pack)
    _record(
        pack,
        actor,
        PackEvent.Kind.PASSED,
        to_state=PackState.PASSED,
        table=shift.table,
        shift=shift,
        details={"cards_left": left, "reason": reason},
    )
