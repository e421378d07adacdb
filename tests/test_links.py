"""Tools that put existing records into another record's list, or take them out ("Adds one or more droplets to a
firewall", "Remove an issue from a module"), and the world values of what a team runs. Each checked on a small doc
written as its source writes it: DigitalOcean's MCP (PascalCase params, a bare `ID`, `DropletIDs` arrays of numbers)
and Plane's MCP (`module_id`, `issues: "Array of issue UUIDs"`, a removal named `delete_*` whose doc says "Remove")."""

from __future__ import annotations

import ipaddress
import json
import random
import re

from conftest import compile_doc, mcp_tool as _tool, tasks_of as _tasks

from forgec.stdlib.values import generate_value
from forgec.synth.names import tokens




def _src(out) -> str:
    return next((out / "src").glob("*/env.forge")).read_text()


def _tool_src(src: str, name: str) -> str:
    body = src[src.index(f"tool {name}("):]
    return body[:body.index("\n  }\n")]


def _state(out) -> dict:
    return json.loads(next((out / "states").glob("*.json")).read_text())


PAGE = {"Page": {"type": "number", "description": "Page number"}, "PerPage": {"type": "number", "description": "Items per page"}}
STR = {"type": "string"}

DIGITALOCEAN = {"tools": [  # the shape of DigitalOcean's MCP server: kebab names, PascalCase params, a bare `ID`
    _tool("droplet-list", "List all droplets for the user. Supports pagination.", PAGE, [], True),
    _tool("droplet-get", "Get a droplet by its ID", {"ID": {"type": "number", "description": "Droplet ID"}}, ["ID"], True),
    _tool("droplet-create", "Create a new droplet.", {
        "Name": {**STR, "description": "Name of the droplet"}, "Region": {**STR, "description": "Slug of the region (e.g., nyc3)"},
        "Size": {**STR, "description": "Slug of the droplet size (e.g., s-1vcpu-1gb)"},
        "IP": {**STR, "description": "The reserved IP to assign"}}, ["Name", "Region", "Size"]),
    _tool("droplet-delete", "Delete a droplet", {"ID": {"type": "number", "description": "ID of the droplet to delete"}}, ["ID"]),
    _tool("firewall-list", "List firewalls with pagination", PAGE, [], True),
    _tool("firewall-get", "Get firewall information by ID", {"ID": {**STR, "description": "ID of the firewall"}}, ["ID"], True),
    _tool("firewall-create", "Create a new firewall", {
        "DropletIDs": {"type": "array", "items": {"type": "number"}, "description": "Droplet IDs to apply the firewall to"},
        "InboundPortRange": {**STR, "description": "Port range for inbound rule"},
        "InboundProtocol": {**STR, "description": "Protocol for inbound rule"},
        "InboundSource": {**STR, "description": "Source address for inbound rule"},
        "Name": {**STR, "description": "Name of the firewall"}}, ["Name", "InboundProtocol", "InboundPortRange", "InboundSource"]),
    _tool("firewall-delete", "Delete a firewall", {"ID": {**STR, "description": "ID of the firewall to delete"}}, ["ID"]),
    _tool("firewall-add-droplets", "Adds one or more droplets to a firewall", {
        "DropletIDs": {"type": "array", "items": {"type": "number"}, "description": "Droplet IDs to apply the firewall to"},
        "ID": {**STR, "description": "ID of the firewall to apply to droplets"}}, ["ID", "DropletIDs"]),
    _tool("firewall-remove-droplets", "Removes one or more droplets from a firewall", {
        "DropletIDs": {"type": "array", "items": {"type": "number"}, "description": "Droplet IDs to remove from the firewall"},
        "ID": {**STR, "description": "ID of the firewall to remove droplets from"}}, ["ID", "DropletIDs"]),
    _tool("firewall-remove-rules", "Remove one or more rules from a firewall", {
        "ID": {**STR, "description": "ID of the firewall to remove rules from"},
        "InboundRules": {"type": "array", "items": {"type": "object", "properties": {"protocol": STR}}, "description": "Inbound rules to remove"}},
        ["ID"]),
    _tool("rename-droplet", "Rename a droplet", {"ID": {"type": "number", "description": "ID of the droplet"},
                                                 "Name": {**STR, "description": "New name for the droplet"}}, ["ID", "Name"]),
    # a kind keyed by a bare `name` (DigitalOcean's Kafka topics): no other record's `Name` is a topic
    _tool("db-cluster-list-topics", "List topics of a Kafka cluster", {"id": {**STR, "description": "The Kafka cluster UUID"}}, ["id"], True),
    _tool("db-cluster-delete-topic", "Delete a topic of a Kafka cluster", {
        "id": {**STR, "description": "The Kafka cluster UUID"}, "name": {**STR, "description": "Name of the topic"}}, ["id", "name"]),
]}


