"""Values and schemas read from what the docs mean, on shapes no corpus in view has: a field's doc
says it holds an email or a link, a parameter is documented only inside its tool's description,
a tool's object noun is also a verb (`create_issue`), a span's ends come in any order. Expected
values are hand-computed or checked by an independent rule (a regex, the datetime module)."""

from __future__ import annotations

import datetime as dt
import random
import re

from forgec import ir
from forgec.frontends import _param_docs_from_description
from forgec.gate import documented_values, is_dictated_chain
from forgec.lang import ast as A
from forgec.stdlib.values import _ordered_spans, generate_state, generate_value
from forgec.synth.schema import infer_schema

# the catalogue filler a reviewer flagged in earlier worlds ("the cedar library type", "Compact Backpack Alpha" as a team)
FILLER = {"alpha", "bravo", "cedar", "delta", "ember", "falcon", "granite", "harbor", "iris", "juniper", "kestrel", "lumen",
          "meadow", "nimbus", "orchid", "prairie", "quartz", "raven", "summit", "tundra", "umber", "vertex", "willow", "yonder", "zephyr"}


def _str(name, doc="", seed=0, entity=None):
    return generate_value({"type": "str", "doc": doc}, name, random.Random(seed), entity=entity)


def test_a_field_holds_what_its_doc_says():
    for seed in range(20):
        assert re.fullmatch(r"[a-z]+\.[a-z]+\d*@[a-z0-9.-]+\.[a-z]+", _str("reply_to_address", "Email address that replies go to", seed))
        assert re.fullmatch(r"https://[a-z0-9.-]+\.[a-z]+/[a-z0-9-]+", _str("source", "the identifier, URL, or file path", seed))
        assert re.fullmatch(r"10\.\d{4}/\S+", _str("paper", "The DOI of the paper", seed))
        assert _str("tz", "IANA time zone of the calendar", seed) in {"America/New_York", "Europe/London", "Asia/Tokyo",
                                                                       "America/Los_Angeles", "Europe/Berlin", "Australia/Sydney"}
        # an id-like name keeps its id even when the doc mentions an email
        assert "@" not in _str("user_id", "The ID of the user whose email to update", seed)


def test_no_catalogue_filler_in_a_world_of_unknown_meaning():
    schema = {"entities": {
        "Team": {"key": "team_id", "fields": {"team_id": {"type": "str"}, "name": {"type": "str"}, "description": {"type": "str"},
                                             "label": {"type": "str"}, "signature": {"type": "str"}}},
        "Issue": {"key": "issue_id", "fields": {"issue_id": {"type": "str"}, "title": {"type": "str"}, "team_id": {"type": "ref", "entity": "Team"},
                                               "priority": {"type": "float", "doc": "Issue priority (0-4)"}, "body": {"type": "str"}}},
    }}
    w = generate_state(schema, seed=3, size=30)
    words = {x.lower() for e in w["entities"].values() for r in e.values() for v in r.values() if isinstance(v, str)
             for x in re.findall(r"[A-Za-z]+", v)}
    assert not words & FILLER
    pr = [r["priority"] for r in w["entities"]["Issue"].values()]
    assert all(p == int(p) and 0 <= p <= 4 for p in pr) and len(set(pr)) > 1  # whole priorities inside the documented range
    titles = [r["title"] for r in w["entities"]["Issue"].values()]
    assert len(set(titles)) == len(titles) == 90  # three issues per team, each named apart
    sig = next(iter(w["entities"]["Team"].values()))["signature"]
    assert re.fullmatch(r"[A-Z][a-z ]+,\n[A-Z][a-z]+ [A-Z][a-z]+", sig)


def test_a_span_never_ends_before_it_starts():
    rec = {"start_date": "2024-06-01", "end_date": "2024-05-01", "min_price": 9.5, "max_price": 3, "checkInTime": "10:00",
           "checkOutTime": "09:00", "from": "JFK", "to": "LAX", "name": "x"}
    _ordered_spans(rec)
    assert rec == {"start_date": "2024-05-01", "end_date": "2024-06-01", "min_price": 3, "max_price": 9.5, "checkInTime": "09:00",
                   "checkOutTime": "10:00", "from": "JFK", "to": "LAX", "name": "x"}
    schema = {"entities": {"Event": {"key": "event_id", "fields": {"event_id": {"type": "str"}, "start_date": {"type": "str"},
                                                                  "end_date": {"type": "str"}}}}}
    for seed in range(5):
        for r in generate_state(schema, seed=seed, size=30)["entities"]["Event"].values():
            assert dt.date.fromisoformat(r["start_date"]) <= dt.date.fromisoformat(r["end_date"])


