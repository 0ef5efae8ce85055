"""What the fault suite's floor starts from, made through the services as a house makes it:
``python -m tests.reliability.seed OUT.json [--play-tables N] [--pairs N]`` in the system's
environment (its application role).

- play tables 1..N, each with its own chef de partie, tailleur and croupier and a sealed sixain
  whose seal the commissioner found intact: a terminal opens, plays and closes a séance there;
- for the concurrent duty openings, per pair two tables with a countersigned opening count, two
  chefs de partie, two croupiers and one tailleur that both will name.

Writes the usernames, ids and API tokens as JSON: the tests act over HTTP only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--play-tables", type=int, default=6)
    parser.add_argument("--pairs", type=int, default=50)
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "casino.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User

    from casino import clock
    from casino.floor.models import PostedReglement
    from casino.floor.services import (
        count_countersign,
        count_record,
        reglement_load_presets,
        table_create,
    )
    from casino.people.roles import Role
    from casino.people.services import people_bootstrap, staff_create
    from casino.people.tokens import token_issue
    from shoes import services as packs

    people_bootstrap(
        directeur=("directeur", "Directeur"),
        commissaire=("commissaire", "Commissaire"),
        inspecteur=("inspecteur", "Inspecteur"),
    )
    directeur = User.objects.get(username="directeur")
    commissaire = User.objects.get(username="commissaire")
    tokens: dict[str, str] = {}

    def person(username: str, role: Role) -> Any:
        user = staff_create(actor=directeur, username=username, full_name=username, roles=[role])
        tokens[username] = token_issue(user=user)[1]
        return user

    for user in (directeur, commissaire):
        tokens[user.username] = token_issue(user=user)[1]
    caissier = person("caissier", Role.CAISSIER)
    reglement_load_presets(actor=commissaire, effective_from=clock.now().date())
    posted = PostedReglement.objects.get(name="trente-et-quarante-modern")

    def table(number: int) -> Any:
        return table_create(
            actor=directeur,
            number=number,
            game="trente-et-quarante",
            reglement_id=posted.pk,
            min_stake=500,
            max_stake=600_000,
        )

    def sixain(seal: str) -> int:
        pack = packs.pack_receive(
            actor=caissier,
            kind="sixain",
            maker="Grimaud",
            maker_pack_numbers="-",
            seal_number=seal,
            sealing_authority="Préfecture de police",
            store_location="coffre A",
        )
        packs.pack_store(actor=caissier, pack_id=pack.pk)
        packs.seal_verify(
            actor=commissaire, pack_id=pack.pk, seal_number_read=seal, verdict="intact"
        )
        return int(pack.pk)

    play = []
    for number in range(1, args.play_tables + 1):
        table(number)
        play.append(
            {
                "table": number,
                "chef": person(f"chef{number}", Role.CHEF_DE_PARTIE).username,
                "tailleur": person(f"tailleur{number}", Role.TAILLEUR).username,
                "croupier": person(f"croupier{number}", Role.CROUPIER).username,
                "pack": sixain(f"FAULT-{number}"),
            }
        )

    pairs = []
    for n in range(args.pairs):
        tailleur = person(f"pair{n}-tailleur", Role.TAILLEUR)
        sides = []
        for side in range(2):
            number = 1000 + 2 * n + side
            table(number)
            croupier = person(f"pair{n}-croupier{side}", Role.CROUPIER)
            count = count_record(
                actor=croupier, table_id=number_id(number), moment="opening", chips={"10000": 50}
            )
            count_countersign(actor=directeur, count_id=count.pk)
            sides.append(
                {
                    "table": number,
                    "count": count.pk,
                    "chef": person(f"pair{n}-chef{side}", Role.CHEF_DE_PARTIE).username,
                    "croupier": croupier.username,
                }
            )
        pairs.append({"tailleur": tailleur.username, "sides": sides})

    args.out.write_text(json.dumps({"tokens": tokens, "play": play, "pairs": pairs}))
    return 0


def number_id(number: int) -> int:
    from casino.floor.models import Table

    return int(Table.objects.get(number=number).pk)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