def test_adding_members_changes_the_container_and_makes_no_member(tmp_path):
    """`firewall-add-droplets(ID, DropletIDs)` had made a blank droplet holding the firewall's id (every droplet's `ID`
    was a firewall's); the droplets now join the firewall's list, once each, and a removal takes one out that is there."""
    out = compile_doc(tmp_path, "digitalocean", "tools_list.json", DIGITALOCEAN, 40)
    src = _src(out)
    add, rm = _tool_src(src, "firewall_add_droplets"), _tool_src(src, "firewall_remove_droplets")
    assert "-> Firewall" in add and "insert " not in add and "append x to ID." in add, add
    assert "require x in ID." in rm and "remove x from ID." in rm and "delete " not in rm, rm
    droplet = src[src.index("entity Droplet "):]
    droplet = droplet[:droplet.index("\n  }\n")]
    assert "Firewall" not in droplet, droplet  # no firewall's id among a droplet's fields
    tasks = _tasks(out)
    said = {c["tool"]: (t["instruction"], c["arguments"]) for t in tasks for c in t["gold_calls"]}
    for tool, verb, prep in (("firewall-add-droplets", "add", "to"), ("firewall-remove-droplets", "remove", "from")):
        assert tool in said, [t["instruction"] for t in tasks]
        text, args = said[tool]
        # one droplet the user names, by name, moved in or out of one firewall they name
        assert re.search(rf"\b{verb} (?:the|my) droplet called \"[a-z]+-[a-z]+(?:-\d)?\" {prep} my firewall called \"", text), text
        assert "one or more" not in text and len(args["DropletIDs"]) == 1, (text, args)


def test_a_removal_names_a_member_that_is_there(tmp_path):
    """A droplet removed from a firewall is one of the firewall's own: the world before the call holds it there."""
    out = compile_doc(tmp_path, "digitalocean", "tools_list.json", DIGITALOCEAN, 40)
    state = _state(out)["entities"]
    firewalls = state["Firewall"]
    removals = [c["arguments"] for t in _tasks(out) for c in t["gold_calls"] if c["tool"] == "firewall-remove-droplets"]
    assert removals
    for args in removals:
        held = next(f for f in firewalls.values() if f.get("firewall_id", f.get("ID")) == args["ID"] or args["ID"] in f.values())
        lists = [v for v in held.values() if isinstance(v, list)]
        assert any(args["DropletIDs"][0] in v for v in lists), (args, held)


def test_what_a_team_runs_is_named_and_valued_as_engineers_do(tmp_path):
    """DigitalOcean's droplets were "Droplet 1" (no task could name one), firewalls' protocols "onboarding checklist",
    reserved IPs "customer feedback"; and a Kafka topic keyed by `name` made every droplet's `Name` a topic reference."""
    out = compile_doc(tmp_path, "digitalocean", "tools_list.json", DIGITALOCEAN, 10)
    ents = _state(out)["entities"]
    names = [d["Name"] for d in ents["Droplet"].values()]
    assert all(re.fullmatch(r"(?:prod|staging|dev|qa)-[a-z]+(?:-\d)?", n) for n in names), names
    for d in ents["Droplet"].values():
        if d.get("IP") is not None:
            ipaddress.ip_address(d["IP"])  # an address, or this raises
    for f in ents["Firewall"].values():
        assert f["InboundProtocol"] in ("tcp", "udp", "icmp"), f
        assert re.fullmatch(r"\d+(?:-\d+)?", f["InboundPortRange"]), f
        ipaddress.ip_network(f["InboundSource"], strict=False)
    assert any("droplet called" in t["instruction"] for t in _tasks(out))