def _tool(name, desc, params, **kw):
    return ir.Tool(name=name, description=desc, params=tuple(ir.Param(name=n, type=t, required=req, description=d) for n, t, req, d in params), **kw)


S = ir.Type(kind="string")


def test_a_parameter_documented_in_its_tool_description_gets_that_clause():
    t = _tool("add_item", "Add an item from any source: DOI or URL. source: the identifier or URL of the item. "
              "attach_mode: 'auto' (default) attaches a PDF, 'none' skips, 'required' fails without one.",
              [("source", S, True, ""), ("attach_mode", S, False, ""), ("title", S, False, "Kept as is")])
    got = {p.name: p.description for p in _param_docs_from_description(t).params}
    assert got == {"source": "the identifier or URL of the item.",
                   "attach_mode": "'auto' (default) attaches a PDF, 'none' skips, 'required' fails without one.",
                   "title": "Kept as is"}
    assert documented_values(got["attach_mode"]) == ["auto", "none", "required"]


def test_tool_nouns_that_are_also_verbs_and_bare_ids():
    env = ir.Environment(name="tracker", tools=(
        _tool("tracker_create_issue", "Create a new issue", [("title", S, True, "Issue title"), ("teamId", S, True, "Team ID")]),
        _tool("tracker_delete_issue", "Delete an issue", [("id", S, True, "")]),
        _tool("tracker_search_issues", "Search issues", [("states", ir.Type(kind="array", items=S), False, "State names"),
                                                        ("teamIds", ir.Type(kind="array", items=S), False, "Team ids")]),
        _tool("tracker_create_project_with_issues", "Create a project with issues",
              [("project", ir.Type(kind="object", fields=(ir.Field_(name="name", type=S, required=True),)), True, "")]),
        _tool("tracker_get_team", "Get a team", [("teamId", S, True, "")]),
    ))
    s = infer_schema(env)
    v = s.views
    assert (v["tracker_create_issue"].kind, v["tracker_create_issue"].target) == ("create", "Issue")
    assert (v["tracker_delete_issue"].target, v["tracker_delete_issue"].key_param) == ("Issue", "id")
    assert v["tracker_create_project_with_issues"].target == "Project"
    assert "states" not in s.entities["Issue"].fields and "teamIds" not in s.entities["Issue"].fields
    assert "name" in s.entities["Project"].fields and "project" not in s.entities["Project"].fields
    assert "title" not in s.entities["Team"].fields


def test_a_dictated_chain_is_writes_only_with_every_argument_said():
    class G:
        writes = {"create": True, "update": True, "find": False}

    def call(name, tool, **args):
        return A.CallNode(name, tool, tuple(A.Arg(k, v) for k, v in args.items()))

    said = A.Attr(A.Name("user"), "title")
    from forgec.gate import Candidate

    def cand(*nodes):
        return Candidate("", [], tuple(nodes), {}, [], False)

    assert is_dictated_chain(cand(call("a", "create", title=said), call("b", "update", title=said)), G())
    assert not is_dictated_chain(cand(call("a", "find", q=said), call("b", "update", id=A.Attr(A.Name("a"), "id"))), G())
    assert not is_dictated_chain(cand(call("a", "create", title=said), call("b", "update", id=A.Attr(A.Name("a"), "id"))), G())


def test_a_question_that_copies_one_field_of_a_named_record_is_a_single_read():
    from forgec.gate import Candidate, check_single_read

    lst = A.CallNode("recs", "list_things", ())
    pick = A.ReasonNode("it", "filter", (A.Name("recs"),), ())

    def cand(*nodes):
        return Candidate("", [], tuple(nodes), {}, [], True)

    assert check_single_read(cand(lst, pick), None) == "single-read"
    # a count of one list is single-read too (review 49: "how many of my notifications are unread?" is trivial); an
    # extreme decides which record
    assert check_single_read(cand(lst, pick, A.ReasonNode("n", "count", (A.Name("it"),), ())), None) == "single-read"
    assert check_single_read(cand(lst, A.ReasonNode("top", "argmax", (A.Name("recs"),), ())), None) is None
    assert check_single_read(cand(lst, pick, A.CallNode("one", "get_thing", ())), None) is None  # a second read
    assert check_single_read(cand(A.CallNode("state", "get_status", ())), None) is None  # a device's state, read whole


