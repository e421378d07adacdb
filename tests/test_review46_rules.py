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
from forgec.lang import ast as A


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


def test_an_id_described_as_the_id_of_a_record_takes_that_record():
    """WordPress documents `id: number` as "The ID of the comment to update." and "The unique identifier for the
    comment.": the comment's key, where the tool's name says "comment" too. Read as an X called "the", 25 of its
    tools only logged their calls."""
    from forgec import ir
    from forgec.synth import schema as S

    tools, _ = read_file(BROAD / "npm_mcp_wordpress" / "tools_list.json")
    sc = S.infer_schema(ir.Environment(name="wp", tools=tools))
    for tool, ent in (("wp_update_comment", "Comment"), ("wp_get_comment", "Comment"), ("wp_delete_post", "Post"), ("wp_update_tag", "Tag")):
        p = next(p for p in _tool(tools, tool).params if p.name == "id")
        assert S._described_owner(sc, p, tool) == ent, (tool, p.description)
    # the tool's own name must say the record too: "the unique identifier of the site" on a comment tool is no site
    p = next(p for p in _tool(tools, "wp_update_comment").params if p.name == "id")
    assert S._described_owner(sc, p, "wp_update_post") is None


def test_an_optional_record_nobody_names_is_left_out(tmp_path):
    """Every WordPress tool takes `site` ("The ID of the WordPress site to target ... Required if multiple sites are
    configured"): optional, and no list of sites exists, so no person can name one. Left out (the default site), it
    no longer ends each request: the env had 14 tasks from 3 tools; its deletes of posts, pages, tags and comments
    are asked for now, each after the list that finds the record's id."""
    from forgec.build import CompileOptions, compile_build

    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[BROAD / "npm_mcp_wordpress"], out=out, tasks_per_env=40, seed=0, oracle_check=False))
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    assert len(tasks) >= 30, len(tasks)
    assert not any("site" in c["arguments"] for t in tasks for c in t["gold_calls"])
    deletes = {c["tool"] for t in tasks for c in t["gold_calls"] if c["tool"].startswith("wp_delete_")}
    assert len(deletes) >= 3, deletes
    for t in tasks:  # each delete's id was found by a list call before it
        calls = [c["tool"] for c in t["gold_calls"]]
        for i, c in enumerate(calls):
            if c.startswith("wp_delete_"):
                assert any(x.startswith("wp_list_") for x in calls[:i]), calls


def _mail_docs() -> dict:
    """A mail server's tools as an MCP server documents them: every tool takes the caller's `account` ("Account name
    from list_accounts"), and the emails are listed only for an account."""
    acct = {"type": "string", "description": "Account name from list_accounts"}

    def tool(name, desc, props, req):
        return {"name": name, "description": desc, "inputSchema": {"type": "object", "properties": {"account": acct, **props},
                                                                   "required": ["account", *req]}}
    email_id = {"type": "string", "description": "Email ID from list_emails"}
    return {"tools": [
        {"name": "list_accounts", "description": "List all configured email accounts.", "inputSchema": {"type": "object", "properties": {}}},
        tool("list_emails", "List emails in the inbox.", {"subject": {"type": "string", "description": "Filter by subject keyword"}}, []),
        tool("get_email", "Get one email by its ID.", {"emailId": email_id}, ["emailId"]),
        tool("delete_email", "Delete an email.", {"emailId": email_id}, ["emailId"]),
        tool("move_email", "Move an email to another folder.", {"emailId": email_id,
             "folder": {"type": "string", "enum": ["Archive", "Receipts", "Travel"], "description": "Destination folder"}}, ["emailId", "folder"]),
        tool("send_email", "Send a new email.", {"to": {"type": "array", "items": {"type": "string"}, "description": "List of recipient email addresses"},
             "subject": {"type": "string", "description": "Email subject"}, "body": {"type": "string", "description": "Email body"}},
             ["to", "subject", "body"]),
    ]}


