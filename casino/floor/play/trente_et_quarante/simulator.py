"""Trente-et-Quarante played by the simulator (``manage.py simulate``) through the same services
as the table terminals: sealed sixains received, their seals verified by the commissioner, opened,
shuffled and cut; coups dealt from a seeded shuffle with random stakes (refaits, prisoners and
insurance come as the cards fall); at "les cartes passent" the tailleur scans the undealt cards,
the chef de partie counts the sixain back and a new one is opened."""

from __future__ import annotations

import random
from collections import Counter

from django.contrib.auth.models import User

from casino.floor.models import Account, FloatCount, Shift
from casino.floor.play.trente_et_quarante import coups
from casino.floor.services import balance, table_account, transfer_countersign, transfer_record
from casino.games.simulator import cut, random_stakes, shuffled
from shoes import services as packs


def new_pack(staff: dict[str, User], shift: Shift, rng: random.Random) -> list[str]:
    """A sealed sixain through its custody to the cut; its cards in the order they will come."""
    seal = f"SIM-{shift.table.number}-{rng.randrange(10**9):09d}"
    pack = packs.pack_receive(
        actor=staff["caissier"],
        kind="sixain",
        maker="Grimaud",
        maker_pack_numbers="simulated",
        seal_number=seal,
        sealing_authority="Préfecture de police",
        store_location="coffre S",
    )
    packs.pack_store(actor=staff["caissier"], pack_id=pack.pk)
    packs.seal_verify(
        actor=staff["commissaire"], pack_id=pack.pk, seal_number_read=seal, verdict="intact"
    )
    packs.pack_open(actor=staff["chef"], pack_id=pack.pk, shift_id=shift.pk)
    packs.pack_shuffle(actor=staff["croupier"], pack_id=pack.pk)
    packs.pack_shuffle(actor=staff["tailleur"], pack_id=pack.pk)
    packs.pack_cut(actor=staff["tailleur"], pack_id=pack.pk, cut_by="galerie (simulation)")
    cards = shuffled(rng)
    return [str(c) for c in cut(cards, rng.randint(1, len(cards) - 1))]


def play(
    staff: dict[str, User], shift: Shift, rng: random.Random, count: int, per_coup: int
) -> int:
    """``count`` coups at the séance, up to ``per_coup`` stakes each; returns how many."""
    rules = shift.rules()
    talon: list[str] = []
    bank = table_account(shift.table, Account.Kind.BANK)
    # The chef de partie asks the cage for a fill of the float whenever the bank runs below half.
    float_total = FloatCount.objects.get(pk=shift.opening_count_id).total
    for n in range(count):
        if not talon:
            talon = new_pack(staff, shift, rng)
        if balance(bank) < float_total // 2:
            fill = transfer_record(
                actor=staff["caissier"], shift_id=shift.pk, kind="fill", amount=float_total
            )
            transfer_countersign(actor=staff["chef"], transfer_id=fill.pk)
        coup = coups.coup_open(actor=staff["tailleur"], shift_id=shift.pk)
        for s in random_stakes(rng, n, rng.randint(0, per_coup), rules, prefix="p"):
            on_refait = (
                s.on_refait
                if isinstance(s.on_refait, str) or s.on_refait is None
                else f"move:{s.on_refait[1].value}"
            )
            coups.stake_place(
                actor=staff["croupier"],
                coup_id=coup.pk,
                ref=s.id,
                holder=str(rng.randint(1, 9)),
                chance=s.chance.value,
                amount=s.amount,
                insured=s.insured,
                on_refait=on_refait,
            )
        coups.coup_close_betting(actor=staff["tailleur"], coup_id=coup.pk)
        laid = None
        while talon and (laid is None or not laid.coup_complete):
            laid = coups.coup_lay_card(actor=staff["tailleur"], coup_id=coup.pk, code=talon.pop(0))
        result = coups.coup_settle(
            actor=staff["croupier"],
            coup_id=coup.pk,
            spoken="" if rng.random() > 0.02 else "rouge gagne",
        )
        if result.last:
            # Les cartes passent: the tailleur scans the undealt cards in the order they lie,
            # then the sixain is counted back and retired; a new sealed one will be opened for
            # the next coup.
            packs.cards_pass(
                actor=staff["tailleur"], pack_id=coup.pack_id, undealt=talon, method="scanned"
            )
            packs.pack_retire(
                actor=staff["chef"], pack_id=coup.pack_id, counted=dict(Counter(talon))
            )
            talon = []
    return count
