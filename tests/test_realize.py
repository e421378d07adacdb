"""Realization from the docs' own language (forgec/realize.py, issue 21) and who asks (forgec/scenario.py).

Every doc below is verbatim from a real doc set (tests/corpus: core/, broad/; the
BFCL multi-turn style the issue's reviewer read); the expected phrases are written by hand: what
a person would ask for, found by grammar (the sentence that describes an act, its main verb and
object), never by the doc's first words.
"""

from __future__ import annotations

import pytest

from forgec.english import verb_base as base_form, verb_lemma
from forgec.realize import clause, doc_verb, name_verb, sentences

from conftest import BROAD, CORPUS

_REAL = [
    # preambles and purpose openers are skipped, not spoken
    ("This tool belongs to the Vehicle Control System, which allows users to control various aspects of the car such as "
     "engine, doors, climate control, lights, and more. Tool description: Lock or unlock doors of the vehicle.",
     "lock doors of the vehicle"),
    ("This tool belongs to the travel system, which allows users to book flights, manage credit cards, and view budget "
     "information. Tool description: Book a flight given the travel information.", "book a flight"),
    ("This can be used to rename a session.", "rename a session"),
    # the operation's own name as the subject (gRPC-gateway OpenAPI, openapi_memos)
    ("DeleteMemoView deletes a memo view for a user.", "delete a memo view"),  # the user it is for is the one asking
    ("Schedule a property visit for a potential buyer or tenant on a specific date.", "schedule a property visit on a date"),
    ("ListMemos lists memos with pagination and filter.", "list memos"),
    # third-person verbs with the tool as subject, adverbs, "the specified X"  (bfcl_dependency_track_access)
    ("This function permanently removes a user from the system. It requires the user's unique identifier to execute.",
     "remove a user"),  # the system itself is no part of the request (review 50, 68)
    ("Deletes the specified team from the system. This action is irreversible.", "delete the team"),
    ("Updates the properties of an existing group in the OpenID Connect (OIDC) system.",
     "update the properties of a group in the OpenID Connect system"),
    # MCP prose (mcp_server_git, mcp_server_filesystem, npm_icloud_mcp, npm_codefuturist_email_mcp)
    ("Unstages all staged changes", "unstage all staged changes"),
    ("Move or rename files and directories. Can move files between directories and rename them in a single operation.",
     "move files and directories"),
    ("Create a new mailbox/folder", "create a new mailbox"),
    ("Delete a contact from iCloud Contacts permanently.", "delete a contact from iCloud Contacts permanently"),
    ("Remove a label from an email. For ProtonMail, this removes the email from the label folder.", "remove a label from an email"),
    # OpenAPI summary run into its description (openapi_jupyter_server)
    ("Create a new file in the specified path A POST to /api/contents/path creates a New untitled, empty file or directory.",
     "create a new file in the path"),
    ("Get a list of checkpoints for a file List checkpoints for a given file. There will typically be zero or one results.",
     "get a list of checkpoints for a file"),
    ("Kill a kernel and delete the kernel id", "kill a kernel"),
    # tau-bench: a second predicate and the agent's instructions are not the act
    ("Modify the shipping address of a pending order. The agent needs to explain the modification detail and ask for "
     "explicit user confirmation (yes/no) to proceed.", "modify the shipping address of a pending order"),
    ("Cancel a confirmed reservation and refund its total price to the owner's travel-credit balance.", "cancel a confirmed reservation"),
    ("Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user explicitly asks.",
     "transfer the user to a human agent"),
    # playwright: a dangling preposition is dropped
    ("Select an element on the page with Select tag", "select an element on the page"),
    # Microsoft Graph (npm_softeria_ms_365_mcp_server): the act the docs let someone do, and a type's name in words
    ("This action allows the organizer of a meeting to send a cancellation message and cancel the event.", "send a cancellation message"),
    ("Update the properties of a todoTaskList object.", "update the properties of a todo task list"),
    ("Create a new iPhone app.", "create a new iPhone app"),
    # an OpenAPI summary and description on one line (openapi_overseerr's env.forge)
    ("Delete Radarr instance Deletes an existing Radarr instance based on the radarrId parameter.", "delete Radarr instance"),
    ("Update a single slider Updates a single slider", "update a single slider"),
    ("Update the Slack Channels list", "update the Slack Channels list"),
    # pypi_mcp_atlassian (review 68): "Cloud" is a verb too, but after "a new" it names the page; the participle
    # phrase after the noun says how, not what ("create a new with the template ..." was the task)
    ("Create a new Cloud page pre-populated with a template's body.\n\nThis operation is only available for Confluence Cloud.",
     "create a new Cloud page"),
    ("Send a message to users subscribed to a list.", "send a message to users subscribed to a list"),
    # npm_baruchiro_paperless_mcp (review 68): a warning sign before the label, and the system itself closing the phrase;
    # the doc's second sentence ("This will remove the tag ...") gave "remove my tag", the word of another tool
    ("\u26a0\ufe0f DESTRUCTIVE: Permanently delete a tag from the entire system. This will remove the tag from ALL documents.",
     "delete a tag"),
]


@pytest.mark.parametrize("doc,want", _REAL)
def test_clause_from_real_docs(doc, want):
    c = clause(doc)
    assert c is not None and c.text == want