def test_a_filter_value_meaning_every_record_is_no_record_state():
    env = ir.Environment(name="repo", tools=(
        _tool("list_merge_requests", "List merge requests",
              [("state", ir.Type(kind="enum", values=("opened", "closed", "merged", "all")), False, "Return all requests or just those that are opened, closed, or merged")]),
        _tool("get_merge_request", "Get a merge request", [("merge_request_id", S, True, "")]),
    ))
    f = infer_schema(env).entities["MergeRequest"].fields["state"]
    assert "all" not in str(f.type) and "merged" in str(f.type)


def test_a_dictated_id_is_named_even_inside_a_request_body():
    from forgec.gate import Candidate, dictates_an_id

    def cand(*args):
        return Candidate("", [], (A.CallNode("c", "commentsDelete", tuple(args)),), {}, [], False)

    said = A.Attr(A.Name("user"), "id")
    assert dictates_an_id(cand(A.Arg("body", A.RecordLit((A.FieldInit("id", said),)))))
    assert dictates_an_id(cand(A.Arg("commentId", said)))
    assert not dictates_an_id(cand(A.Arg("body", A.RecordLit((A.FieldInit("title", A.Attr(A.Name("user"), "title")),)))))
    assert not dictates_an_id(cand(A.Arg("commentId", A.Attr(A.Name("found"), "id"))))  # looked up, not said


def test_plural_acronyms_stay_one_word_and_a_name_can_say_its_kind():
    from forgec.wording import humanize, norm

    assert humanize("deduplicateSimilarURLs") == "deduplicate similar urls"
    assert [norm(n) for n in ("userIDs", "HTTPServer", "APIKey", "OrderID")] == ["user_ids", "http_server", "api_key", "order_id"]
    for seed in range(10):  # no doc at all: the name says it is a time zone / a link
        assert re.fullmatch(r"[A-Z][a-z]+/[A-Za-z_]+", _str("timezone", "", seed))
        assert _str("webhookUrl", "", seed).startswith("https://")


def test_constants_and_dates_are_said_as_a_person_says_them():
    from forgec.scenario import _spoken, _when_done
    from forgec.synth.schema import shapes_request

    assert [_spoken(v) for v in ("ACTIVE", "NO_TAX", "in_progress", "Board meeting", 3)] == ["active", "no tax", "in progress", "Board meeting", "3"]
    assert [_when_done(f) for f in ("created_at", "updateTime", "modifiedOn", "expireTime", "start_date")] == ["created", "updated", "modified", None, None]
    assert all(shapes_request(n, "") for n in ("offset", "labelSelector", "includeAnchorText", "dry_run", "updateMask"))
    assert shapes_request("tail", "Number of lines to return from the end") and not shapes_request("title", "The page title")


