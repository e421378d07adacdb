"""Rules found in blind review 80 and in reading its doc sets (each checked against hand-built docs or hand-written
expectations, not the corpus)."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

from conftest import assert_checked_before, compile_doc, mcp_tool
from test_review70_rules import _tasks

S = {"type": "string"}


def _env(out):
    from runtime_build import load_env_module

    return load_env_module(next(out.glob("envs/*/env.py")))


def test_a_description_says_what_the_record_is_for():
    """GitLab: a project described "Please review the checkout service (legacy) by Friday." (review 80): a to-do
    pasted into a settings form. A task's or a ticket's description may still be one."""
    from forgec.stdlib.values import said_value

    todo = re.compile(r"\b(?:please|reminder|review|by friday|next steps|questions|following up)\b", re.I)
    for seed in range(30):
        for noun in ("project", "preheat_policy", "webhook", "Repository"):
            v = said_value("description", "", random.Random(seed), about="Checkout service (legacy)", noun=noun)
            assert v and "checkout service (legacy)" in v and not todo.search(v), (noun, v)
    notes = {said_value("description", "", random.Random(seed), about="Tax documents", noun="task") for seed in range(30)}
    assert any(todo.search(v) for v in notes), notes  # a task's description is work to do


def test_a_delete_takes_the_kinds_its_docs_list_after_associated_data(tmp_path):
    """Karakeep: "Permanently delete a bookmark and all its associated data (tags, highlights, assets)." kept the
    bookmark's highlights (review 80, three tasks): the kinds in parentheses go with it."""
    bid = {"bookmark_id": {"type": "string", "description": "The bookmark id"}}
    out = compile_doc(tmp_path, "keep", "tools_list.json", {"tools": [
        mcp_tool("list_bookmarks", "List bookmarks.", {}),
        mcp_tool("create_bookmark", "Create a bookmark.", {"title": S, "url": S}, ["url"]),
        mcp_tool("list_highlights", "List the highlights of a bookmark.", bid, ["bookmark_id"]),
        mcp_tool("create_highlight", "Create a highlight on a bookmark.", {**bid, "text": S}, ["bookmark_id", "text"]),
        mcp_tool("delete_bookmark", "Permanently delete a bookmark and all its associated data (tags, highlights, assets).", bid, ["bookmark_id"]),
    ]}, 5)
    src = next(out.glob("src/*/env.forge")).read_text()
    body = src[src.index("tool delete_bookmark("):]
    body = body[:body.index("\n  }\n")]
    assert re.search(r"for child in Highlight where it\.\w+ == removed \{\s*delete child", body), body
    env = _env(out).Env({"entities": {
        "Bookmark": {"b1": {"id": "b1", "title": "Read later", "url": "https://a.example"},
                     "b2": {"id": "b2", "title": "Docs", "url": "https://b.example"}},
        "Highlight": {"h1": {"id": "h1", "bookmark_id": "b1", "text": "x"}, "h2": {"id": "h2", "bookmark_id": "b2", "text": "y"}}},
        "globals": {}})
    key = next(iter(env.state["entities"]["Bookmark"]["b1"]))
    assert key  # (the keys as the env declares them)
    env.step("delete_bookmark", {"bookmark_id": "b1"})
    assert set(env.state["entities"]["Highlight"]) == {"h2"}, env.state["entities"]["Highlight"]


def test_a_refusal_the_tool_docs_name_is_a_precondition(tmp_path):
    """GitLab's `delete_branch` "returns the deletion result or a protected-branch, missing-resource, or permission
    error", yet the gold deleted a protected branch (review 80)."""
    out = compile_doc(tmp_path, "git", "tools_list.json", {"tools": [
        {**mcp_tool("list_branches", "List branches.", {}), "outputSchema": {"type": "object", "properties": {"branches": {
            "type": "array", "items": {"type": "object", "properties": {"name": S, "protected": {"type": "boolean"}}}}}}},
        mcp_tool("delete_branch", "Delete branch from project. The operation permanently removes a remote branch, requires branch-delete "
                 "permission, and returns the deletion result or a protected-branch, missing-resource, or permission error.",
                 {"branch_name": {"type": "string", "description": "Name of the branch to delete"}}, ["branch_name"]),
    ]}, 5)
    src = next(out.glob("src/*/env.forge")).read_text()
    body = src[src.index("tool delete_branch("):]
    body = body[:body.index("\n  }\n")]
    assert re.search(r"require \w+\.protected != true", body), body
    mod = _env(out)
    ent = next(e for e in ("Branch",) if e in src)
    env = mod.Env({"entities": {ent: {"main": {"name": "main", "protected": True}, "fix/x": {"name": "fix/x", "protected": False}}}, "globals": {}})
    assert isinstance(env.step("delete_branch", {"branch_name": "main"}), BaseException) or "main" in env.state["entities"][ent]
    assert "main" in env.state["entities"][ent]
    env.step("delete_branch", {"branch_name": "fix/x"})
    assert "fix/x" not in env.state["entities"][ent]


