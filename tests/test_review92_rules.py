"""Rules from blind review 92 and the zero-task doc sets of the twenty-third session, each checked on a small doc
written as its source writes it (BoondManager's French MCP docs, BFCL's function list, Todoist's batch tools,
a task-manager MCP and Focalboard's Swagger 2 bodies)."""

from __future__ import annotations

import json
import random
import re

from conftest import compile_doc, mcp_tool as _tool, tasks_of as _tasks

from forgec.ir import Param, Tool, Type
from forgec.stdlib.values import _patterned
from forgec.synth.schema import classify


def _mcp(*tools: dict) -> dict:
    return {"tools": list(tools)}




ID = {"type": "string", "pattern": "^\\d+$", "description": "Identifiant unique de l'entité (numérique)"}

BOOND = _mcp(  # BoondManager's shape: French docs, `Plutôt que :` notes naming the other tool both ways
    _tool("boond_candidates_search", "Recherche des candidats dans BoondManager.\n\nReturns : liste paginée des candidats.",
          {"keywords": {"type": "string", "description": "Mots-clés"}}, [], True),
    _tool("boond_candidates_get", "Récupère la fiche complète d'un(e) candidat par son ID numérique.\n\n- `tab` cible un onglet précis "
          "(`information`, `actions`…).\n\nReturns : JSON de l'entité. Lecture seule.", {"id": ID}, ["id"], True),
    _tool("boond_candidates_delete", "Supprime un(e) candidat par son ID.", {"id": ID}, ["id"]),
    _tool("boond_actions_search", "Recherche des actions (appels, rendez-vous) dans BoondManager.",
          {"candidateId": {"type": "string", "description": "ID du candidat"}}, [], True),
    _tool("boond_actions_create", "Crée une action (appel, rendez-vous) pour un(e) candidat.", {
        "candidateId": {"type": "string", "description": "ID du candidat"}, "title": {"type": "string", "description": "Titre de l'action"},
        "startDate": {"type": "string", "description": "Date de début"}}, ["candidateId", "title"]),
    _tool("boond_invoices_search", "Liste et recherche les factures client.\n\nPlutôt que : `boond_provider_invoices_search` pour les "
          "factures d'achat.", {"keywords": {"type": "string", "description": "Mots-clés"}}, [], True),
    _tool("boond_provider_invoices_search", "Liste et recherche les factures fournisseur.\n\nPlutôt que : `boond_invoices_search` pour "
          "les factures de vente adressées aux clients.", {"keywords": {"type": "string", "description": "Mots-clés"}}, [], True),
    _tool("boond_invoices_get", "Récupère la fiche complète d'une facture par son ID.", {"id": ID}, ["id"], True),
    _tool("boond_invoices_delete", "Supprime une facture par son ID.", {"id": ID}, ["id"]),
    _tool("boond_invoices_create", "Crée une facture.", {"reference": {"type": "string", "description": "Référence de la facture"},
                                                        "title": {"type": "string", "description": "Titre de la facture"},
                                                        "state": {"type": "string", "enum": ["draft", "sent", "paid"]}}, ["reference", "title"]),
    _tool("boond_candidates_create", "Crée un(e) candidat.", {"firstName": {"type": "string", "description": "Prénom du candidat"},
                                                              "lastName": {"type": "string", "description": "Nom de famille du candidat"}},
          ["firstName", "lastName"]),
)


def test_a_note_naming_another_kind_leaves_a_read_of_the_record(tmp_path):
    """Review 92: `boond_candidates_get` ("the `actions` tab", in a note after what it does) was read as a list of the
    candidate's actions, so the check before a delete showed two actions and not the candidate. What a tool does is
    its first sentence."""
    out = compile_doc(tmp_path, "boond", "tools_list.json", BOOND, 8)
    src = next((out / "src").glob("*/env.forge")).read_text()
    get = src[src.index("tool boond_candidates_get("):]
    get = get[:get.index("\n  }\n")]
    assert "-> Candidate" in get and "Action where" not in get, get


def test_two_docs_that_name_each_other_keep_the_plainer_lister(tmp_path):
    """Review 92: client invoices were found with the supplier-invoice search, since the client search's doc names
    the supplier one ("Rather than: `boond_provider_invoices_search` for purchase invoices"). Each names the other: the
    plainer list stays the lookup."""
    out = compile_doc(tmp_path, "boond", "tools_list.json", BOOND, 20)
    tasks = _tasks(out)
    calls = [c["tool"] for t in tasks for c in t["gold_calls"]]
    assert "boond_invoices_search" in calls, calls
    assert "boond_provider_invoices_search" not in calls, calls


