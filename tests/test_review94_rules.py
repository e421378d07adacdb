"""Rules from blind reviews 94 and 95 (35/40 accepted each), each checked against a hand-built world or doc."""

from __future__ import annotations

import json
import re

from conftest import compile_doc, mcp_tool as _tool

from forgec.stdlib.values import generate_state


def test_records_of_one_kind_nested_in_each_other_form_trees():
    """Review 94: Zotero collections sat in a parent loop (A in B, B in A), which its docs forbid ("a collection cannot
    be moved under itself or one of its own subcollections"). A record's parent of its own kind is an earlier record,
    or none: no record is its own ancestor."""
    schema = {"entities": {"Collection": {"key": "key", "fields": {
        "key": {"type": "str"}, "name": {"type": "str"},
        "parentCollection": {"type": "ref", "entity": "Collection", "optional": True}}}}}
    for seed in range(5):
        w = generate_state(schema, seed=seed, size=30)["entities"]["Collection"]
        parents = {k: r["parentCollection"] for k, r in w.items()}
        assert any(p is not None for p in parents.values())  # some are nested
        for k in parents:
            seen, cur = {k}, parents[k]
            while cur is not None:
                assert str(cur) not in seen, (k, cur)
                seen.add(str(cur))
                cur = parents[str(cur)]



S = {"type": "string"}
EXCEPTIONS = {"tools": [  # an appointment book whose exceptions may name a provider, or none
    _tool("list_providers", "List all providers.", {}, [], True),
    _tool("list_appointments", "List all appointments.", {}, [], True),
    _tool("create_provider", "Create a provider.", {"name": {**S, "description": "Full name of the provider"}}, ["name"]),
    _tool("create_appointment", "Create an appointment.", {
        "title": {**S, "description": "The appointment's title"}, "start": {**S, "description": "Start date (YYYY-MM-DD)"},
        "providerId": {**S, "description": "The ID of the provider it applies to, if any"}}, ["name", "start"]),
    _tool("update_appointment", "Update an appointment.", {
        "id": {**S, "description": "The ID of the appointment"}, "start": {**S, "description": "Start date (YYYY-MM-DD)"},
        "providerId": {**S, "description": "The ID of the provider it applies to"}}, ["id"]),
]}


def test_an_update_leaves_no_provider_on_a_record_that_had_none(tmp_path):
    """Review 94: "the working plan exception ... with the provider called X" of an exception with no provider was
    false, and the gold PUT quietly gave it one (Easy!Appointments). Started from the user's own world (`--state`) in
    which no appointment has a provider, no update gives one one."""
    from forgec.build import CompileOptions, compile_build

    d = tmp_path / "docs" / "book"
    d.mkdir(parents=True)
    (d / "tools_list.json").write_text(json.dumps(EXCEPTIONS))
    people = ["Maria Lopez", "Daniel Kim", "Aisha Khan", "Tom Becker"]
    topics = ["Annual checkup", "Dental cleaning", "Eye exam", "Physiotherapy", "Vaccination", "Blood test", "Follow-up visit"]
    world = {"entities": {
        "Provider": {f"p{i}": {"provider_id": f"p{i}", "name": n} for i, n in enumerate(people)},
        "Appointment": {f"a{i}": {"appointment_id": f"a{i}", "title": t, "start": f"2024-06-{10 + i:02d}", "providerId": None}
                        for i, t in enumerate(topics)}}}
    (tmp_path / "world.json").write_text(json.dumps(world))
    out = tmp_path / "b"
    res = compile_build(CompileOptions(inputs=[d], out=out, tasks_per_env=60, seed=0, oracle_check=False,
                                       states={"book": tmp_path / "world.json"}))
    assert not [x for x in res.diagnostics if x.is_error], [x.message for x in res.diagnostics if x.is_error][:3]
    updates = [c for f in sorted((out / "tasks").glob("*.jsonl")) for line in f.read_text().splitlines()
               for c in json.loads(line)["gold_calls"] if c["tool"] == "update_appointment"]
    assert updates, "no update was sampled"
    assert all("providerId" not in c["arguments"] for c in updates), updates