def test_a_numbered_field_is_said_by_its_noun():
    """BoondManager: "set their email1 to ..." (review 80). An acronym with a number is no noun and stays."""
    from forgec.wording import humanize

    assert humanize("email1") == "email"
    assert humanize("email2") == "second email"
    assert humanize("phone3") == "third phone"
    assert humanize("address_line1") == "address line 1"
    assert humanize("addressLine2") == "address line 2"
    for n in ("oauth2_token", "ipv4", "sha1", "utf8", "top10"):
        assert re.search(r"\d", humanize(n)), n


def test_a_value_named_for_a_kind_of_record_must_name_one():
    """GitLab: "change the default branch of my project to develop" in a project with no such branch (review 80)."""
    from forgec.gate import _names_no_record

    tool = SimpleNamespace(params=[SimpleNamespace(name="project_id"), SimpleNamespace(name="default_branch")])
    g = SimpleNamespace(ents={"Project": None, "Branch": None})
    before = {"entities": {"Project": {"p1": {"project_id": "p1", "name": "Docs"}},
                           "Branch": {"b1": {"id": "b1", "name": "main", "project_id": "p1"}, "b2": {"id": "b2", "name": "fix/login"}}}}
    assert _names_no_record(tool, {"project_id": "p1", "default_branch": "develop"}, before, [], g)
    assert not _names_no_record(tool, {"project_id": "p1", "default_branch": "fix/login"}, before, [], g)
    # a call that makes the branch, and a new branch's own name, name no existing one
    made = [SimpleNamespace(op="add", path="/entities/Branch/b3")]
    assert not _names_no_record(tool, {"project_id": "p1", "default_branch": "develop"}, before, made, g)
    newb = SimpleNamespace(params=[SimpleNamespace(name="new_branch")])
    assert not _names_no_record(newb, {"new_branch": "develop"}, before, [], g)


def test_a_value_identified_by_an_id_the_docs_never_list_is_not_made_up():
    """Harbor's `vendor` "Based on which driver, identified by ID" held "Ramirez Ltd" (review 80)."""
    from forgec.stdlib.values import generate_value

    assert generate_value({"type": "str"}, "vendor", random.Random(0), entity="Instance", doc="Based on which driver, identified by ID") is None
    assert isinstance(generate_value({"type": "str"}, "vendor", random.Random(0), entity="Invoice"), str)


def test_the_read_a_delete_names_is_called_first_even_when_it_reads_tabs(tmp_path):
    """BoondManager: "Delete a candidate ... after checking the ID with `candidates_get`" was followed only where the
    record came from a listing; `candidates_get(id, tab)` reads one of the record's tabs, so no probe made it a getter
    (review 80: three deletes skipped the check). Here the probe does find it a getter; Boond's own, which returns the
    candidate's actions, is read by the second rule (any read the docs name that takes just the record)."""
    from test_review39_rules import RECRUIT

    tools = [t for t in RECRUIT["tools"] if t["name"] not in ("get_candidate", "delete_candidate")] + [
        mcp_tool("get_candidate", "Get a candidate's full record, or one of its tabs.",
                 {"id": {"type": "string", "description": "Candidate ID"},
                  "tab": {"type": "string", "enum": ["information", "actions", "documents"], "description": "Which tab to read"}}, ["id"]),
        mcp_tool("delete_candidate", "Permanently delete a candidate. Only on the user's explicit request, after checking the ID with "
                 "`get_candidate`.", {"id": {"type": "string", "description": "Candidate ID"}}, ["id"]),
    ]
    tasks = _tasks(tmp_path, tools, n=20)
    assert_checked_before(tasks, "delete_candidate", "get_candidate", key="id")


