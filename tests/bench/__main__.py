"""``make bench``: every benchmark, one after the other, on a fresh database."""

from __future__ import annotations

import sys

from tests.bench.harness import use_bench_database


def main() -> int:
    from tests.bench import bench_games

    print("# make bench: medians of repeated runs, ratios measured in the same run")
    bench_games.run()  # pure engines first: no database needed
    use_bench_database()
    from tests.bench import bench_api, bench_audit, bench_floor, bench_reports, bench_restart

    bench_floor.run()
    bench_api.run()
    bench_restart.run()
    bench_reports.run()
    bench_audit.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