@pytest.mark.parametrize("doc", [
    # only a description of what comes back, then advice to the model (mcp_server_filesystem list_allowed_directories)
    "Returns the list of directories that this server is allowed to access. Subdirectories within these allowed "
    "directories are also accessible. Use this to understand which directories and their nested paths are available.",
    "This tool belongs to the vehicle control system.",
    "Note: the folder must be empty first.",
    "It allows the file to be shared with others.",  # a passive after "allows X to": no act of the user's
    "See `pay_order`.",
    "",
])
def test_no_act_no_clause(doc):
    assert clause(doc) is None and doc_verb(doc) == ""


def test_sentences_split_by_grammar():
    assert sentences("Cancel an order Cancel a pending or paid order (not a shipped one).") == ["Cancel an order", "Cancel a pending or paid order"]
    # a capitalised noun that could be a verb, not in base form, is no new sentence
    assert sentences("Delete a contact from iCloud Contacts permanently.") == ["Delete a contact from iCloud Contacts permanently"]
    assert sentences("Add credit, e.g. as a gift. Returns the balance.") == ["Add credit, e.g. as a gift", "Returns the balance"]


def test_morphology_from_the_dictionary():
    assert [base_form(w) for w in ("Switches", "records", "unstages", "applies", "focuses", "goes", "access", "status")] == \
        ["switch", "record", "unstage", "apply", "focus", "go", "access", "status"]
    assert verb_lemma("creates") == "create" and verb_lemma("created") is None and verb_lemma("listing") is None
    assert verb_lemma("status") is None and verb_lemma("the") is None
    assert name_verb("git_reset") == "reset" and name_verb("Media_3_PlayMovie") == "play" and name_verb("playwright_click") == "click"


def test_verb_of_a_service_qualified_operation_name():
    """`MemoViewService_DeleteMemoView` deletes ("view" is a noun there); plain names as before."""
    from forgec.realize import name_verb

    assert [name_verb(n) for n in ("MemoViewService_DeleteMemoView", "UserService_ListUserWebhooks", "Media_3_PlayMovie",
                                   "git_reset", "delete_calendar_event")] == ["delete", "list", "play", "reset", "delete"]


def test_deterministic():
    doc = _REAL[0][0]
    assert clause(doc) == clause(doc)
    clause.cache_clear()
    assert clause(doc).text == _REAL[0][1]


# --------------------------------------------------------------------------- who asks


def _scenario_model(build, env):
    import importlib.util
    import json

    from forgec.graph import build_graph
    from forgec.lang import ast as A
    from forgec.lang.parse import parse
    from forgec.scenario import _Model, _Sampler
    from forgec.sample import SampleConfig

    forge = build / "src" / env / "env.forge"
    mod, _ = parse(forge.read_text(), str(forge))
    decl = next(d for d in mod.items if isinstance(d, A.EnvDecl))
    spec = importlib.util.spec_from_file_location(f"_realize_{env}", build / "envs" / env / "env.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    world = json.loads((build / "states" / f"{env}.json").read_text())
    graph = build_graph(decl)
    return _Model(decl, module, world, graph), _Sampler(decl, module, world, graph, SampleConfig(tasks_per_env=10))


@pytest.mark.parametrize("name,env,user,owner", [
    # a customer of a shop / an airline: the user record asks (their orders, their reservations)
    ("tau_bench_retail", "tau_bench_retail", "User", None),
    # an email client's `Account` records are configured accounts, not customers: the mailbox owner asks
    ("npm_icloud_mcp", "npm_icloud_mcp", None, "keeps their "),
])
def test_who_asks(name, env, user, owner, tmp_path):
    import subprocess
    import sys

    src = CORPUS / name if (CORPUS / name).is_dir() else BROAD / name
    out = tmp_path / "b"
    r = subprocess.run([sys.executable, "-m", "forgec", "compile", str(src), "-o", str(out), "-q", "--tasks", "5"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    m, s = _scenario_model(out, env)
    assert m.user == user
    if owner:
        assert owner in s.owner and not s.owner.endswith(owner)  # "someone who keeps their emails and calendars here"
        assert s.write_tools  # with the owner asking, the env's writes are the owner's business


def test_stats_say_why_with_the_cause_of_no_intent():
    """npm_mcp_wordpress before the owner asked: every scenario attempt made no intent (an argument
    nothing could fill), and the walk fallback's tasks all named a tool: both said, each in words."""
    from forgec.commands.stats import few_tasks_lines

    lines = few_tasks_lines({"wp": {"tasks": 0, "has_write": True,
                                    "scenario_rejected": {"no-intent:unfillable-argument": 251, "nothing-to-ask": 49},
                                    "sampler_rejected": {"names-tool": 120, "too-short": 76}}})
    assert lines == ["wp: 0 tasks; scenario sampler: no-intent:unfillable-argument 251 (no write the user could ask for was made: "
                     "most often, a required argument has no value the user knows or the records give); nothing-to-ask 49 "
                     "(no read answers a question about the user's records) | walk fallback: names-tool 120 (the instruction "
                     "names a tool); too-short 76"]


def test_a_manner_prefix_and_an_endpoint_in_code_leave_the_verb_phrase():
    """Redmine's MCP server (blind review 20): "Hard-delete an issue via ``DELETE /issues/{id}.json``." gave no
    clause, so the next sentence did: "issue deletion in Redmine is"."""
    doc = "Hard-delete an issue via ``DELETE /issues/{id}.json``.  Issue deletion in Redmine is **irreversible**."
    assert clause(doc).text == "delete an issue"
    assert clause("Soft-delete a project. It can be restored.").text == "delete a project"
    assert (clause("Re-run a failed job.") or type("C", (), {"text": ""})).text != "run a failed job"  # a verb's own prefix stays
