"""The env synthesized from the MCP memory server's docs agrees with the real server (>= 95% of calls).

Runs tests/differential_memory.py: the same call sequences (every tool, failures, duplicates,
schema-invalid input) on the npm server and on the env; each call compares errors, the result
against `structuredContent`, and the whole graph afterwards. Needs the real server
(`bash scripts/setup_mcp_servers.sh`); without it the test fails and says so.
"""

from __future__ import annotations

from collections import Counter

from differential_memory import SCENARIOS, run_memory_scenarios

TOOLS = {"create_entities", "create_relations", "add_observations", "delete_entities", "delete_observations",
         "delete_relations", "read_graph", "search_nodes", "open_nodes"}


def test_memory_server_agreement() -> None:
    rows = run_memory_scenarios()
    calls, agree = Counter(t for t, _, _ in rows), Counter(t for t, ok, _ in rows if ok)
    report = "\n".join(f"  {t:22} {agree[t]:3d}/{calls[t]:3d}" for t in sorted(calls))
    report += "".join(f"\n  differs: {t}: {d}" for t, ok, d in rows if not ok)
    print(report)
    assert len(rows) >= 60 and set(calls) == TOOLS, report
    assert sum(agree.values()) / len(rows) >= 0.95, report


def test_only_the_batch_duplicate_quirk_differs() -> None:
    """Everything but the server's two-entities-of-one-name quirk agrees call for call."""
    rows = run_memory_scenarios([s for s in SCENARIOS if s != "batch_duplicates"])
    bad = [(t, d) for t, ok, d in rows if not ok]
    assert not bad, bad
