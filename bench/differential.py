"""Agreement between synthesized envs and the real MCP servers they were read from, per tool.

    python bench/differential.py [--only filesystem|memory]

Runs the differential scenarios of tests/differential_fs.py and tests/differential_memory.py
(the same call sequences on the real npm server and on the env forgec synthesizes from its
`tools/list`; effects on state and result shape compared after every call) and prints a
table: calls, agreeing calls and agreement per tool, then the total per server. Needs the
servers (`bash scripts/setup_mcp_servers.sh`). Not a timed test.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

SUITES = {
    "filesystem": ("differential_fs", "run_filesystem_scenarios"),
    "memory": ("differential_memory", "run_memory_scenarios"),
}


def table(server: str, rows: list[tuple[str, bool, str]], secs: float) -> tuple[int, int]:
    per: dict[str, list[bool]] = defaultdict(list)
    for tool, ok, _ in rows:
        per[tool].append(ok)
    print(f"\n{server}  ({secs:.1f} s)")
    print(f"{'tool':28} {'calls':>6} {'agree':>6} {'%':>7}")
    for tool in sorted(per):
        oks = per[tool]
        print(f"{tool:28} {len(oks):6d} {sum(oks):6d} {100 * sum(oks) / len(oks):6.1f}%")
    n, k = len(rows), sum(ok for _, ok, _ in rows)
    print(f"{'total':28} {n:6d} {k:6d} {100 * k / max(n, 1):6.1f}%")
    for tool, ok, detail in rows:
        if not ok:
            print(f"  differs: {tool}: {detail}")
    return n, k


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=sorted(SUITES))
    a = ap.parse_args()
    tot_n = tot_k = 0
    for server, (mod, fn) in SUITES.items():
        if a.only and server != a.only:
            continue
        run = getattr(__import__(mod), fn)
        t0 = time.perf_counter()
        rows = run()
        n, k = table(server, rows, time.perf_counter() - t0)
        tot_n, tot_k = tot_n + n, tot_k + k
    print(f"\nall servers: {tot_k}/{tot_n} calls agree ({100 * tot_k / max(tot_n, 1):.1f}%; goal >= 95%)")


if __name__ == "__main__":
    main()