def test_a_full_name_is_a_persons():
    """"Full name of the provider" on a field called `name` is a person's name, not a group's ("Travel", "Clients")."""
    import random

    from forgec.stdlib.values import generate_value

    v = generate_value({"type": "str"}, "name", random.Random(1), entity="Provider", doc="Full name of the provider")
    assert len(v.split()) == 2 and all(w[:1].isupper() for w in v.split()), v


TRASH = {"tools": [  # WordPress's pages (a documented status without "trash") and an email server's delete
    _tool("wp_list_pages", "Lists pages.", {}, [], True),
    _tool("wp_create_page", "Creates a page.", {"title": {**S, "description": "The title for the page."}, "status": {
        **S, "enum": ["publish", "draft", "pending", "private"], "description": "The publishing status for the page."}}, ["title"]),
    _tool("wp_delete_page", "Deletes a page.", {"id": {"type": "number", "description": "The ID of the page to delete."},
                                                "force": {"type": "boolean", "description": "If true, permanently delete. If false, move to trash. Defaults to false."}}, ["id"]),
    _tool("list_emails", "List emails.", {}, [], True),
    _tool("send_email", "Send an email.", {"subject": {**S, "description": "Subject"}, "to": {**S, "description": "Recipient email address"}}, ["subject", "to"]),
    _tool("delete_email", "Delete an email. By default moves to Trash. Set permanent=true for permanent deletion (irreversible).", {
        "emailId": {**S, "description": "Email ID to delete (from list_emails)"},
        "permanent": {"type": "boolean", "description": "Permanently delete (skip Trash)"}}, ["emailId"]),
]}


def test_a_delete_the_docs_say_goes_to_the_trash_keeps_the_record(tmp_path):
    """WordPress's `wp_delete_page` ("If false, move to trash. Defaults to false") and an email server's `delete_email`
    ("By default moves to Trash") removed the record for good, since their records have no status that can be "trash".
    Without the switch the record stays, marked as in the trash; with it, it is gone."""
    out = compile_doc(tmp_path, "site", "tools_list.json", TRASH, 4)
    src = next((out / "src").glob("*/env.forge")).read_text()
    for tool, switch in (("wp_delete_page", "force"), ("delete_email", "permanent")):
        body = src[src.index(f"tool {tool}("):]
        body = body[:body.index("\n  }\n")]
        assert re.search(rf"if {switch} == true \{{\s*delete \w+\s*\}} else \{{\s*set \w+\.(?:trashed = true|status = \"trash\")", body), body


COMMENTS = {"tools": [  # WordPress's comments: the docs' states name approval by the verb itself
    _tool("wp_list_comments", "Lists comments.", {"status": {**S, "enum": ["hold", "approve", "spam", "trash"],
                                                             "description": "Filter by comment status."}}, [], True),
    _tool("wp_create_comment", "Creates a comment.", {"post": {"type": "number", "description": "The ID of the post."},
                                                      "content": {**S, "description": "The content of the comment."}}, ["post", "content"]),
    _tool("wp_update_comment", "Updates a comment.", {"id": {"type": "number", "description": "The ID of the comment."},
                                                      "status": {**S, "enum": ["hold", "approve", "spam", "trash"],
                                                                 "description": "The new status for the comment."}}, ["id"]),
    _tool("wp_approve_comment", "Approves a pending comment.", {"id": {"type": "number", "description": "The ID of the comment to approve."}}, ["id"]),
]}


def test_a_verb_the_docs_states_name_sets_that_state(tmp_path):
    """Review 95: "Approves a pending comment" set `approved`, a state WordPress's docs never list beside their own
    `approve`, so a comment already `approve` was approved again. The verb sets the documented state."""
    out = compile_doc(tmp_path, "wp", "tools_list.json", COMMENTS, 2)
    src = next((out / "src").glob("*/env.forge")).read_text()
    body = src[src.index("tool wp_approve_comment("):]
    body = body[:body.index("\n  }\n")]
    assert 'set id.status = "approve"' in body and '"approved"' not in src, body