def test_a_list_that_takes_the_callers_account_is_a_lookup(tmp_path):
    """`list_emails(account)` lists the emails of the account every tool takes: the user says their account once and
    the agent lists its emails to find the one they name (before: no lister took a required parameter, so the email
    MCP server yielded no task; "no-lookup" for every write)."""
    from conftest import compile_doc

    out = compile_doc(tmp_path, "mail", "tools_list.json", _mail_docs(), 30)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    acting = [t for t in tasks if any(c["tool"] in ("delete_email", "move_email") for c in t["gold_calls"])]
    assert acting, [t["instruction"] for t in tasks]
    for t in acting:
        calls = t["gold_calls"]
        first = next(i for i, c in enumerate(calls) if c["tool"] in ("delete_email", "move_email"))
        assert any(c["tool"] == "list_emails" for c in calls[:first]), [c["tool"] for c in calls]
        accounts = {c["arguments"]["account"] for c in calls if "account" in c["arguments"]}
        assert len(accounts) == 1, accounts  # one account for the whole task
        assert f"is {next(iter(accounts))}" in t["instruction"], t["instruction"]  # said by the user, once


def test_a_new_email_goes_to_someone_else(tmp_path):
    """"send a new email ... to me.work@mail.com" from the account me.work@mail.com: a recipient is someone else."""
    from conftest import compile_doc

    out = compile_doc(tmp_path, "mail", "tools_list.json", _mail_docs(), 30)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    sends = [c for t in tasks for c in t["gold_calls"] if c["tool"] == "send_email"]
    assert sends, [t["instruction"] for t in tasks]
    for c in sends:
        assert c["arguments"]["account"] not in c["arguments"]["to"], c["arguments"]
        assert all(not x.startswith("me.") for x in c["arguments"]["to"]), c["arguments"]


def test_a_resource_first_name_is_read_as_resource_then_action():
    """ERPNext names its tools resource first (`erpnext_purchase_order_get`): "purchase" opens the name as a noun,
    not the verb "purchase"; every word before the action names the record, so the get reads a purchase order by
    its name ("Purchase Order name (e.g. PO-00001)") instead of only logging the call."""
    from forgec import ir
    from forgec.synth import schema as S

    assert S._verb(["purchase", "order", "get"], "") == "get"
    assert S._verb(["journal", "entry", "create"], "") == "create"
    assert S._verb(["create", "order", "update"], "") == "create"  # a verb that is no noun still opens the name
    assert S._nouns(["purchase", "order", "get"], "get") == ["purchase", "order"]
    tools, _ = read_file(next((BROAD / "npm_casys_mcp_erpnext").glob("*.json")))
    sc = S.infer_schema(ir.Environment(name="erp", tools=tools))
    get = _tool(tools, "erpnext_purchase_order_get")
    assert S._described_owner(sc, get.params[0], get.name, "read") == "PurchaseOrder", get.params[0].description
    sales = _tool(tools, "erpnext_sales_order_get")  # "Sales Order name (e.g. SO-00001)"
    assert S._described_owner(sc, sales.params[0], sales.name, "read") == "SalesOrder"
    assert S._described_owner(sc, sales.params[0], get.name, "read") is None  # the tool's own name must say the record
    assert S._described_owner(sc, sales.params[0], sales.name, "create") is None  # a create's `name` is the new one's


def test_a_fastmcp_result_wrapper_is_no_field_of_a_record():
    """FastMCP wraps a plain return as `{"result": string}`: Book Lover's books got a `result` field holding ""."""
    from forgec import ir
    from forgec.synth import schema as S

    tools, _ = read_file(BROAD / "pypi_mcp_book_lover" / "tools_list.json")
    sc = S.infer_schema(ir.Environment(name="bl", tools=tools))
    assert S.unwrap_return(sc, _tool(tools, "bl_add_book").returns) is None
    assert "result" not in sc.entities["Book"].fields


def test_a_title_the_docs_default_to_the_record_acted_on_is_left_to_the_default():
    """"Reminder title (defaults to email subject)": the reminder made from an email takes its subject; a made-up
    title ("a reminder called Partner integration from my email about the garden project") is about something else."""
    from forgec.scenario import _defaults_to_field

    assert _defaults_to_field("Reminder title (defaults to email subject)", {"email_id": "e1", "subject": "Garden project"})
    assert _defaults_to_field("Defaults to the issue's title.", {"title": "Login fails"})
    assert not _defaults_to_field("Page size, defaults to 20", {"title": "x"})
    assert not _defaults_to_field("Reminder title", {"subject": "x"})


