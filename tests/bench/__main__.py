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
    at_start = machine()

    def run(name: str) -> None:
        importlib.import_module(f"tests.bench.bench_{name}").run()
        after(name, at_start)

    if "games" in chosen:  # pure engines first: no database needed
        run("games")
    if set(chosen) - {"games"}:
        use_bench_database()
    for name in chosen:
        if name != "games":
            run(name)
    return 0


def fixed_loop() -> float:
    """The CPU seconds of a fixed pure-Python loop (1,000,000 multiply-adds), median of 7."""
    import statistics
    import time

    def probe() -> float:
        started = time.process_time()
        total = 0
        for i in range(1_000_000):
            total += i * i
        return time.process_time() - started

    return statistics.median(probe() for _ in range(7))


def after(name: str, at_start: float) -> None:
    """The fixed loop again after each benchmark: this machine's processor is shared, and ran the
    same loop from 42 to 78 ms within one evening (issue 17, eleventh round), so an absolute
    figure (milliseconds, requests per second) is read beside the speed it was measured at."""
    from tests.bench.harness import report

    report(
        f"The machine after {name}",
        [("the fixed loop", f"{fixed_loop() * 1000:.1f} ms (at the start: {at_start * 1000:.1f})")],
    )


def machine() -> float:
    """What the figures were measured on. The aims in milliseconds and requests per second are
    absolute: the same code gives other figures on a slower processor, as the ratios do less.
    Returns the fixed loop's seconds."""
    import os
    import platform
    from pathlib import Path

    from tests.bench.harness import report

    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    model = next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")),
        platform.processor() or "?",
    )
    seconds = fixed_loop()
    report(
        "This machine",
        [
            ("processor", f"{model}, {os.cpu_count()} cores"),
            ("Python", platform.python_version()),
            (
                "a fixed pure-Python loop (1,000,000 multiply-adds, CPU)",
                f"{seconds * 1000:.1f} ms (median of 7): compare runs on other machines by it",
            ),
        ],
    )
    return seconds


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
