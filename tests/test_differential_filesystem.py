"""The env synthesized from the MCP filesystem server's docs agrees with the real server
(tests/differential_fs.py: the same calls on both, effects on the tree and results compared)."""

from __future__ import annotations

from collections import Counter

from differential_fs import SCENARIO, run_filesystem_scenarios


def test_synthesized_filesystem_agrees_with_the_real_server():
    rows = run_filesystem_scenarios()
    assert len(rows) == len(SCENARIO) >= 60
    tools = {t for t, _, _ in rows}
    assert len(tools) == 14, sorted(tools)  # every documented tool is exercised
    agree = sum(ok for _, ok, _ in rows)
    differs = [f"{t}: {d}" for t, ok, d in rows if not ok]
    assert agree / len(rows) >= 0.95, "\n".join(differs)
    # each tool on its own, failing calls included, agrees on most calls
    per = Counter(t for t, _, _ in rows)
    ok = Counter(t for t, k, _ in rows if k)
    assert all(ok[t] / per[t] >= 0.75 for t in per), {t: f"{ok[t]}/{per[t]}" for t in per}