def test_a_date_time_pattern_gets_a_real_time():
    """Review 92: an action's `endDate` drawn from its pattern read "8485-21-84T93:84:29.7293…". A date the world made
    is given the time of day the pattern asks for."""
    doc = "Date de fin (pattern: ^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?([+-]\\d{2}:?\\d{2}|Z)?$)"
    assert _patterned("2024-03-25", doc, random.Random(0)) == "2024-03-25T09:00:00Z"
    assert _patterned("2024-03-25 14:30:00", doc, random.Random(0)) == "2024-03-25T14:30:00Z"
    assert _patterned("2024-03-25", "Day (pattern: ^\\d{4}-\\d{2}-\\d{2}$)", random.Random(0)) == "2024-03-25"


BFCL_PROJECTS = [  # BFCL's Dependency-Track functions: an update whose optional params document defaults
    {"name": "project_api.get_projects", "description": "Retrieve a list of all projects.",
     "parameters": {"type": "dict", "required": [], "properties": {}}},
    {"name": "project_api.create_project", "description": "Create a new project with the given name and status.",
     "parameters": {"type": "dict", "required": ["name"], "properties": {
         "name": {"type": "string", "description": "The name of the new project."},
         "description": {"type": "string", "description": "A brief description of the project.", "default": ""},
         "status": {"type": "string", "enum": ["active", "on hold", "archived"], "description": "The status of the project.", "default": "active"}}}},
    {"name": "project_api.update_project", "description": "Updates the specified project's details such as its name, status, and description.",
     "parameters": {"type": "dict", "required": ["project_id"], "properties": {
         "project_id": {"type": "string", "description": "The unique identifier of the project to be updated."},
         "project_name": {"type": "string", "description": "The new name of the project.", "default": "Untitled Project"},
         "description": {"type": "string", "description": "A brief description of the project.", "default": "No description provided."}}}},
    {"name": "project_api.delete_project", "description": "Delete the project with the given id.",
     "parameters": {"type": "dict", "required": ["project_id"], "properties": {
         "project_id": {"type": "string", "description": "The unique identifier of the project to delete."}}}},
]


def test_an_update_that_would_reset_a_field_by_its_default_is_no_gold_call(tmp_path):
    """Review 92: `update_project(project_id, description)` left `project_name` to its documented default
    "Untitled Project", so by the docs the gold call renamed the project. The new name is a value (not a project
    it names), the env sets it, and no gold call leaves it to a default that differs from the record's."""
    from forgec.build import CompileOptions, compile_build

    folder = tmp_path / "docs" / "projects"  # BFCL's files hold one function per line
    folder.mkdir(parents=True)
    (folder / "functions.json").write_text("\n".join(json.dumps(f) for f in BFCL_PROJECTS))
    out = tmp_path / "b"
    compile_build(CompileOptions(inputs=[folder], out=out, tasks_per_env=20, seed=0, oracle_check=False))
    src = next((out / "src").glob("*/env.forge")).read_text()
    upd = src[src.index("tool project_api_update_project("):]
    upd = upd[:upd.index("\n  }\n")]
    assert 'project_name: str = "Untitled Project"' in upd and "set project_id.name = project_name" in upd, upd
    proj = src[src.index("entity Project "):]
    assert "project_name" not in proj[:proj.index("}")], proj[:proj.index("}")]
    tasks = _tasks(out)
    assert tasks
    for t in tasks:
        for c in t["gold_calls"]:
            if c["tool"] == "project_api_update_project":
                assert "project_name" in c["arguments"], c


def test_open_that_the_docs_say_gets_is_a_read():
    """`open_task_details` "Get details of a specific task" was a create (a new task made by each read)."""
    t = Tool(name="open_task_details", description="Get details of a specific task by 'taskId'.",
             params=(Param(name="taskId", type=Type(kind="string"), required=True),))
    assert classify(t) == "read"
    opened = Tool(name="open_ticket", description="Open a new support ticket.",
                  params=(Param(name="subject", type=Type(kind="string"), required=True),))
    assert classify(opened) == "create"


TODO = _mcp(  # Todoist's official MCP: batches named for their records
    _tool("find_tasks", "Find tasks by text.", {"searchText": {"type": "string"}}, [], True),
    _tool("add_tasks", "Add one or more tasks.", {"tasks": {"type": "array", "items": {"type": "object", "properties": {
        "content": {"type": "string", "description": "The task name."}, "priority": {"type": "string", "enum": ["p1", "p2", "p3", "p4"]}},
        "required": ["content"]}}}, ["tasks"]),
    _tool("update_tasks", "Update existing tasks including content and priorities.", {"tasks": {"type": "array", "items": {
        "type": "object", "properties": {"id": {"type": "string", "description": "The ID of the task to update."},
                                         "content": {"type": "string", "description": "The new task name."},
                                         "priority": {"type": "string", "enum": ["p1", "p2", "p3", "p4"]}}, "required": ["id"]}}}, ["tasks"]),
)


