"""The cards of a sixain (docs/detectors.md, The cards of a sixain): when a séance closes, every
taille of a sixain dealt in it is read card by card and tested against an honest shuffle
(``casino.games.sixain_law``): rows at 31 and refaits (the bank's gain), après, the runs of noir
and rouge, and a run of cards repeated from a sixain dealt in the last days (a slug put back
unshuffled). A test below the posted threshold raises one ``cards`` anomaly per taille.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Q

from casino.detectors.frame import Chart, Finding, Link, at_seance_close
from casino.detectors.stats import bonferroni
from casino.detectors.thresholds import ALPHA
from casino.floor.models import Shift
from casino.floor.play.trente_et_quarante.coups import rules_of
from casino.floor.play.trente_et_quarante.models import Coup, CoupPhase
from casino.games import sixain_law as law
from casino.games.cards import card
from casino.games.trente_et_quarante import points
from shoes.models import CardLaid, Pack, PackKind
from shoes.services import composition

DETECTOR = "cards"
SLUG_WINDOW = dt.timedelta(days=2)  # the sixains a slug is looked for in: those dealt since
RESULT_WORDS = {
    "noir": "noir wins",
    "rouge": "rouge wins",
    "apres": "après",
    "refait": "refait",
    "void": "void",
}


def _text(p: float) -> str:
    return f"{p:.3g}"


def _tailles(shift: Shift) -> list[tuple[int, int]]:
    """The (pack, taille) of every sixain taille dealt in the séance, in the order first dealt."""
    seen: dict[tuple[int, int], None] = {}
    for pack_id, taille in (
        Coup.objects.filter(shift=shift, pack__kind=PackKind.SIXAIN)
        .order_by("opened_at", "id")
        .values_list("pack_id", "taille")
    ):
        seen.setdefault((pack_id, taille), None)
    return list(seen)


@dataclass(frozen=True)
class _Dealt:
    """A sixain taille dealt in the window, for the slug: when its first card was laid, its
    name and its cards in order."""

    first_at: dt.datetime
    name: str
    cards: list[str]


def _dealt_since(since: dt.datetime) -> dict[tuple[int, int], _Dealt]:
    """Every sixain taille with cards laid since ``since`` (read through the packs of the
    séances open since then: the index on a pack's cards, not a scan of every card)."""
    recent = Shift.objects.filter(Q(closed_at__isnull=True) | Q(closed_at__gte=since))
    pack_ids = set(
        Coup.objects.filter(shift__in=recent, pack__kind=PackKind.SIXAIN).values_list(
            "pack_id", flat=True
        )
    )
    found: dict[tuple[int, int], _Dealt] = {}
    for pack_id, seal, taille, code, at in (
        CardLaid.objects.filter(pack_id__in=pack_ids, burned=False, at__gte=since)
        .order_by("pack_id", "seq")
        .values_list("pack_id", "pack__seal_number", "taille", "card", "at")
    ):
        key = (pack_id, taille)
        if key not in found:
            found[key] = _Dealt(at, f"{seal} taille {taille}", [])
        found[key].cards.append(code)
    return found


class _Taille:
    """One sixain taille as the floor recorded it: its cards in order, grouped by coup."""

    def __init__(self, pack: Pack, taille: int) -> None:
        self.pack, self.taille = pack, taille
        self.laid = list(
            CardLaid.objects.filter(pack=pack, taille=taille)
            .order_by("seq")
            .values("card", "burned", "coup_id", "actor_id", "at")
        )
        self.coups = {
            c.pk: c
            for c in Coup.objects.filter(pack=pack, taille=taille).select_related("reglement")
        }
        some = next(iter(self.coups.values()))
        self.rules = rules_of(some)
        counts: Counter[int] = Counter()
        for c, n in composition(pack).counts.items():
            counts[points(c, self.rules)] += n
        self.start = dict(counts)
        self.cards = [row["card"] for row in self.laid if not row["burned"]]
        # Consecutive cards of one coup make one dealt coup; burned cards and cards of a
        # cancelled coup leave the talon without being a trial.
        self.dealt: list[law.DealtCoup] = []
        self.coup_of_ref: dict[str, Coup | None] = {}
        self.codes_of_ref: dict[str, list[str]] = {}
        groups: list[tuple[Any, list[dict[str, Any]]]] = []
        for row in self.laid:
            key = (row["coup_id"], row["burned"])
            if groups and groups[-1][0] == key:
                groups[-1][1].append(row)
            else:
                groups.append((key, [row]))
        for n, ((coup_id, burned), rows) in enumerate(groups):
            coup = self.coups.get(coup_id) if coup_id else None
            counted = coup is not None and not burned and coup.phase != CoupPhase.CANCELLED
            ref = str(coup.number) if coup is not None and not burned else f"-{n}"
            self.coup_of_ref[ref] = coup
            self.codes_of_ref[ref] = [r["card"] for r in rows]
            self.dealt.append(
                law.DealtCoup(
                    ref, tuple(points(card(r["card"]), self.rules) for r in rows), counted
                )
            )
        self.tailleurs = sorted(
            {r["actor_id"] for r in self.laid if not r["burned"] and r["actor_id"]}
        )
        self.first_at = min((r["at"] for r in self.laid), default=None)

    @property
    def name(self) -> str:
        return f"sixain {self.pack.seal_number} taille {self.taille}"


def _finding(t: _Taille, tests: list[law.Test], fired: list[law.Test], alpha: float) -> Finding:
    figures = law.coup_figures(t.start, t.dealt)
    worst = min(fired, key=lambda x: x.p_value)
    names = ", ".join(x.name for x in fired)
    rows = [
        [
            f.ref,
            " ".join(t.codes_of_ref[f.ref][: len(f.noir)]),
            " ".join(t.codes_of_ref[f.ref][len(f.noir) : len(f.noir) + len(f.rouge)]),
            f.noir_total or "-",
            f.rouge_total or "-",
            RESULT_WORDS[f.result] if f.counted else "not counted",
            f"{f.p_noir_31:.4f}",
            f"{f.p_rouge_31:.4f}" if f.noir_total else "-",
            f"{f.p_rouge_same:.4f}" if f.noir_total else "-",
        ]
        for f in figures
        if not f.ref.startswith("-")
    ]
    evidence_refs = _evidence_refs(worst, figures)
    links = [Link("shoes.pack", t.pack.pk, t.pack.seal_number)] + [
        Link("floor.coup", coup.pk, f"coup {coup.number}")
        for ref in evidence_refs
        if (coup := t.coup_of_ref.get(ref)) is not None
    ]
    quiet = worst.quiet_range(alpha)
    low, high = quiet if quiet is not None else (worst.expected, worst.expected)
    return Finding(
        detector=DETECTOR,
        summary=f"{t.name}: {names} beyond chance (p = {_text(worst.p_value)})",
        rule=(
            "Each taille of a sixain is tested against an honest shuffle: every row against the "
            "exact law of its total given the cards left before it (rows at 31, refaits after a "
            "first row of 31, après after a first row of 32..40, Poisson-binomial tails), the "
            "runs of noir and rouge against their exact law given the counts, and the longest "
            "run of cards repeated in order from a sixain dealt in the last two days."
        ),
        figures=[
            (
                x.name,
                f"observed {x.observed:g}, expected {x.expected:.2f} over {x.trials}, "
                f"p = {_text(x.p_value)}" + (f" ({x.detail})" if x.detail else ""),
            )
            for x in tests
        ],
        threshold=(
            f"p < {_text(alpha)} = ALPHA {ALPHA} / {len(tests)} tests of this run "
            f"(Bonferroni over the tailles of the séance)"
        ),
        p_value=worst.p_value,
        key=f"sixain:{t.pack.pk}:{t.taille}",
        subject=t.pack,
        window=f"taille {t.taille}",
        columns=[
            "coup",
            "noir row",
            "rouge row",
            "noir",
            "rouge",
            "result",
            "P(noir row 31)",
            "P(rouge row 31 | noir row)",
            "P(rouge row = noir | noir row)",
        ],
        rows=rows,
        chart=Chart(
            "band",
            f"{worst.name}: observed against an honest shuffle",
            [worst.name],
            [worst.observed],
            expected=[worst.expected],
            low=[low],
            high=[high],
        ),
        links=links,
        involved=t.tailleurs,
        extra={
            "tests": [
                {"name": x.name, "observed": f"{x.observed:g}", "p_value": _text(x.p_value)}
                for x in tests
            ]
        },
    )


def _evidence_refs(test: law.Test, figures: Sequence[law.CoupFigures]) -> list[str]:
    """The coups that carry the evidence of ``test``."""
    counted = [f for f in figures if f.counted]
    if test.name == "rows_31":
        return [f.ref for f in counted if 31 in (f.noir_total, f.rouge_total)]
    if test.name == "refaits":
        return [f.ref for f in counted if f.result == "refait"]
    if test.name == "apres":
        return [f.ref for f in counted if f.result == "apres"]
    decisive = [f for f in counted if f.result in ("noir", "rouge")]
    if test.name == "longest_run":
        best: list[str] = []
        run: list[str] = []
        for i, f in enumerate(decisive):
            run = [*run, f.ref] if i and f.result == decisive[i - 1].result else [f.ref]
            if len(run) > len(best):
                best = run
        return best
    return [f.ref for f in counted]


def taille_tests(t: _Taille, dealt: dict[tuple[int, int], _Dealt]) -> list[law.Test]:
    """The tests of one taille; for the slug, against the tailles of ``dealt`` begun in the
    ``SLUG_WINDOW`` before it (a slug is the later of the two: the earlier raises nothing)."""
    start = t.first_at
    earlier = {
        d.name: d.cards
        for key, d in dealt.items()
        if start is not None
        and key != (t.pack.pk, t.taille)
        and start - SLUG_WINDOW <= d.first_at < start
    }
    return law.sixain_tests(law.coup_figures(t.start, t.dealt), t.cards, earlier)


@at_seance_close
def sixain_cards(shift: Shift) -> list[Finding]:
    """Every sixain taille dealt in the séance, tested; a finding for each that fails a test."""
    tailles = [_Taille(Pack.objects.get(pk=p), n) for p, n in _tailles(shift)]
    starts = [t.first_at for t in tailles if t.first_at is not None]
    dealt = _dealt_since(min(starts) - SLUG_WINDOW) if starts else {}
    tested = [(t, taille_tests(t, dealt)) for t in tailles if t.dealt]
    count = sum(len(tests) for _, tests in tested)
    alpha = bonferroni(ALPHA, count)
    findings = []
    for t, tests in tested:
        fired = [x for x in tests if x.p_value < alpha]
        if fired:
            findings.append(_finding(t, tests, fired, alpha))
    return findings