def test_a_camel_case_value_said_in_words_is_said():
    """Azure DevOps: "with the type set to project wiki" for `type: projectWiki` was counted unsaid, and all but one of
    the env's 1,238 candidates were dropped (review 81's draw)."""
    from forgec.lower import said_in

    assert said_in('create a wiki with the type set to project wiki', "projectWiki", "type")
    assert said_in('create a wiki with the type set to projectWiki', "projectWiki", "type")
    assert not said_in('create a wiki with the type set to code wiki', "projectWiki", "type")
    # Grafana: "with event time 2024-05-23 at 17:00" for `eventTime: 2024-05-23T17:00:00` (357 candidates dropped)
    assert said_in("add a note with event time 2024-05-23 at 17:00, saying hi", "2024-05-23T17:00:00", "event_time")
    assert not said_in("add a note with event time 2024-05-23 at 18:00, saying hi", "2024-05-23T17:00:00", "event_time")


def test_a_folder_path_is_a_folder():
    """"Folder path inside repository which is shown as Wiki" held "/uploads/database_migration.xls" (review 81)."""
    from forgec.stdlib.values import said_value

    for seed in range(20):
        v = said_value("mappedPath", "Folder path inside repository which is shown as Wiki (only for codeWiki)", random.Random(seed))
        assert v and v.startswith("/") and "." not in v.rsplit("/", 1)[-1], v
        f = said_value("file_path", "The file path of the attachment", random.Random(seed))
        assert f and "." in f.rsplit("/", 1)[-1], f


def test_an_argument_for_one_case_of_another_is_sent_only_in_it():
    """Azure DevOps' `mappedPath` "(only for codeWiki)" was sent with `type: projectWiki` (review 81)."""
    from forgec.gate import _outside_its_case
    from forgec.lang import ast as A

    def par(name, t, doc):
        return SimpleNamespace(name=name, type=t, doc=doc)

    tool = SimpleNamespace(params=[
        par("type", A.EnumType(("codeWiki", "projectWiki")), "Type of wiki to create"),
        par("repositoryId", A.OptionalType(A.PrimType("str")), "The ID of the repository (required for codeWiki)"),
        par("mappedPath", A.OptionalType(A.PrimType("str")), "Folder path inside repository which is shown as Wiki (only for codeWiki)"),
    ])
    assert _outside_its_case(tool, {"type": "projectWiki", "mappedPath": "/docs"})
    assert _outside_its_case(tool, {"type": "codeWiki", "mappedPath": "/docs"})  # required repository left out
    assert not _outside_its_case(tool, {"type": "codeWiki", "repositoryId": "r1", "mappedPath": "/docs"})
    assert not _outside_its_case(tool, {"type": "projectWiki"})


def test_a_record_the_words_leave_indefinite_is_one_of_one(tmp_path):
    """Asana: "remove my task called "Board meeting" ... from a project" while the task was in three projects and the
    gold removed one (review 81). With a task in two projects and the project unsaid, no such task is emitted; with
    the project said by name, it is."""
    from forgec.gate import Candidate, check_indefinite

    before = {"entities": {"Project": {"p1": {"gid": "p1", "name": "Book club"}, "p2": {"gid": "p2", "name": "Garden"}},
                           "Task": {"t1": {"gid": "t1", "name": "Board meeting", "projects": ["p1", "p2"]}}}}
    g = SimpleNamespace(tools={"remove_project_from_task": SimpleNamespace(params=[
        SimpleNamespace(name="task_id", type=A_named("Task")), SimpleNamespace(name="project_id", type=A_named("Project"))])},
        ents={"Task": None, "Project": None}, named_in=lambda key, said: key == "p1" and '"Book club"' in said)
    trace = [("remove_project_from_task", {"task_id": "t1", "project_id": "p1"}, before, before, [])]

    def cand(text, facts):
        return Candidate(text, [text], (), facts, [(t[0], t[1]) for t in trace])

    assert check_indefinite(cand('remove my task called "Board meeting" from a project', {"name": "Board meeting"}), g, trace) == "indefinite-target"
    assert check_indefinite(cand('remove my task called "Board meeting" from the project called "Book club"',
                                 {"name": "Board meeting", "project": "Book club"}), g, trace) is None
    one = {"entities": {**before["entities"], "Project": {"p1": before["entities"]["Project"]["p1"]}}}
    assert check_indefinite(cand('remove my task called "Board meeting" from a project', {"name": "Board meeting"}), g,
                            [(trace[0][0], trace[0][1], one, one, [])]) is None  # the only project: one end state


