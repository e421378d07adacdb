"""Rules from the seventh session's survey of the 65 doc sets no session had tuned on (6 gave tasks): each test is
a hand-written doc in the style of the set that showed the gap, checked against what its docs say."""

from __future__ import annotations

import json
import re

from conftest import compile_doc

_APP = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string", "description": "The application name."},
                                         "description": {"type": "string"}, "token": {"type": "string"}}}
_ERR = {"401": {"description": "Unauthorized"}}
NOTIFY = {"swagger": "2.0", "info": {"title": "Notifications", "version": "1"}, "paths": {
    "/auth/local/login": {"post": {"operationId": "localLogin", "summary": "Authenticate via basic auth and create a session.",
                                   "parameters": [{"in": "formData", "name": "name", "type": "string", "required": True,
                                                   "description": "the user name"}],
                                   "responses": {"200": {"description": "Ok"}}}},
    "/auth/logout": {"post": {"operationId": "logout", "summary": "End the current session.", "responses": {"200": {"description": "Ok"}}}},
    "/current/user": {"get": {"operationId": "currentUser", "summary": "Return the current user.", "responses": {"200": {"description": "Ok"}}}},
    "/current/user/password": {"post": {"operationId": "updateCurrentUser", "summary": "Update the password of the current user.",
                                        "parameters": [{"in": "body", "name": "body", "required": True, "schema": {
                                            "type": "object", "required": ["pass"], "properties": {"pass": {"type": "string"}}}}],
                                        "responses": {"200": {"description": "Ok"}}}},
    "/application": {"get": {"operationId": "getApps", "summary": "Return all applications.",
                             "responses": {"200": {"description": "Ok", "schema": {"type": "array", "items": {"$ref": "#/definitions/Application"}}},
                                           **_ERR}}},
    "/application/{id}": {"delete": {"operationId": "deleteApp", "summary": "Delete an application.",
                                     "parameters": [{"in": "path", "name": "id", "type": "integer", "required": True,
                                                     "description": "the application id"}],
                                     "responses": {"200": {"description": "Ok"}, **_ERR}}}},
    "definitions": {"Application": _APP}}


def test_a_documented_list_of_records_is_no_device_reading(tmp_path):
    """Gotify: a login/logout pair made the session shape claim every argument-free read, so `getApps()`, documented
    as returning `[Application]`, returned the signed-in user and no application could ever be found (0 tasks). A
    tool whose docs give a list of records is a collection the CRUD rules keep; the session keeps its login."""
    from forgec.frontends import read_paths
    from forgec.synth.recognize import claim_all

    d = tmp_path / "docs" / "notify"
    d.mkdir(parents=True)
    (d / "swagger.json").write_text(json.dumps(NOTIFY))
    envs, _ = read_paths([d])
    claimed = {n for c in claim_all(envs[0]) for n in c.tools}
    assert {"localLogin", "logout"} <= claimed, claimed
    assert "getApps" not in claimed, claimed
    out = compile_doc(tmp_path / "c", "notify", "swagger.json", NOTIFY, 6)
    env = next((out / "src").rglob("env.forge")).read_text()
    get_apps = re.search(r"tool getApps\(\)\s*->\s*([^\n]+)", env)
    assert get_apps and get_apps.group(1).strip() == "list[Application]", env[:2000]