def test_a_batch_named_for_its_records_changes_them(tmp_path):
    """Todoist's `update_tasks(tasks: [{id, content, priority}])` only logged its call: a batch was known only under the
    names `items`/`records`. One named for the records the tool's name names changes each record its item's id names."""
    out = compile_doc(tmp_path, "todo", "tools_list.json", TODO, 6)
    src = next((out / "src").glob("*/env.forge")).read_text()
    upd = src[src.index("tool update_tasks("):]
    upd = upd[:upd.index("\n  }\n")]
    assert "@conservative" not in src[src.index("tool update_tasks(") - 40:src.index("tool update_tasks(")]
    assert re.search(r"for item in tasks", upd) and "set rec.priority = item.priority" in upd, upd


FOCAL = {  # Focalboard's Swagger 2: bodies are `$ref`s to definitions with no properties
    "swagger": "2.0", "info": {"title": "Focalboard", "version": "2"},
    "paths": {
        "/boards": {"get": {"operationId": "getBoards", "summary": "Returns the boards.", "responses": {
            "200": {"description": "success", "schema": {"type": "array", "items": {"$ref": "#/definitions/Board"}}}}},
            "post": {"operationId": "createBoard", "summary": "Creates a new board", "parameters": [
                {"name": "Body", "in": "body", "required": True, "description": "the board to create", "schema": {"$ref": "#/definitions/BoardPatch"}}],
                "responses": {"200": {"description": "success", "schema": {"$ref": "#/definitions/Board"}}}}},
        "/boards/{boardID}": {"patch": {"operationId": "patchBoard", "summary": "Partially updates a board", "parameters": [
            {"name": "boardID", "in": "path", "required": True, "type": "string"},
            {"name": "Body", "in": "body", "required": True, "description": "board patch to apply", "schema": {"$ref": "#/definitions/BoardPatch"}}],
            "responses": {"200": {"description": "success", "schema": {"$ref": "#/definitions/Board"}}}}},
    },
    "definitions": {"Board": {"description": "Board groups a set of blocks and its layout", "type": "object", "properties": {
        "id": {"type": "string"}, "title": {"type": "string", "description": "The title of the board"}}},
                    "BoardPatch": {"description": "BoardPatch is a patch for modify boards"}},
}


def test_an_opaque_body_is_said_to_be_the_docs_gap(tmp_path):
    """Focalboard yields no task: every write's body is a schema with no properties. `forgec stats` says so
    ("untyped-argument"), not that the sampler found no value ("unfillable-argument")."""
    out = compile_doc(tmp_path, "focal", "swagger.json", FOCAL, 6)
    st = json.loads((out / "manifest.json").read_text())["envs"]["focal"]["stats"]
    rejected = json.dumps({**(st.get("sampler_rejected") or {}), **(st.get("scenario_rejected") or {}), **(st.get("rejected") or {})})
    assert "untyped-argument" in rejected and "unfillable-argument" not in rejected, rejected


def test_rests_word_for_the_records_kind_is_never_dictated():
    """Review 92: "set its notes to ... and its resource subtype to default task" (Asana's `resource_subtype`): REST's
    name for the record's own kind is the schema's phrase, never a change a person dictates; two plain words stay."""
    from forgec.scenario import _schema_phrase

    assert _schema_phrase("resource_subtype") and _schema_phrase("resourceType")
    assert not _schema_phrase("due_date") and not _schema_phrase("resource") and not _schema_phrase("task_type")


def _rpc(op: str, summary: str, props: dict, required: list[str], ret: str | None = None, optional_body: bool = False) -> dict:
    body = {"required": not optional_body, "content": {"application/json": {"schema": {"type": "object", "properties": props, "required": required}}}}
    resp = {"200": {"description": "OK", "content": {"application/json": {"schema": {"type": "object", "properties": {
        "data": {"$ref": f"#/components/schemas/{ret}"} if ret and not ret.startswith("[") else
        {"type": "array", "items": {"$ref": f"#/components/schemas/{ret[1:]}"}}}}}}}} if ret else {"200": {"description": "OK"}}
    return {"post": {"operationId": op, "summary": summary, "requestBody": body, "responses": resp}}


