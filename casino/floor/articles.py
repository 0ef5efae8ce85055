"""The posted text of a règlement: numbered articles, French with English alongside, written from
its parameters so that what players read is what the engine applies."""

from __future__ import annotations

from typing import TypedDict

from casino.games.reglement import Reglement


class Article(TypedDict):
    number: str
    fr: str
    en: str


def _amount(minor: int) -> str:
    return f"{minor / 100:.2f}"


def articles_for(r: Reglement, *, correction_approval_threshold: int) -> list[Article]:
    """The articles of the Trente-et-Quarante part of the règlement ``r``, of the cercle's when
    it sets a fee (a règlement posted for a cercle table), and of its disputes."""
    out: list[tuple[str, str]] = [
        (
            "Les mises se font sur rouge, noir, couleur et inverse, dans les limites affichées à la "
            "table. Le gagnant reçoit une somme égale à sa mise.",
            "Stakes are placed on rouge, noir, couleur and inverse, within the limits posted at the "
            "table. A winner is paid even money.",
        ),
        (
            "Dès que la première carte est posée sur le tapis, aucune mise ne peut être faite, "
            "retirée ni changée de chance.",
            "Once the first card lies on the table, no stake may be placed, withdrawn or moved to "
            "another chance.",
        ),
        (
            "Le tailleur tire une première rangée (noir) jusqu'à ce qu'elle dépasse trente points, "
            "puis une seconde (rouge). La rangée la plus basse gagne. La couleur de la première "
            "carte décide de couleur et inverse.",
            "The tailleur lays a first row (noir) until it exceeds thirty points, then a second "
            "(rouge). The lower row wins. The colour of the first card decides couleur and inverse.",
        ),
        (
            "Points égaux de 32 à 40 : après, le coup est nul.",
            "Equal points from 32 to 40: après, the coup decides nothing.",
        ),
    ]
    if r.refait_mode == "prison":
        refait = (
            "Refait de trente et un : toutes les mises vont en prison.",
            "Refait (31 and 31): every stake goes to prison.",
        )
    elif r.refait_mode == "half":
        refait = (
            "Refait de trente et un : la banque prend la moitié de chaque mise.",
            "Refait (31 and 31): the bank takes half of every stake.",
        )
    else:
        default = "la prison" if r.refait_default == "prison" else "l'abandon de la moitié"
        default_en = "prison" if r.refait_default == "prison" else "giving up half"
        refait = (
            "Refait de trente et un : chaque joueur choisit d'abandonner la moitié de sa "
            "mise, de la mettre en prison ou de la déplacer en prison sur une autre chance ; "
            f"sans choix, {default}.",
            "Refait (31 and 31): each player chooses to give up half of the stake, to put it "
            "in prison, or to move it to prison on another chance; without a choice, "
            f"{default_en}.",
        )
    out.append(refait)
    if r.prison_repeat == "halve":
        out.append(
            (
                "Une mise en prison est libérée, sans gain, si sa chance gagne, et perdue si "
                "elle perd ; un nouveau refait la réduit de moitié.",
                "An imprisoned stake is freed, without winnings, if its chance wins and lost if "
                "it loses; another refait halves it.",
            )
        )
    else:
        out.append(
            (
                f"Une mise en prison doit gagner autant de fois que le refait est sorti ; "
                f"au-delà de {r.max_prison_level} prisons elle est perdue.",
                "An imprisoned stake must win as many times as the refait came out; beyond "
                f"{r.max_prison_level} prisons it is lost.",
            )
        )
    if r.end_rule == "count":
        out.append(
            (
                f"Le coup n'y est plus quand il reste moins de {r.end_min_cards} cartes ou "
                f"moins de {r.end_min_points} points : les cartes passent.",
                f"The cards pass when fewer than {r.end_min_cards} cards or "
                f"{r.end_min_points} points remain.",
            )
        )
    elif r.end_rule == "cut_card":
        out.append(
            (
                f"Une carte rouge est placée avant les {r.cut_card_from_end} dernières "
                "cartes ; quand elle sort, le coup en cours est nul et la taille finit.",
                f"A red card lies before the last {r.cut_card_from_end} cards; when it comes "
                "out, the coup in progress is void and the taille ends.",
            )
        )
    else:
        out.append(
            (
                "On tire jusqu'à épuisement des cartes ; un coup inachevé est nul.",
                "Cards are dealt until they run out; an unfinished coup is void.",
            )
        )
    if r.refait_void_on_last_coup:
        out.append(
            (
                "Un refait au dernier coup de la taille est nul.",
                "A refait on the last coup of the taille is void.",
            )
        )
    if r.prison_at_end == "refund_half":
        out.append(
            (
                "À la fin de la taille, les mises en prison sont remboursées de moitié.",
                "At the end of the taille, imprisoned stakes are refunded half.",
            )
        )
    if r.insurance:
        minimum = (
            f" pour une mise d'au moins {_amount(r.insurance_min_stake)}"
            if r.insurance_min_stake
            else ""
        )
        minimum_en = (
            f" on a stake of at least {_amount(r.insurance_min_stake)}"
            if r.insurance_min_stake
            else ""
        )
        out.append(
            (
                f"Assurance contre le refait{minimum} : {_amount(r.insurance_premium)} par "
                f"tranche commencée de {_amount(r.insurance_unit)}, acquis à la banque sauf "
                "coup nul.",
                f"Insurance against the refait{minimum_en}: {_amount(r.insurance_premium)} per "
                f"started {_amount(r.insurance_unit)}, the bank's except on a void coup.",
            )
        )
    if r.cercle_fee:
        out += _cercle(r)
    out.append(_watch())
    out.append(
        (
            "Toute erreur, de la banque ou d'un joueur, est examinée et, en cas de "
            "contestation, réglée selon le présent règlement par le chef de partie, puis par "
            "le commissaire de police.",
            "Every error, by the bank or a player, is examined and, when contested, settled "
            "under this règlement by the chef de partie, then by the police commissioner.",
        )
    )
    out.append(
        (
            "Une correction qui s'écarte du calcul selon le règlement, ou qui déplace plus de "
            f"{_amount(correction_approval_threshold)} en tout, n'est passée qu'une fois "
            "approuvée par un second approbateur, le directeur ou le commissaire de police.",
            "A correction that departs from the computation under this règlement, or that moves "
            f"more than {_amount(correction_approval_threshold)} in all, is posted only once a "
            "second approver, the director or the police commissioner, has approved it.",
        )
    )
    return [Article(number=str(i), fr=fr, en=en) for i, (fr, en) in enumerate(out, start=1)]