def _shop_docs() -> dict:
    """A store's tools as Shopify's MCP server documents them: products and variants by GID, one example given."""
    obj = lambda props, req: {"type": "object", "properties": props, "required": req}  # noqa: E731
    return {"tools": [
        {"name": "get_products", "description": "List products in the store.", "inputSchema": obj({}, [])},
        {"name": "delete_product", "description": "Delete a product.",
         "inputSchema": obj({"id": {"type": "string", "description": "Shopify product GID, e.g. gid://shopify/Product/123"}}, ["id"])},
        {"name": "update_product", "description": "Update a product's title.",
         "inputSchema": obj({"id": {"type": "string", "description": "Shopify product GID, e.g. gid://shopify/Product/123"},
                             "title": {"type": "string", "description": "New product title"}}, ["id"])},
        {"name": "get_variants", "description": "List product variants.", "inputSchema": obj({}, [])},
        {"name": "delete_variant", "description": "Delete a product variant.",
         "inputSchema": obj({"variantId": {"type": "string", "description": "Variant GID to delete"}}, ["variantId"])},
    ]}


def test_keys_take_the_form_the_docs_show_for_an_id(tmp_path):
    """"Shopify product GID, e.g. gid://shopify/Product/123": the world's products are keyed so, and a variant the
    docs call a "Variant GID" too (review 46: five Shopify tasks rejected for bare numeric ids)."""
    from conftest import compile_doc

    out = compile_doc(tmp_path, "shop", "tools_list.json", _shop_docs(), 20)
    state = json.loads(next((out / "states").glob("*.json")).read_text())["entities"]
    products = [k for e, recs in state.items() if e.endswith("Product") for k in recs]
    variants = [k for e, recs in state.items() if e.endswith("Variant") for k in recs]
    assert products and all(re.fullmatch(r"gid://shopify/Product/\d{6,}", k) for k in products), products[:3]
    assert variants and all(re.fullmatch(r"gid://shopify/\w*Variant/\d{6,}", k) for k in variants), variants[:3]
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    ids = [c["arguments"]["id"] for t in tasks for c in t["gold_calls"] if c["tool"] in ("delete_product", "update_product")]
    assert ids and all(i.startswith("gid://shopify/Product/") for i in ids), ids[:3]


def test_a_renamed_product_stays_the_same_kind_of_thing():
    """"rename my product Classic Keyboard to Compact Blender" changes what the product is (review 46, twice)."""
    from forgec.stdlib.values import said_value

    for i in range(8):
        v = said_value("title", "", random.Random(i), about="Classic Keyboard", noun="Product")
        assert v.endswith(" Keyboard") and v != "Classic Keyboard", v


def test_a_deadline_set_beside_a_start_comes_after_it():
    """"set its planned start date to 2024-06-13 and its deadline to 2024-05-24" (review 46): the end is read after
    the start the same request sets."""
    from forgec.scenario import _after_start

    for i in range(5):
        got = _after_start("2024-05-24T09:00:00", {"planned_start_date": "2024-06-13"}, "deadline", random.Random(i))
        assert "2024-06-20" <= got[:10] <= "2024-07-11" and got[10:] == "T09:00:00", got
    assert _after_start("2024-05-24", {"name": "x"}, "deadline", random.Random(0)) == "2024-05-24"  # no start: as made


def test_a_records_key_has_the_type_of_its_own_id_params():
    """GitLab's 17 tools take `issue_iid: string`; one other param only mentions an issue by a number. The key is a
    string, so the gold sends what the docs ask (review 46: three tasks sent `issue_iid: 2044`)."""
    from forgec import ir
    from forgec.synth.rules import synthesize_rules

    tools, _ = read_file(BROAD / "npm_zereight_mcp_gitlab" / "tools_list.json")
    docs = json.loads((BROAD / "npm_zereight_mcp_gitlab" / "tools_list.json").read_text())["tools"]
    types = {t["inputSchema"]["properties"]["issue_iid"]["type"] for t in docs if "issue_iid" in t["inputSchema"].get("properties", {})}
    assert types == {"string"}  # the docs, read by hand
    env, _ = synthesize_rules(ir.Environment(name="gl", tools=tools))
    issue = next(e for e in env.entities if e.name == "Issue")
    key = next(f for f in issue.fields if f.name == issue.key)
    assert key.type == A.PrimType("str"), key.type


