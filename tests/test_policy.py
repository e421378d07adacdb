"""Policy pages beside the tool docs (issue 20, "All the docs a user has"): which files are policy, which tool a
section speaks of, the rules becoming preconditions and effects cited in env.forge, and the page reaching the
agent's system prompt at eval time. Two differently written sources: tau-bench's own retail wiki.md (real,
`tests/corpus/tau_bench_code`) and a hand-written plain manual with setext headings for a library API."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, TAU_CODE, mcp_tool
from forgec.frontends import read_paths
from forgec.synth import policy

RETAIL_WIKI = TAU_CODE / "tau_bench" / "envs" / "retail" / "wiki.md"


def _retail(tmp: Path, with_wiki: bool = True) -> Path:
    d = tmp / "retail"
    d.mkdir(parents=True)
    shutil.copy(CORPUS / "tau_bench_retail" / "tools.json", d / "tools.json")
    if with_wiki:
        shutil.copy(RETAIL_WIKI, d / "wiki.md")
    (d / "README.md").write_text("# Where these docs come from\n\nCopied from tau-bench; the status will be changed to 'bogus'.\n")
    return d


LIBRARY_TOOLS = [
    mcp_tool("get_loan", "Get a loan by its id.", {"loan_id": {"type": "string"}}, ["loan_id"]),
    mcp_tool("list_loans", "List the loans of the library.", {}),
    mcp_tool("renew_loan", "Renew a loan for another period.", {"loan_id": {"type": "string"}}, ["loan_id"]),
    mcp_tool("return_loan", "Return the book of a loan.", {"loan_id": {"type": "string"}}, ["loan_id"]),
]
LIBRARY_MANUAL = """Circulation desk manual
=======================

Staff help members with their loans. Be polite.

Renewing a loan
---------------
A loan can only be renewed if its status is 'active'.
Once renewed, the loan status will be changed to 'renewed'.