RPC = {  # Outline's shape: `POST /documents.update` with `{id, title, text}`, and the key only inside the body
    "openapi": "3.0.0", "info": {"title": "Outline", "version": "0"},
    "paths": {
        "/documents.list": _rpc("documentsList", "List all documents.", {"limit": {"type": "integer"}}, [], "[Document", True),
        "/documents.info": _rpc("documentsInfo", "Retrieve a document by its id. At least one of these parameters must be provided.",
                                {"id": {"type": "string"}, "shareId": {"type": "string"}}, [], "Document", True),
        "/documents.create": _rpc("documentsCreate", "Create a document.", {"title": {"type": "string", "description": "The title of the document."},
                                                                             "text": {"type": "string", "description": "The body of the document."}}, ["title"], "Document"),
        "/documents.update": _rpc("documentsUpdate", "Update a document.", {"id": {"type": "string", "description": "Unique identifier for the document."},
                                                                             "title": {"type": "string", "description": "The title of the document."},
                                                                             "text": {"type": "string", "description": "The body of the document."}}, ["id"], "Document"),
        "/documents.delete": _rpc("documentsDelete", "Delete a document.", {"id": {"type": "string", "description": "Unique identifier for the document."}},
                                  ["id"], None, True),
        "/collections.list": _rpc("collectionsList", "List all collections.", {}, [], "[Collection", True),
        "/collections.info": _rpc("collectionsInfo", "Retrieve a collection.", {"id": {"type": "string", "description": "Unique identifier for the collection."}},
                                  ["id"], "Collection", True),
        "/collections.delete": _rpc("collectionsDelete", "Delete a collection.", {"id": {"type": "string"}}, ["id"], None, True),
        "/collections.remove_user": _rpc("collectionsRemoveUser", "Remove a collection user.", {
            "id": {"type": "string", "description": "Identifier for the collection"}, "userId": {"type": "string"}}, ["id", "userId"]),
    },
    "components": {"schemas": {
        "Document": {"type": "object", "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "text": {"type": "string"}}},
        "Collection": {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}},
    }},
}


def test_an_rpc_body_that_names_the_record_by_id_changes_it(tmp_path):
    """Outline's 41 RPC writes (`POST /documents.update` with `{id, title}`) only logged their calls: the key was
    inside the one body. The body's id names the record the tool's name opens with; `collections.remove_user({id,
    userId})` takes a user off a collection and deletes neither. Lookups use `documents.list`, not the read whose
    docs demand a criterion (every task had failed "none-of-required")."""
    out = compile_doc(tmp_path, "outline", "openapi.json", RPC, 16)
    src = next((out / "src").glob("*/env.forge")).read_text()

    def tool(name: str) -> str:
        i = src.index(f"tool {name}(")
        return src[src.rfind("\n\n", 0, i):src.index("\n  }\n", i)]

    assert "@conservative" not in tool("documentsUpdate") and "set rec.title = item.title" in tool("documentsUpdate")
    assert "@conservative" not in tool("documentsDelete") and "delete Document[item.id]" in tool("documentsDelete")
    assert "delete Collection" not in tool("collectionsRemoveUser")
    tasks = _tasks(out)
    calls = [[c["tool"] for c in t["gold_calls"]] for t in tasks]
    assert any("documentsUpdate" in c or "documentsDelete" in c for c in calls), calls
    assert not any("documentsInfo" in c for c in calls), calls
    # `collections.info({id})` requires its id: a read of the collection it names, never a list called bare (review 93)
    assert "-> Collection\n" in tool("collectionsInfo") and "return Collection[body.id]" in tool("collectionsInfo"), tool("collectionsInfo")
    assert not [c for t in tasks for c in t["gold_calls"] if c["tool"] == "collectionsInfo" and not (c["arguments"].get("body") or {}).get("id")]
    for t in tasks:
        for c in t["gold_calls"]:
            if c["tool"] in ("documentsUpdate", "documentsDelete"):
                assert c["arguments"]["body"]["id"].startswith("document"), c


PROJECTS_MANAGER = _mcp(  # GitHub Projects' MCP: one tool per resource, the act chosen by `action`, params tied to none
    _tool("manage_project", "Manage GitHub Projects: create, list, get, update, delete, close projects. Use the `action` field to "
          "select the operation.", {"action": {"type": "string", "enum": ["create", "list", "get", "update", "delete", "close"],
                                               "description": "The project operation to perform"},
                                    "projectId": {"type": "string"}, "title": {"type": "string"},
                                    "status": {"type": "string", "enum": ["open", "closed"]}}, ["action"]),
)


def test_an_act_on_one_record_takes_its_key(tmp_path):
    """`manage_project(action, projectId, title)` ties no parameter to an act: "delete" and "close" took none at all and
    only logged (GitHub Projects: 119 log-only tools). The key of the record the tool manages goes to every act on one
    record; "create" and "list" stay without it."""
    out = compile_doc(tmp_path, "gh", "tools_list.json", PROJECTS_MANAGER, 4)
    src = next((out / "src").glob("*/env.forge")).read_text()
    assert re.search(r"tool delete_project\(projectId: Project\)", src), src[:3000]
    assert re.search(r"tool close_project\(projectId: Project\)", src)
    assert not re.search(r"tool list_project\([^)]*projectId", src) and not re.search(r"tool create_project\([^)]*projectId", src)
