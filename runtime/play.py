"""`forgec play`: a person plays the agent in the terminal against the scripted user.

The person is just another agent (`HumanAgent`): each turn it shows what
happened since its last turn (tool results, the user's reply) and reads one
line: a JSON tool call `{"name": ..., "arguments": {...}}` (or a JSON list of
them, or Hermes `<tool_call>` text) goes to the environment; anything else is
text to the user. The same episode loop as training and eval runs it, so the
reward and verdict at the end are exactly what an agent would get.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from forgec.runtime.toolcalls import parse_hermes
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.users import STOP

HELP = ('Type a tool call as JSON, e.g. {"name": "get_order", "arguments": {"order_id": "o_1"}} '
        "(a JSON list for several), or plain text to answer the user. /tools lists tools, /quit ends.")


def help_for(tools: list[dict]) -> str:
    """HELP with an example call to one of *these* tools (the generic example names a tool the env may lack)."""
    for tool in tools:
        fn = tool.get("function", {})
        params = fn.get("parameters") or {}
        req = [n for n in (params.get("properties") or {}) if n in set(params.get("required") or [])]
        if fn.get("name") and req:
            example = json.dumps({"name": fn["name"], "arguments": {req[0]: "..."}})
            return HELP.replace('{"name": "get_order", "arguments": {"order_id": "o_1"}}', example)
    return HELP


def tools_table(tools: list[dict]) -> Table:
    t = Table(title="tools", show_lines=False, expand=False)
    t.add_column("tool", style="bold cyan", no_wrap=True)
    t.add_column("arguments")
    t.add_column("description")
    for tool in tools:
        fn = tool.get("function", {})
        params = fn.get("parameters") or {}
        req = set(params.get("required") or [])
        args = []
        for name, sch in (params.get("properties") or {}).items():
            typ = sch.get("type", "any") if isinstance(sch, dict) else "any"
            if isinstance(sch, dict) and sch.get("enum"):
                typ = "|".join(json.dumps(v) for v in sch["enum"])
            args.append(f"{name}{'' if name in req else '?'}: {typ}")
        t.add_row(fn.get("name", "?"), ", ".join(args), (fn.get("description") or "").split("\n")[0])
    return t


def parse_line(line: str, turn: int) -> AgentReply | None:
    """A typed line -> an AgentReply (tool calls or text); None for an empty line."""
    s = line.strip()
    if not s:
        return None
    if s[0] in "[{" and "<tool_call>" not in s:
        try:
            obj = json.loads(s)
        except ValueError:
            return AgentReply(tool_calls=[ToolCall(id=f"call_{turn}_0", name="", arguments=s)])
        objs = obj if isinstance(obj, list) else [obj]
        calls = []
        for i, o in enumerate(objs):
            if isinstance(o, dict) and "name" in o:
                args = o.get("arguments", {})
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        pass
                calls.append(ToolCall(id=f"call_{turn}_{i}", name=str(o["name"]), arguments=args))
            else:
                calls.append(ToolCall(id=f"call_{turn}_{i}", name="", arguments=json.dumps(o)))
        return AgentReply(tool_calls=calls)
    p = parse_hermes(s, f"call_{turn}")  # model text pasted in reads as everywhere else (plain words stay as typed)
    return AgentReply(content=p.content, tool_calls=p.tool_calls, raw=s if p.tool_calls or p.reasoning is not None else None,
                      reasoning=p.reasoning)


def render_message(console: Console, m: dict) -> None:
    role = m.get("role")
    if role == "user":
        content = m.get("content") or ""
        if STOP in content:  # the simulated user's internal end-of-conversation marker is not shown to the player
            content = content.replace(STOP, "").strip() or "(ends the conversation)"
        console.print(Panel(content, title="user", title_align="left", border_style="green"))
    elif role == "tool":
        content = m.get("content") or ""
        style = "red" if content.startswith("Error:") else "blue"
        if len(content) > 2000:
            content = content[:2000] + f" ... ({len(content)} chars)"
        console.print(Panel(content, title=f"tool {m.get('name', '')}", title_align="left", border_style=style))
    elif role == "assistant":
        if m.get("content"):
            console.print(Panel(m["content"], title="agent (you)", title_align="left", border_style="magenta"))
        for tc in m.get("tool_calls") or []:
            console.print(f"[magenta]call[/] {tc['function']['name']}({tc['function']['arguments']})")


class HumanAgent:
    """The person at the terminal, as an agent."""

    def __init__(self, console: Console, read_line: Callable[[str], str]):
        self.console = console
        self.read_line = read_line
        self.shown = 0

    def show_new(self, messages: list[dict]) -> None:
        for m in messages[self.shown:]:
            if m.get("role") != "assistant" and m.get("role") != "system":
                render_message(self.console, m)
        self.shown = len(messages)

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        self.show_new(messages)
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        while True:
            try:
                line = self.read_line("agent> ")
            except EOFError:
                self.console.print()  # end the "agent> " prompt line before the result panel
                return AgentReply(error="input ended")
            s = line.strip()
            if s in ("/quit", "/exit", "/q"):
                return AgentReply(error="quit by the player")
            if s == "/tools":
                self.console.print(tools_table(tools))
                continue
            if s in ("/help", "?"):
                self.console.print(help_for(tools))
                continue
            if s[:1] in "[{" and "<tool_call>" not in s:
                try:
                    json.loads(s)
                except ValueError as e:  # a typo at the keyboard is not the agent's move: nothing is sent
                    self.console.print(f"[red]Error: could not parse the tool call as JSON ({e.msg} at column {e.colno});[/] "
                                       "nothing was sent, type it again", markup=True, highlight=False)
                    continue
            r = parse_line(s, turn)
            if r is not None:
                return r

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)


def result_panel(ep: Any) -> Panel:
    rb = ep.reward_breakdown
    lines = [
        f"reward: [bold]{ep.reward:g}[/]   end: {ep.end_reason}" + (f" ({ep.error})" if ep.error else ""),
        f"state matches gold: {rb.get('state_match')}   tells told: {rb.get('tells_told')}",
        f"turns: {ep.turns}   tool calls: {ep.tool_calls} ({ep.tool_errors} errors)",
    ]
    if ep.judge is not None:
        lines.append(f"user error (MEU): {ep.judge.user_error} - {ep.judge.reason}")
    if ep.state_diff:
        for m in ep.state_diff.get("missing", [])[:5]:
            got = f"got {json.dumps(m.get('got'))}" if m.get("changed", m.get("got") is not None) else "but it was left unchanged"
            lines.append(f"[red]missing[/] {m['path']}: expected {json.dumps(m.get('gold'))}, {got}")
        for x in ep.state_diff.get("extra", [])[:5]:
            lines.append(f"[red]extra[/] {x['path']}: {json.dumps(x.get('before'))} -> {json.dumps(x.get('after'))}")
    return Panel("\n".join(lines), title="result", border_style="green" if ep.reward >= 1 else "red")
