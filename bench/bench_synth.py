"""Synthesis + codegen time per 100 tools (issue 4 goal), on the real corpus and examples.

    python bench/bench_synth.py [--repeat N]

Prints, per source: tools, synth ms, fmt+parse+check ms, codegen ms, and the time per
100 tools; plus the conservative-tool count and the kinds. Not a timed test.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from forgec import lang
from forgec.codegen import emit_env
from forgec.frontends import read_paths
from forgec.lang import ast as A
from forgec.synth import synthesize

REPO = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for p in (REPO.parent / "shared" / "corpus").iterdir() if p.is_dir()) + sorted(p for p in (REPO / "examples").glob("*.*") if p.suffix in (".json", ".yaml", ".yml", ".jsonl"))


def best(fn, repeat):
    t = float("inf")
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        t = min(t, time.perf_counter() - t0)
    return t, out


def synthetic_env(n_entities: int):
    """A CRUD-shaped env with 5 tools per entity (get/list/create/update/delete) and references."""
    from forgec import ir

    S, F = ir.Type(kind="string"), ir.Type(kind="number")
    tools = []
    for i in range(n_entities):
        e, parent = f"thing{i}", f"thing{max(i - 1, 0)}"
        rec = ir.Type(kind="object", fields=tuple(ir.Field_(name=n, type=t, required=True) for n, t in ((f"{e}_id", S), ("name", S), ("price", F), (f"{parent}_id", S))))
        tools += [
            ir.Tool(name=f"get_{e}", description=f"Get a {e}.", params=(ir.Param(name=f"{e}_id", type=S, required=True),), returns=rec),
            ir.Tool(name=f"list_{e}s", description=f"List {e}s.", params=(ir.Param(name="name", type=S),), returns=ir.Type(kind="array", items=rec)),
            ir.Tool(name=f"create_{e}", description=f"Create a {e}.", params=(ir.Param(name="name", type=S, required=True), ir.Param(name="price", type=F, required=True))),
            ir.Tool(name=f"update_{e}_price", description=f"Update a {e}.", params=(ir.Param(name=f"{e}_id", type=S, required=True), ir.Param(name="price", type=F, required=True))),
            ir.Tool(name=f"delete_{e}", description=f"Delete a {e}.", params=(ir.Param(name=f"{e}_id", type=S, required=True),)),
        ]
    return ir.Environment(name="synthetic", tools=tuple(tools))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rows = []
    tot_tools = tot_synth = tot_cg = 0.0
    for src in SOURCES:
        envs, _ = read_paths([src])
        for env in envs:
            ts, (decl, diags) = best(lambda: synthesize(env), a.repeat)
            text = lang.format(A.Module(file="x.forge", items=(decl,)))
            tc, _ = best(lambda: lang.check([lang.parse(text, "x.forge")[0]]), a.repeat)
            tg, _ = best(lambda: emit_env(decl, "x.forge"), a.repeat)
            n = len(env.tools)
            cons = sum("conservative" in t.annotations for t in decl.tools)
            rows.append((env.name, n, ts * 1e3, tc * 1e3, tg * 1e3, (ts + tg) / n * 100 * 1e3, cons))
            tot_tools += n
            tot_synth += ts
            tot_cg += tg
    print(f"{'env':<24}{'tools':>6}{'synth ms':>10}{'check ms':>10}{'codegen ms':>12}{'ms/100 tools':>14}{'conservative':>14}")
    for r in rows:
        print(f"{r[0]:<24}{r[1]:>6}{r[2]:>10.2f}{r[3]:>10.2f}{r[4]:>12.2f}{r[5]:>14.1f}{r[6]:>14}")
    per100 = (tot_synth + tot_cg) / tot_tools * 100 * 1e3
    print(f"{'total':<24}{int(tot_tools):>6}{tot_synth * 1e3:>10.2f}{'':>10}{tot_cg * 1e3:>12.2f}{per100:>14.1f}")
    print(f"\nsynthesis + codegen per 100 tools: {per100:.1f} ms (rules backend, best of {a.repeat})")
    print(f"\n{'synthetic env':<24}{'tools':>6}{'synth ms':>10}{'codegen ms':>12}{'ms/100 tools':>14}")
    for n in (20, 100, 200):
        env = synthetic_env(n)
        ts, (decl, _d) = best(lambda: synthesize(env), max(1, a.repeat // 2))
        tg, _ = best(lambda: emit_env(decl, "x.forge"), max(1, a.repeat // 2))
        k = len(env.tools)
        print(f"{'crud x' + str(n):<24}{k:>6}{ts * 1e3:>10.1f}{tg * 1e3:>12.1f}{(ts + tg) / k * 100 * 1e3:>14.1f}")


if __name__ == "__main__":
    main()
