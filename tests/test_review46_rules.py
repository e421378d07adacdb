"""Rules from review 45's unseen doc sets (ninth session): docs written as Python docstrings (FastMCP's
"Args:" blocks), lists of values after a dash or closed by "etc.", and a delete's cascade clause. Each test checks
a real doc set, or a value read by hand from its docs, not the sampler's own output."""

from __future__ import annotations

import json
import random
import re

from conftest import BROAD

from forgec.frontends import read_file
from forgec.gate import documented_examples, documented_values


def _tool(tools, name):
    return next(t for t in tools if t.name == name)


def test_an_args_block_gives_each_parameter_its_whole_line():
    """Book Lover documents parameters only in a docstring's Args block; `status: New status — want_to_read, ...`
    names `status` again inside its own line. Only a line's opening name ends the clause before it, so the
    parameter keeps its list of values (before: its doc was "New" and no task could set a status)."""
    tools, diags = read_file(BROAD / "pypi_mcp_book_lover" / "tools_list.json")
    status = next(p for p in _tool(tools, "bl_update_book_status").params if p.name == "status")
    assert status.description == "New status — want_to_read, downloaded, reading, or finished"
    book_id = next(p for p in _tool(tools, "bl_update_book_status").params if p.name == "book_id")
    assert book_id.description == "Book ID from the library"
    genre = next(p for p in _tool(tools, "bl_add_book").params if p.name == "genre")
    assert genre.description == "Genre (fiction, non-fiction, sci-fi, fantasy, etc.)"


def test_values_listed_after_a_dash_are_the_documented_values():
    """"New status — a, b, reading, or finished": the dash leads the list as a colon would, and "or finished"
    is the value "finished" (the split tries ", or" before ",")."""
    assert documented_values("New status — want_to_read, downloaded, reading, or finished") == \
        ["want_to_read", "downloaded", "reading", "finished"]
    assert documented_values("Possible values: low, medium, or high") == ["low", "medium", "high"]


def test_a_list_closed_by_etc_is_examples_not_the_allowed_values():
    """"Genre (fiction, non-fiction, sci-fi, fantasy, etc.)" names an open set: no state value is held to it and no
    task asks for the genre "etc" (a value the first build of Book Lover asked for); its items are examples."""
    doc = "Genre (fiction, non-fiction, sci-fi, fantasy, etc.)"
    assert documented_values(doc) == []
    assert documented_examples(doc) == ("fiction", "non-fiction", "sci-fi", "fantasy")
    assert documented_values("Filter by state (open, closed, merged)") == ["open", "closed", "merged"]


def test_an_author_is_a_person_whatever_the_record_is_called():
    """A book is no record a topic names, but its `author` is a person: "Seth Brock", never None (which left
    Book Lover's `bl_add_book` unfillable) nor a book title (which a `first_name` of a work record got)."""
    from forgec.stdlib.values import said_value

    for i in range(5):
        for topical in (True, False):
            v = said_value("author", "Author name", random.Random(i), noun="Book", topical=topical)
            assert v and re.fullmatch(r"[A-Z][a-z'-]+ [A-Z][a-z'-]+", v), v
            first = said_value("first_name", "", random.Random(i), noun="Book", topical=topical)
            assert first and re.fullmatch(r"[A-Z][a-z'-]+", first), first


def test_book_lover_asks_for_status_changes_and_says_no_cascade(tmp_path):
    """Book Lover gave 12 tasks, all "delete my book X and all its reviews": the tool's own words, where the library
    has no reviews (review 45: 8 rejections). Now the delete ends at the record, and its status changes (values from
    the docs' list) are asked for too."""
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "pypi_mcp_book_lover"], out=out, tasks_per_env=30, seed=0, oracle_check=False))
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert tasks
    assert not any("all its" in t["instruction"] for t in tasks), [t["instruction"] for t in tasks if "all its" in t["instruction"]]
    allowed = {"want_to_read", "downloaded", "reading", "finished"}  # the docs' list, read by hand
    status_calls = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "bl_update_book_status"]
    assert status_calls, [t["instruction"] for t in tasks]
    assert all(c["arguments"]["status"] in allowed for c in status_calls)
    assert not any(re.search(r"\betc\b", t["instruction"]) for t in tasks)