def test_a_write_acts_on_the_record_its_name_and_path_name():
    """Hand-made docs in the shapes a blind review found wrong: a path's bare `{id}` belongs to the
    segment before it (`/campaigns/{id}` is a campaign's, not the subscriber's whose key is `id`);
    `DELETE /subscribers/{id}/bounces` removes bounces, not the subscriber; `add_tag_to_task` puts the
    tag in the task's list and `remove_tag_from_task` takes it out, keeping both; `delete_calendar_event(calendarId, eventId)`
    deletes the event (the head noun is the last). Such a tool is logged, never a guess on the wrong record."""
    from forgec.synth.effects import build_tool
    from forgec.synth.schema import TypeMapper, named_for_another

    env = ir.Environment(name="mail", tools=(
        _tool("getSubscriber", "Get a subscriber", [("id", S, True, "")], http_method="GET", http_path="/subscribers/{id}"),
        _tool("getCampaign", "Get a campaign", [("id", S, True, "")], http_method="GET", http_path="/campaigns/{id}"),
        _tool("updateCampaignById", "Update a campaign", [("id", S, True, ""), ("name", S, False, "")], http_method="PUT", http_path="/campaigns/{id}"),
        _tool("deleteSubscriberBouncesById", "Delete a subscriber's bounces", [("id", S, True, "")], http_method="DELETE", http_path="/subscribers/{id}/bounces"),
    ))
    s = infer_schema(env)
    v = s.views
    assert (v["updateCampaignById"].target, v["updateCampaignById"].key_param) == ("Campaign", "id")
    assert named_for_another(s, v["updateCampaignById"]) is None
    assert v["deleteSubscriberBouncesById"].target == "Subscriber"
    assert named_for_another(s, v["deleteSubscriberBouncesById"]) == "bounces"
    built = build_tool(s, v["deleteSubscriberBouncesById"], TypeMapper(s))
    assert built.conservative and "conservative" in built.decl.annotations  # logged, with its own warning
    assert len(built.diags) == 1 and "acts on bounces, not on the Subscriber record" in built.diags[0].message

    env = ir.Environment(name="work", tools=(
        _tool("get_task", "Get a task", [("task_gid", S, True, "The task's globally unique id")]),
        _tool("get_tag", "Get a tag", [("tag_gid", S, True, "")]),
        _tool("add_tag_to_task", "Add a tag to a task", [("task_gid", S, True, ""), ("tag_gid", S, True, "")]),
        _tool("remove_tag_from_task", "Remove a tag from a task", [("task_gid", S, True, ""), ("tag_gid", S, True, "")]),
        _tool("get_calendar", "Get a calendar", [("calendarId", S, True, "")]),
        _tool("get_event", "Get an event", [("eventId", S, True, "")]),
        _tool("delete_calendar_event", "Delete an event from a calendar", [("calendarId", S, True, ""), ("eventId", S, True, "")]),
    ))
    s = infer_schema(env)
    v = s.views
    assert {"Task", "Tag", "Calendar", "Event"} <= set(s.entities)  # `_gid` names an id like `_id`
    for name, adding in (("add_tag_to_task", True), ("remove_tag_from_task", False)):
        # a link: the tag joins (leaves) the task's tags; neither record is made or deleted (`schema._links`)
        assert (v[name].kind, v[name].target, v[name].key_param) == ("update", "Task", "task_gid"), name
        assert v[name].link == ("tag_gid", "tag_ids", adding), name
    assert (v["delete_calendar_event"].target, v["delete_calendar_event"].key_param) == ("Event", "eventId")
    assert named_for_another(s, v["delete_calendar_event"]) is None


def test_a_search_bound_is_no_field_of_the_records():
    from forgec.synth.schema import range_field

    assert range_field("created__lte") == "created" and range_field("date_from") == "date"
    assert range_field("price_max") == "price" and range_field("min_price") == "price"
    assert range_field("starting_after") == "starting" and range_field("title") is None
    env = ir.Environment(name="docs", tools=(
        _tool("list_documents", "List documents", [("created__lte", S, False, ""), ("date_from", S, False, ""),
                                                    ("starting_after", S, False, ""), ("skip", ir.Type(kind="integer"), False, ""),
                                                    ("correspondent", S, False, "Correspondent name")]),
        _tool("get_document", "Get a document", [("document_id", S, True, "")]),
    ))
    fields = infer_schema(env).entities["Document"].fields
    assert "correspondent" in fields
    assert not {"created__lte", "created_lte", "date_from", "starting_after", "skip"} & set(fields)


def test_person_name_parts_are_names_of_people():
    from forgec.stdlib.values import said_value

    for seed in range(10):
        r = random.Random(seed)
        for name in ("firstName", "given_name", "last_name", "family_name"):
            v = said_value(name, "", r)
            assert v and re.fullmatch(r"[A-Z][a-z'-]+(?: [A-Z][a-z'-]+)?", v), (name, v)  # one capitalised name, no topic phrase


def test_a_request_headed_by_a_light_verb_is_no_verb_phrase():
    """Doc prose around a nominalisation (listmonk's "handle campaign status modification") is not what a
    person asks for; a plain act is."""
    from forgec.gate import verb_phrase

    for bad in ("handle campaign status modification", "perform the deletion of a webhook", "initiate Google OAuth authentication flow"):
        assert not verb_phrase(bad), bad
    for good in ("cancel my order", "add a tag to my task", "update the settings of my board"):
        assert verb_phrase(good), good