def A_named(name):
    from forgec.lang import ast as A

    return A.NamedType(name)


def test_text_the_docs_want_as_markup_is_sent_as_markup(tmp_path):
    """Confluence: "Content of the page in Confluence Storage Format (XHTML) ... plain text will be displayed
    literally", yet the gold sent bare text (review 82: five tasks). The user says the words; the call sends them in
    a paragraph."""
    space = {"type": "object", "properties": {"key": S, "name": S}}
    listing = {"type": "object", "properties": {"spaces": {"type": "array", "items": space}}}
    tasks = _tasks(tmp_path, [
        {**mcp_tool("list_spaces", "List spaces.", {}), "outputSchema": listing},
        mcp_tool("create_page", "Create a new Confluence page in a space.", {
            "space_key": {"type": "string", "description": "Key of the space"}, "title": {"type": "string", "description": "Page title"},
            "content": {"type": "string", "description": "Content of the page in Confluence Storage Format (XHTML)"}},
            ["space_key", "title", "content"]),
    ], n=10)
    made = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "create_page"]
    assert made, [t["instruction"] for t in tasks]
    for t in tasks:
        for c in t["gold_calls"]:
            if c["tool"] == "create_page":
                body = c["arguments"]["content"]
                assert body.startswith("<p>") and body.endswith("</p>"), body
                assert body[3:-4] in t["instruction"] and "<p>" not in t["instruction"], (t["instruction"], body)


def test_a_real_worlds_name_given_as_an_example_is_no_value():
    """book_lover's `series` "Series name (e.g. "The Witcher", "Dune Chronicles")": a made-up book filed under Frank
    Herbert's series (review 82). Examples of a form ('thumbsup', 'rocket') are still values to ask for."""
    from forgec.gate import documented_examples

    assert documented_examples('Series name (e.g. "The Witcher", "Dune Chronicles")') == ()
    assert documented_examples("Name of the emoji (e.g. 'thumbsup', 'rocket', 'eyes')") == ("thumbsup", "rocket", "eyes")


def test_a_setting_of_another_parameters_act_goes_with_it():
    """ERPNext: `assignment_priority` ("Native ToDo priority") and `assignment_description` belong to the `assign_to`
    workflow, yet were set on tasks nobody was assigned (review 82: three rejections)."""
    from forgec.gate import _outside_its_case
    from forgec.lang import ast as A

    tool = SimpleNamespace(params=[SimpleNamespace(name=n, type=A.OptionalType(A.PrimType("str")), doc=d) for n, d in (
        ("name", "Task name"), ("priority", "New priority"), ("assign_to", "User email to assign"),
        ("assignment_priority", "Native ToDo priority"), ("due_date", "Due date"), ("due_time", "Due time"))])
    assert _outside_its_case(tool, {"name": "T1", "assignment_priority": "High"})
    assert not _outside_its_case(tool, {"name": "T1", "assign_to": "a@b.co", "assignment_priority": "High"})
    assert not _outside_its_case(tool, {"name": "T1", "priority": "High", "due_time": "10:00"})  # one word, no act


def test_a_services_address_is_a_host():
    """Harbor: "set its url to 'https://hansen-jordan.com/design-review'" for a registry (review 83). A page a person
    links to keeps its topic path."""
    from forgec.stdlib.values import generate_value, said_value

    for seed in range(10):
        for v in (said_value("url", "The registry URL", random.Random(seed), noun="Registry"),
                  generate_value({"type": "str"}, "url", random.Random(seed), entity="Registry")):
            assert re.fullmatch(r"https://registry\.[a-z0-9.-]+", v), v
        page = said_value("url", "", random.Random(seed), noun="Bookmark")
        assert re.fullmatch(r"https://[a-z0-9.-]+/[a-z0-9-]+", page), page
