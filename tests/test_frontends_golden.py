"""Golden IR snapshots of examples/ (rewrite with `pytest --update-golden`), plus what the examples promise."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from forgec.frontends import read_paths
from forgec.ir import Environment

GOLDEN = REPO / "tests" / "golden" / "ir"


@pytest.fixture(scope="module")
def example_envs() -> list[Environment]:
    import os

    cwd = os.getcwd()
    os.chdir(REPO)  # sources are recorded relative to the repository root
    try:
        envs, diags = read_paths(["examples"])
    finally:
        os.chdir(cwd)
    assert diags == []
    return envs


def canonical(env: Environment) -> str:
    return json.dumps(env.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_examples_match_golden_ir(example_envs, update_golden):
    assert [e.name for e in example_envs] == ["airline", "bookstore", "helpdesk"]
    for env in example_envs:
        path = GOLDEN / f"{env.name}.json"
        text = canonical(env)
        if update_golden:
            path.write_text(text, encoding="utf-8")
            continue
        assert path.is_file(), f"missing golden {path}; run pytest --update-golden"
        assert text == path.read_text(encoding="utf-8"), f"IR of {env.name} changed; inspect the diff and run pytest --update-golden"
    # golden files round-trip through the published schema
    for env in example_envs:
        again = Environment.model_validate_json((GOLDEN / f"{env.name}.json").read_text())
        assert again == env


def test_examples_are_entity_rich(example_envs):
    """What later stages rely on: 8-14 tools, documented returns, id parameters, several formats."""
    formats = {}
    for env in example_envs:
        assert 8 <= len(env.tools) <= 14, env.name
        formats[env.name] = {t.format for t in env.tools}
        for t in env.tools:
            assert t.description and t.returns is not None, (env.name, t.name)
        id_params = {p.name for t in env.tools for p in t.params if p.name.endswith("_id")}
        assert len(id_params) >= 3, (env.name, id_params)
    assert formats == {"airline": {"openai"}, "bookstore": {"openapi"}, "helpdesk": {"mcp"}}


def test_example_details(example_envs):
    envs = {e.name: e for e in example_envs}
    air = envs["airline"]
    user = air.tool("get_user_details").returns
    assert {f.name: f.type.short() for f in user.fields}["reservation_ids"] == "array[string]"
    flights = air.tool("search_flights").returns
    assert flights.kind == "array" and {"price", "seats_available", "status"} <= {f.name for f in flights.items.fields}
    desk = envs["helpdesk"]
    assert desk.tool("delete_comment").annotations["destructiveHint"] is True
    assignee = {f.name: f for f in desk.tool("get_ticket").returns.fields}["assignee_id"].type
    assert assignee.kind == "string" and assignee.nullable
    book = envs["bookstore"]
    assert book.tool("get_order").http_path == "/orders/{order_id}"
    lines = {f.name: f for f in book.tool("get_order").returns.fields}["lines"].type.items
    assert [f.name for f in lines.fields] == ["book_id", "quantity", "unit_price"]  # allOf + $ref
    assert set(book.definitions) == {"Category"}  # the recursive category tree