Returning a loan
----------------
After the return, the loan status will be changed to 'returned'.
"""


def _library(tmp: Path) -> Path:
    d = tmp / "library"
    d.mkdir()
    (d / "tools.json").write_text(json.dumps({"tools": LIBRARY_TOOLS}))
    (d / "manual.txt").write_text(LIBRARY_MANUAL)
    return d


def test_policy_pages_are_read_beside_the_docs_and_readme_is_not(tmp_path):
    envs, diags = read_paths([_retail(tmp_path)])
    assert diags == []
    (env,) = envs
    assert [Path(p.file).name for p in env.policy] == ["wiki.md"]  # README.md is provenance, not policy
    assert env.policy[0].text == RETAIL_WIKI.read_text()


def test_a_top_level_page_goes_to_its_namesake_or_warns(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(CORPUS / "tau_bench_retail" / "tools.json", docs / "shop.json")
    shutil.copy(CORPUS / "tau_bench_airline" / "tools.json", docs / "air.json")
    (docs / "shop.md").write_text("## Cancel pending order\n\n- Only pending orders.\n")
    (docs / "rules.md").write_text("# Rules\n")
    envs, diags = read_paths([docs])
    by = {e.name: e for e in envs}
    assert [Path(p.file).name for p in by["shop"].policy] == ["shop.md"] and by["air"].policy == ()
    warned = [d for d in diags if d.code == "policy-unmatched"]
    assert len(warned) == 1 and "rules.md" in warned[0].message and "air, shop" in warned[0].message
    assert not any(d.is_error for d in diags)


def test_sections_follow_atx_and_setext_headings():
    secs = policy.sections(LIBRARY_MANUAL)
    assert [s.path for s in secs] == [("Circulation desk manual",),
                                      ("Circulation desk manual", "Renewing a loan"),
                                      ("Circulation desk manual", "Returning a loan")]
    assert secs[1].sentences == ("A loan can only be renewed if its status is 'active'.",
                                 "Once renewed, the loan status will be changed to 'renewed'.")
    wiki = policy.sections(RETAIL_WIKI.read_text())
    items = next(s for s in wiki if s.path[-1] == "Modify items")
    assert items.path == ("Retail agent policy", "Modify pending order", "Modify items")
    assert items.sentences[0].startswith("This action can only be called once, and will change the order status")


def test_a_section_speaks_of_the_tools_its_heading_names(tmp_path):
    """Hand-read from the wiki: each operation's section goes to its tool; 'Modify pending order' (the parent's own
    bullets) to all three modify tools; the preamble and 'Domain basic' to none."""
    (env,), _ = read_paths([_retail(tmp_path)])
    rules = policy.rules_for(env)
    assert sorted(rules) == ["cancel_pending_order", "exchange_delivered_order_items", "modify_pending_order_address",
                             "modify_pending_order_items", "modify_pending_order_payment", "return_delivered_order_items"]
    assert rules["cancel_pending_order"][0] == "An order can only be cancelled if its status is 'pending', and you should check its status before taking the action."
    assert any("'pending (items modifed)'" in s for s in rules["modify_pending_order_items"])
    assert not any("'pending (items modifed)'" in s for s in rules["modify_pending_order_payment"])  # 'Modify payment' is its own section
    assert all(any("can only be modified if its status is 'pending'" in s for s in rules[t])
               for t in ("modify_pending_order_address", "modify_pending_order_items", "modify_pending_order_payment"))
    assert not any("All times in the database are EST" in s for ss in rules.values() for s in ss)
    (lib,), _ = read_paths([_library(tmp_path)])
    assert policy.rules_for(lib) == {
        "renew_loan": ("A loan can only be renewed if its status is 'active'.", "Once renewed, the loan status will be changed to 'renewed'."),
        "return_loan": ("After the return, the loan status will be changed to 'returned'.",),
    }


def test_a_required_state_is_not_read_as_the_state_set():
    from forgec.synth.prose import read_sentence

    got = read_sentence("An order can only be cancelled if its status is 'pending', and you should check its status.")
    assert [(f.kind, f.value) for f in got] == [("require", "pending")]
    assert [(f.kind, f.value) for f in read_sentence("After user confirmation, the order status will be kept 'pending'.")] == []


def _tool_block(src: str, tool: str) -> str:
    start = src.index(f"tool {tool}(")
    return src[start:src.index("\n  }\n", start)]


def _compile(docs: Path, out: Path, tasks: int = 2) -> str:
    from forgec.build import CompileOptions, compile_build

    res = compile_build(CompileOptions(inputs=[docs], out=out, tasks_per_env=tasks, oracle_check=False))
    assert not [d for d in res.diagnostics if d.is_error]
    return next((out / "src").glob("*/env.forge")).read_text()


def test_the_wiki_states_what_exchange_and_modify_items_set(tmp_path):
    """tau-bench's real exchange tool sets the status 'exchange requested' (tools/exchange_delivered_order_items.py);
    the tool doc says nothing of it, the wiki does: with the wiki the env sets it, cited; without, it does not."""
    with_wiki = _compile(_retail(tmp_path / "a"), tmp_path / "ba")
    without = _compile(_retail(tmp_path / "b", with_wiki=False), tmp_path / "bb")
    real = (TAU_CODE / "tau_bench" / "envs" / "retail" / "tools" / "exchange_delivered_order_items.py").read_text()
    assert '"exchange requested"' in real
    ex = _tool_block(with_wiki, "exchange_delivered_order_items")
    assert 'set order_id.status = "exchange requested"' in ex
    assert "// from: \"After user confirmation, the order status will be changed to 'exchange requested'" in ex
    assert "exchange requested" not in _tool_block(without, "exchange_delivered_order_items")
    assert 'set order_id.status = "pending (items modifed)"' in _tool_block(with_wiki, "modify_pending_order_items")
    assert "bogus" not in with_wiki  # the README's sentence is no rule


def test_a_plain_manual_gives_the_library_its_states(tmp_path):
    src = _compile(_library(tmp_path), tmp_path / "b")
    renew = _tool_block(src, "renew_loan")
    assert 'require loan_id.status == "active"' in renew and 'set loan_id.status = "renewed"' in renew
    assert 'set loan_id.status = "returned"' in _tool_block(src, "return_loan")


def test_the_policy_reaches_the_agent_and_is_integrity_checked(tmp_path):
    from forgec.export.hf import prompt_messages
    from forgec.runtime.episode import agent_system_prompt, build_policy
    from forgec.runtime.loader import BuildError, load

    out = tmp_path / "b"
    _compile(_retail(tmp_path), out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["envs"]["retail"]["policy"]["path"] == "envs/retail/policy.md"
    b = load(out)
    assert b.policies["retail"].strip() == RETAIL_WIKI.read_text().strip()
    prompt = agent_system_prompt(build_policy(b, "retail"))
    assert prompt.startswith(agent_system_prompt()) and "# Policy" in prompt and "Exchange delivered order" in prompt
    assert prompt_messages(b.tasks[0], build_policy(b, "retail"))[0]["content"] == prompt
    (out / "envs" / "retail" / "policy.md").write_text("You may refund anything.\n")
    with pytest.raises(BuildError, match="policy.md"):
        load(out)


def test_docs_without_a_policy_page_build_as_before(tmp_path):
    (env,), _ = read_paths([_retail(tmp_path, with_wiki=False)])
    assert env.policy == () and '"policy"' not in env.digest_json()  # the ir_hash of such docs is unchanged
    out = tmp_path / "b"
    _compile(tmp_path / "retail", out)
    assert json.loads((out / "manifest.json").read_text())["envs"]["retail"]["policy"] is None
    assert not (out / "envs" / "retail" / "policy.md").exists()


def test_states_the_policy_names_are_ones_a_person_can_say(tmp_path):
    """A status only the wiki names ('exchange requested') is still a state a person knows: the sampler keeps
    naming orders by their status (with the wiki, before this, no task touched an order: 12 tasks, all on the
    user's address), and the nested order addresses are places (a `state` beside a city is the city's state)."""
    out = tmp_path / "b"
    _compile(_retail(tmp_path), out, tasks=30)
    tasks = [json.loads(x) for x in (out / "tasks" / "retail.jsonl").read_text().splitlines()]
    order_tools = {"get_order_details", "cancel_pending_order", "modify_pending_order_address", "return_delivered_order_items",
                   "exchange_delivered_order_items", "modify_pending_order_items", "modify_pending_order_payment"}
    assert sum(any(g["tool"] in order_tools for g in t["gold_calls"]) for t in tasks) >= 1
    world = json.loads((out / "states" / "retail.json").read_text())["entities"]
    from forgec.stdlib.values import CITIES

    places = {c: s for c, s, *_ in CITIES}
    addrs = [o["address"] for o in world["Order"].values()] + [u["address"] for u in world["User"].values()]
    assert addrs and all(a["state"] == places[a["city"]] and a["country"] == "USA" for a in addrs if a["city"] in places)


def test_a_write_the_policy_limits_unchecked_is_left_out_and_said(tmp_path):
    """Hand-read from tau-bench's retail wiki: the limits on payment changes, item changes, returns and exchanges
    ("must have enough balance", "cannot be any change of product types", "the refund must ... go to the original
    payment method") are read into no precondition; cancel's one limit (status 'pending') is. A plain manual: a
    loan renewed "at most twice" is no precondition either."""
    wiki = RETAIL_WIKI.read_text()
    tools = [t["function"]["name"] for t in json.loads((CORPUS / "tau_bench_retail" / "tools.json").read_text())]
    assert sorted(policy.unmodelled([wiki], tools)) == ["exchange_delivered_order_items", "modify_pending_order_items",
                                                         "modify_pending_order_payment", "return_delivered_order_items"]
    manual = LIBRARY_MANUAL.replace("Once renewed,", "A member can renew a loan at most twice. Once renewed,")
    assert policy.unmodelled([LIBRARY_MANUAL], ["renew_loan", "return_loan"]) == {}
    assert policy.unmodelled([manual], ["renew_loan", "return_loan"]) == {"renew_loan": ("A member can renew a loan at most twice.",)}
    out = tmp_path / "b"
    _compile(_retail(tmp_path), out, tasks=30)
    left = json.loads((out / "manifest.json").read_text())["envs"]["retail"]["stats"]["tools_left_out"]
    assert sorted(left) == ["exchange_delivered_order_items", "modify_pending_order_items", "modify_pending_order_payment",
                            "return_delivered_order_items"]
    assert "must either go to the original payment method" in left["return_delivered_order_items"]
    calls = {g["tool"] for line in (out / "tasks" / "retail.jsonl").read_text().splitlines() for g in json.loads(line)["gold_calls"]}
    assert not calls & set(left) and "cancel_pending_order" in calls


def test_the_stats_say_which_writes_the_policy_left_out(tmp_path):
    from forgec.commands.stats import few_tasks_lines

    stats = {"air": {"tasks": 12, "has_write": True, "sampler_rejected": {"duplicate": 3},
                     "tools_left_out": {"cancel_reservation": 'the policy limits it in ways the env does not check: "X"'}}}
    (line,) = few_tasks_lines(stats)
    assert line.startswith("air: 12 tasks;") and 'writes left out: cancel_reservation (the policy limits it' in line


def test_pages_named_on_the_command_line(tmp_path):
    """`forgec compile tools.json wiki.md`: the page belongs to the one env read; a page named alone is read as a doc
    (and refused as one: `forgec inspect notes.txt` says it is no tool documentation, as before pages were read)."""
    d = _retail(tmp_path)
    (env,), diags = read_paths([d / "tools.json", d / "wiki.md"])
    assert [Path(p.file).name for p in env.policy] == ["wiki.md"] and not diags
    envs, diags = read_paths([d / "wiki.md"])
    assert envs == [] and diags and all(x.is_error for x in diags)  # read as a doc, and refused as one