def test_a_suffixed_body_holds_the_records_fields_and_a_fractional_top_is_a_position():
    """Plane's `create_cycle(project_id, cycle_data: {...})`: `cycle_data` is the request body, so the
    cycle's fields are its fields (before: one `cycle_data` field the create left empty). A float
    `top` beside `left` is where a shape sits; an integer `top` on a listing is OData's page size."""
    from forgec.synth.schema import is_modifier

    body = ir.Type(kind="object", fields=(ir.Field_(name="name", type=S, required=True), ir.Field_(name="start_date", type=S)))
    env = ir.Environment(name="plan", tools=(
        _tool("create_cycle", "Create a new cycle", [("project_id", S, True, "Project ID"), ("cycle_data", body, True, "")]),
        _tool("list_cycles", "List cycles", [("project_id", S, True, "Project ID")]),
        _tool("get_project", "Get a project", [("project_id", S, True, "")]),
    ))
    s = infer_schema(env)
    assert {"name", "start_date"} <= set(s.entities["Cycle"].fields) and "cycle_data" not in s.entities["Cycle"].fields
    num, whole = ir.Type(kind="number"), ir.Type(kind="integer")
    assert not is_modifier(ir.Param(name="top", type=num, description="Top"))
    assert is_modifier(ir.Param(name="top", type=whole, description="Top"))
    assert is_modifier(ir.Param(name="top", type=num, description="Maximum number of projects to return"))


def test_an_id_typed_number_names_its_record():
    """zod's `z.number()` ids (Azure DevOps MCP: `pullRequestId: number`): the pull request is the
    record `update_pull_request` changes (before: the repository, which gained pull-request fields),
    and its key is a whole number."""
    num = ir.Type(kind="number")
    env = ir.Environment(name="devops", tools=(
        _tool("update_pull_request", "Update a pull request", [("repositoryId", S, True, "The ID of the repository"),
                                                               ("pullRequestId", num, True, "The ID of the pull request"),
                                                               ("title", S, False, "The new title")]),
        _tool("get_pull_request", "Get a pull request", [("pullRequestId", num, True, "The ID of the pull request")]),
        _tool("list_repositories", "List repositories", []),
    ))
    s = infer_schema(env)
    v = s.views["update_pull_request"]
    assert (v.target, v.key_param) == ("PullRequest", "pullRequestId")
    assert s.entities["PullRequest"].key_type == "int" and "title" in s.entities["PullRequest"].fields
    assert "title" not in s.entities["Repository"].fields


def test_a_field_named_for_a_kind_of_value_holds_one_and_a_posix_time_is_a_time():
    """Review 11: a card's `pin` held "conference travel", a downtime's POSIX `start` 159.29. A name that
    ends in a kind Faker knows (`mime_type`, `license_plate`, `country_code`) holds one; a PIN is digits;
    a number whose doc says POSIX/epoch is a time near the world's date (2024-05-15), checked by datetime."""
    for seed in range(10):
        assert re.fullmatch(r"[a-z]+/[\w.+-]+", _str("mime_type", seed=seed))
        assert re.fullmatch(r"[A-Z]{2,3}", _str("country_code", seed=seed))
        assert re.fullmatch(r"\d{4}", _str("pin", seed=seed))
        assert re.search(r"\d", _str("license_plate", seed=seed))
        assert _str("territory", seed=seed).lower() not in FILLER
        t = generate_value({"type": "float", "doc": "POSIX timestamp for when the mute should end"}, "end", random.Random(seed))
        when = dt.datetime.fromtimestamp(t, dt.timezone.utc).date()
        assert abs((when - dt.date(2024, 5, 15)).days) <= 61
        assert generate_value({"type": "int"}, "start", random.Random(seed)) < 10**6  # a bare `start` may be an offset


def test_a_number_named_for_a_record_is_that_records_id():
    """Paperless' `post_document(correspondent: number, tags: number[])`: the user named "correspondent 50"
    (review 13). A number (or list of numbers) named as a record of the env refers to it, so the task
    looks the correspondent up by name; a string of the same name stays a plain value."""
    num = ir.Type(kind="number")
    env = ir.Environment(name="docs", tools=(
        _tool("post_document", "Upload a new document", [("title", S, True, "Title"), ("correspondent", num, False, ""),
                                                          ("tags", ir.Type(kind="array", items=num), False, "")]),
        _tool("list_correspondents", "List correspondents", [("correspondent_id", num, False, "The ID of the correspondent")]),
        _tool("list_tags", "List tags", [("tag_id", num, False, "Tag ID")]),
        _tool("set_label", "Set a label", [("correspondent_id", num, True, "ID"), ("tag", S, True, "The label text")]),
    ))
    s = infer_schema(env)
    v = s.views["post_document"]
    assert v.refs.get("correspondent") == "Correspondent" and v.list_refs.get("tags") == "Tag"
    assert "tag" not in s.views["set_label"].refs