def _watch() -> tuple[str, str]:
    """The statistical detectors' posted threshold (docs/detectors.md)."""
    from casino.detectors.thresholds import ALPHA

    return (
        "La maison examine après chaque séance et chaque journée les résultats des tables, les "
        "cartes de chaque sixain et les actes du personnel et des joueurs ; ce que le hasard "
        f"n'explique pas au seuil de {ALPHA:g} par examen est signalé au contrôle interne.",
        "After every séance and every day the house examines the tables' results, the cards of "
        "every sixain and the acts of staff and players; what chance does not explain at the "
        f"threshold of {ALPHA:g} per examination is reported to internal audit.",
    )


def _cercle(r: Reglement) -> list[tuple[str, str]]:
    """The cercle (Alliance, RULES.md §3): the house banks nothing, takes its fee, and watches
    for players who play together (docs/detectors.md)."""
    from casino.games.alliance_collusion import COLLUSION_ALPHA

    values = r.alliance_values
    return [
        (
            "Au cercle, la maison ne tient pas la banque : les marques se règlent entre les "
            "joueurs, à la valeur de la marque affichée à la table (alliance "
            f"{values['alliance']}, lever {values['lever']}, lever forcé {values['lever_forced']},"
            f" solo {values['solo']} marques, doublées en couleur).",
            "At the cercle the house holds no bank: marks are settled between the players at the "
            f"mark value posted at the table (alliance {values['alliance']}, lever "
            f"{values['lever']}, forced lever {values['lever_forced']}, solo {values['solo']} "
            "marks, doubled in couleur).",
        ),
        (
            f"La maison prélève {_amount(r.cercle_fee)} de chaque joueur à chaque donne jouée "
            "jusqu'au bout ; la cagnotte est comptée à la fermeture de la séance.",
            f"The house takes {_amount(r.cercle_fee)} from each player of every deal played "
            "out; the fee box is counted when the séance closes.",
        ),
        (
            "Le donneur mêle, le joueur à sa gauche coupe ; le croupier enregistre chaque donne, "
            "chaque annonce et chaque carte jouée.",
            "The dealer shuffles, the player on his left cuts; the croupier records every deal, "
            "call and card played.",
        ),
        (
            "La maison examine après chaque séance les alliances et les marques échangées entre "
            "chaque paire de joueurs ; ce que le hasard n'explique pas au seuil de "
            f"{COLLUSION_ALPHA:g} par séance est signalé au contrôle interne.",
            "After every séance the house examines the alliances and the marks exchanged "
            "between every pair of players; what chance does not explain at the threshold of "
            f"{COLLUSION_ALPHA:g} per séance is reported to internal audit.",
        ),
    ]