def test_a_list_that_hides_records_by_default_is_called_with_its_widening_switch(tmp_path):
    """dex's `list_tasks` "By default shows only pending tasks", `all: "Show all tasks (pending and completed)"`;
    Grafana's `drill: "Whether to include drill incidents"`. The gold list passes the switch, so the record it acts
    on is one the docs' own call returns (review 47: eleven gold lists returned what the default leaves out)."""
    from conftest import compile_doc

    obj = lambda props, req: {"type": "object", "properties": props, "required": req}  # noqa: E731
    docs = {"tools": [
        {"name": "list_tasks", "description": "List tasks. By default shows only pending tasks.",
         "inputSchema": obj({"all": {"type": "boolean", "description": "Show all tasks (pending and completed)"},
                             "completed": {"type": "boolean", "description": "Filter by completion status"}}, [])},
        {"name": "create_task", "description": "Create a task.", "inputSchema": obj({"name": {"type": "string", "description": "Task name"},
                                                                                      "description": {"type": "string", "description": "Task description"}}, ["name"])},
        {"name": "delete_task", "description": "Delete a task.", "inputSchema": obj({"task_id": {"type": "string", "description": "The task ID"}}, ["task_id"])},
        {"name": "rename_task", "description": "Rename a task.", "inputSchema": obj({"task_id": {"type": "string", "description": "The task ID"},
                                                                                     "name": {"type": "string", "description": "New task name"}}, ["task_id", "name"])},
    ]}
    out = compile_doc(tmp_path, "tasks", "tools_list.json", docs, 20)
    tasks = [json.loads(x) for f in (out / "tasks").glob("*.jsonl") for x in f.read_text().splitlines() if x.strip()]
    lists = [c["arguments"] for t in tasks for c in t["gold_calls"] if c["tool"] == "list_tasks"]
    assert lists, [t["instruction"] for t in tasks]
    assert all(a.get("all") is True for a in lists), lists[:3]


def test_a_date_pattern_takes_the_date_a_time_was_made_on():
    """Plane documents dates with a leap-year-checking regex; a datetime failed it and `rstr` drew "2404-02-29" from
    the pattern (review 47: modules "archived" in 2148 and 2404). The date part that fits is kept."""
    from forgec.stdlib.values import _patterned

    doc = ("(pattern: ^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-"
           "(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))$)")
    for i in range(5):
        assert _patterned("2024-05-15T10:30:00Z", doc, random.Random(i)) == "2024-05-15"


def test_a_sort_option_is_never_a_filter():
    """Asana's `asana_search_tasks(sort_ascending: bool = false, "Sort in ascending order")` kept only tasks whose
    `sort_ascending` was false (review 48: five searches that silently dropped records). A sort option shapes the
    request; an `order_id` or `order_total` is a record's."""
    from forgec.synth.schema import shapes_request

    for n in ("sort_ascending", "sort_by", "order_by", "orderBy", "sortDirection", "ascending"):
        assert shapes_request(n, ""), n
    for n in ("order_id", "order_total", "order_status", "name"):
        assert not shapes_request(n, ""), n
    src = ""
    from forgec import ir
    from forgec.synth.rules import synthesize_rules

    tools, _ = read_file(BROAD / "npm_roychri_mcp_server_asana" / "tools_list.json")
    assert any(p.name == "sort_ascending" for t in tools for p in t.params)  # the docs, read by hand
    env, _ = synthesize_rules(ir.Environment(name="asana", tools=tools))
    for t in env.tools:
        for n in A.walk(t):
            if isinstance(n, A.Attr) and isinstance(n.obj, A.Name) and n.obj.id == "it":
                src += n.name + " "
    assert not re.search(r"\bsort_?\w*|\border_?by\b", src, re.I), src