def test_plural_acronyms_stay_one_word():
    """`DropletIDs` had split into droplet, i, ds: no id list was found for it."""
    assert tokens("DropletIDs") == ["droplet", "ids"]
    assert tokens("similarURLs") == ["similar", "urls"]
    assert tokens("HTTPServer") == ["http", "server"]
    assert tokens("XMLHttpRequest") == ["xml", "http", "request"]


def test_network_values_by_their_docs():
    rng = random.Random(3)
    ip = generate_value({"type": "str"}, "IP", rng, entity="Droplet", doc="The reserved IP to assign")
    ipaddress.ip_address(ip)
    src = generate_value({"type": "str"}, "OutboundDestination", rng, entity="Firewall", doc="Destination address for outbound rule")
    ipaddress.ip_network(src, strict=False)
    assert generate_value({"type": "str"}, "InboundProtocol", rng, entity="Firewall", doc="Protocol for inbound rule") in ("tcp", "udp", "icmp")


PLANE = {"tools": [  # the shape of Plane's MCP server: uuids, a project every record lives in
    _tool("get_projects", "Get all projects for the current user", {}, [], True),
    _tool("list_project_issues", "Get all issues for a specific project", {
        "project_id": {**STR, "description": "The uuid identifier of the project to get issues for"}}, ["project_id"], True),
    _tool("list_modules", "Get all modules for a specific project", {
        "project_id": {**STR, "description": "The uuid identifier of the project to get modules for"}}, ["project_id"], True),
    _tool("create_module", "Create a new module in a project", {
        "project_id": {**STR, "description": "The uuid identifier of the project"},
        "name": {**STR, "description": "The name of the module"}}, ["project_id", "name"]),
    _tool("add_module_issues", "Add issues to a module. Assign module to issues.", {
        "project_id": {**STR, "description": "The uuid identifier of the project containing the module"},
        "module_id": {**STR, "description": "The uuid identifier of the module to add issues to"},
        "issues": {"type": "array", "items": STR, "description": "Array of issue UUIDs to add to the module"}},
        ["project_id", "module_id", "issues"]),
    _tool("delete_module_issue", "Remove an issue from a module. Unassign module from issue.", {
        "project_id": {**STR, "description": "The uuid identifier of the project containing the module"},
        "module_id": {**STR, "description": "The uuid identifier of the module"},
        "issue_id": {**STR, "description": "The uuid identifier of the issue to remove from the module"}},
        ["project_id", "module_id", "issue_id"]),
    _tool("create_issue", "Create a new issue in a project", {
        "project_id": {**STR, "description": "The uuid identifier of the project"},
        "name": {**STR, "description": "The title of the issue"}}, ["project_id", "name"]),
]}


def test_a_removal_the_docs_word_as_remove_keeps_the_member(tmp_path):
    """Plane's `delete_module_issue` ("Remove an issue from a module") takes the issue out of the module; the issue
    stays. `add_module_issues(issues: "Array of issue UUIDs")` puts issues in."""
    out = compile_doc(tmp_path, "plane", "tools_list.json", PLANE, 6)
    src = _src(out)
    add, rm = _tool_src(src, "add_module_issues"), _tool_src(src, "delete_module_issue")
    assert "-> Module" in add and "append x to module_id." in add and "insert " not in add, add
    assert "remove " in rm and "delete issue_id" not in rm and "delete " not in rm.split("{", 1)[1], rm


def test_removing_parts_from_a_record_deletes_no_record(tmp_path):
    """"Remove one or more rules from a firewall" had deleted the firewall (the docs' "one or more" hid the pattern);
    a server renamed keeps its role ("qa-api" -> "prod-api"), not a topic's slug."""
    out = compile_doc(tmp_path, "digitalocean", "tools_list.json", DIGITALOCEAN, 40)
    rm = _tool_src(_src(out), "firewall_remove_rules")
    assert "delete " not in rm.split("{", 1)[1] and "-> Firewall" in rm, rm
    renames = [t["instruction"] for t in _tasks(out) if any(c["tool"] == "rename-droplet" for c in t["gold_calls"])]
    assert renames
    for text in renames:
        old, new = re.search(r'rename my droplet called "([^"]+)" to "([^"]+)"', text).groups()
        assert re.fullmatch(r"(?:prod|staging|dev|qa)-[a-z]+(?:-\d)?", new) and (old.split("-")[1] == new.split("-")[1]) != (
            old.split("-")[0] == new.split("-")[0]), text  # its stage or its role changed, one of them
