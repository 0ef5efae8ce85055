"""``make bench``: every benchmark, one after the other, on a fresh database.
``make bench BENCH="broker api"``: only those (the module names without ``bench_``)."""

from __future__ import annotations

import sys

from tests.bench.harness import use_bench_database


def main(names: list[str]) -> int:
    import importlib

    every = [
        "games",
        "floor",
        "pharao",
        "alliance",
        "api",
        "pit",
        "restart",
        "broker",
        "reports",
        "audit",
        "detectors",
        "month",
    ]
    unknown = sorted(set(names) - set(every))
    if unknown:
        print(f"no benchmark named {', '.join(unknown)} (there are: {', '.join(every)})")
        return 2
    chosen = [name for name in every if not names or name in names]
    print("# make bench: medians of repeated runs, ratios measured in the same run")
    if "games" in chosen:  # pure engines first: no database needed
        importlib.import_module("tests.bench.bench_games").run()
    if set(chosen) - {"games"}:
        use_bench_database()
    for name in chosen:
        if name != "games":
            importlib.import_module(f"tests.bench.bench_{name}").run()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
