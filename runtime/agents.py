"""Agents: oracle (gold replay), random (baseline/fuzz), OpenAI-compatible endpoints, local HF models.

Every agent implements `forgec.runtime.types.Agent` (`async act(messages, tools)`).
The cheap, deterministic ones (oracle, random) also offer `act_sync`, which the
episode loop uses to run without an event loop (the compiler's oracle
self-check, benchmarks). Agents are stateless between calls: what they do next
depends only on the conversation, so one instance can serve many episodes.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import threading
from typing import Any

from forgec.runtime.envrt import jcopy  # the env may keep argument lists in its state; the task's stay intact
from forgec.runtime.llmclient import LazyClient, LLMError, RetryPolicy, chat, usage_of
from forgec.runtime.toolcalls import parse_hermes, parse_openai_tool_calls, render_hermes_call
from forgec.runtime.types import AgentReply, ToolCall
from forgec.runtime.scenario import WRITE_VERBS, arg_leaves, is_personal
from forgec.runtime.users import PERSONAL_RE, say
from forgec.english import participle, verb_base
from forgec.wording import humanize, names_tool, split_name
from forgec.tasks import Task
from forgec.runtime.scenario import names_action, opening, said_names, scenario_of, states_arguments
from forgec.runtime.episode import EpisodeLimits
from forgec.train.template import end_of_turn, end_of_turn_id, render_segments
from forgec.train.tokenize import tokenize_text

DONE_TEXT = "Your request has been completed."


# --------------------------------------------------------------------------- oracle


def oracle_final_text(task: Task) -> str:
    """The oracle's closing message: every `tell` value, then a completion report."""
    parts = [f"Here is what you asked for: {'; '.join(say(v) for v in task.tell)}."] if task.tell else []
    return " ".join(parts + [DONE_TEXT])


def _ask(task: Task, facts: list[str], first: bool) -> str:
    """A question for the given facts, in words the scripted user recognises (the fact's name)."""
    items = []
    for k in facts:
        words = humanize(k)
        items.append(("your " if PERSONAL_RE.search(words) else "the ") + words)  # as the user will say it: "My ..."
    listed = items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
    if first:
        return f"Hello! I can help you with that. To get started, could you please give me {listed}?"
    return f"Thank you. To go on, could you please tell me {listed}?"


def _your(text: str) -> str:
    """An intent in the agent's voice: "cancel my order" -> "cancel your order"."""
    return re.sub(r"\b(my|me|mine|I)\b", lambda m: {"my": "your", "me": "you", "mine": "yours", "I": "you"}[m.group(1)], text)


def _served(sc: Any) -> dict[int, Any]:
    """Which intent each gold write serves (index in sc.writes -> intent): the first unused intent whose
    words name the write's action, else, when there are as many intents as writes, the one in its place."""

    out: dict[int, Any] = {}
    free = list(sc.intents)
    for i, g in enumerate(sc.writes):
        it = next((x for x in free if names_action(x.text, g.tool)), None)
        if it is None and len(sc.intents) == len(sc.writes):
            it = sc.intents[i] if sc.intents[i] in free else None
        if it is not None:
            free.remove(it)
            out[i] = it
    return out


_PREPS = frozenset("to from for by with of in on at into".split())
_PARTICLES = frozenset("in out up off on down over back away".split())
_SALIENT = ("title", "name", "destination", "origin", "date", "amount", "total", "price", "quantity")


def _words(tool: str) -> tuple[str, list[str]]:
    ws = split_name(tool)
    return (ws[0] if ws else tool), ws[1:]


_TO_VERBS = frozenset("add assign transfer move send forward give grant credit attach link".split())


def _id_noun(key: str) -> str | None:
    """`reservation_id` -> "reservation"; None for a key that is no id."""
    ws = split_name(key)
    return " ".join(ws[:-1]) if len(ws) > 1 and ws[-1] in ("id", "ids", "number", "code") else None


def _action(g: Any, verb: str) -> tuple[str, set[str]]:
    """The write said in plain words, never the tool's name or all its words in a row: "cancel your
    reservation X4UC80", "update your address on order o_3 to 9 Oak Rd", "turn off light L1"; with
    the argument keys it said. A determiner or the record's id splits the tool's words."""
    _, rest = _words(g.tool)
    args = {k: v for k, v in g.arguments.items() if v is not None}
    used: set[str] = set()
    obj = " ".join(rest)
    if len(rest) == 1 and rest[0] in _PARTICLES:  # turn_off: plain English, the object follows
        head = f"{verb} {rest[0]}"
        obj = ""
    elif rest and rest[0] in _PREPS:  # send_to_user -> "send it to user u_1"
        head = f"{verb} it {obj}"
    else:
        head = f"{verb} your {obj}" if obj else verb
    # the record's own id right after its noun ("your reservation X4UC80"), the others after "on"/"for"
    for k, v in args.items():
        n = _id_noun(k)
        if n and obj and (obj == n or obj.endswith(" " + n)) and isinstance(v, (str, int)):
            head += f" {say(v)}"
            used.add(k)
            break
    for k, v in args.items():  # "add your travel credit of 150"
        if k not in used and obj and split_name(k)[-1] in ("amount", "quantity", "count") and isinstance(v, (int, float)):
            head += f" of {say(v)}"
            used.add(k)
    tail = []
    to = verb_base(verb.split()[0]) in _TO_VERBS  # "assign" or the report's "assigned"
    for k, v in args.items():
        n = _id_noun(k)
        if k in used or n is None:
            continue
        prep = "" if not (obj or tail) else "to" if to and not tail else "for"
        tail.append(f"{prep} {n} {say(v)}".strip())
        used.add(k)
    head = " ".join([head] + tail)
    # a value for the field the action names: "update your address ... to 9 Oak Rd"
    for k, v in args.items():
        if k not in used and obj and set(split_name(k)) & set(rest) and not isinstance(v, (dict, list)):
            head += f" to {say(v)}"
            used.add(k)
            break
    return head, used


def _details(g: Any, used: set[str]) -> str:
    """The other values the user must check, then what the record is (its title, destination, date...)."""
    flat = {}
    for k, v in g.arguments.items():  # a request body's fields are said one by one ("amount: 150"), not as "body"
        if k not in used and v is not None:
            flat.update({ik: iv for ik, iv in v.items() if iv is not None} if isinstance(v, dict) else {k: v})
    bits = [f"{humanize(k)}: {_plain(v)}" for k, v in flat.items()]
    r = g.result if isinstance(g.result, dict) else {}
    said = {json.dumps(v, sort_keys=True) for v in g.arguments.values()}
    for k, v in r.items():
        if len(bits) >= 4:
            break
        if isinstance(v, (str, int, float)) and not isinstance(v, bool) and json.dumps(v, sort_keys=True) not in said \
                and any(w in split_name(k) for w in _SALIENT) and _id_noun(k) is None:
            bits.append(f"{humanize(k)} {say(v)}")
    return f" ({'; '.join(bits)})" if bits else ""


def _plain(v: Any) -> str:
    """A value as said: an enum-like `no_longer_needed` as "no longer needed" (the user's matching reads both)."""
    return v.replace("_", " ") if isinstance(v, str) and re.fullmatch(r"[a-z]+(?:_[a-z]+)+", v) else say(v)


def _propose(g: Any, intent: Any = None) -> str:
    """A proposal in plain words: what will change on which record, with the values that matter."""
    verb, _ = _words(g.tool)
    act, used = _action(g, verb)
    said = act + _details(g, used)
    check = f"You wanted this only if {_your(intent.condition)}; I checked, and it does hold. " if intent is not None and intent.condition else ""
    said_words = set(re.findall(r"[a-z]+", intent.text.lower())) if intent is not None else set()
    if intent is not None and not names_tool(intent.text, [g.tool]) and not said_words <= set(split_name(g.tool)):  # the user's own words for it (not the tool's), then the action
        goal = _your(intent.text.strip().rstrip("."))
        return f"{check}To {goal[:1].lower() + goal[1:]}, I'll {said}. Shall I proceed?"
    return f"{check}I'll {said}. Shall I proceed?"


def _uses(fact: Any, name: str, g: Any) -> bool:
    """The call reads the fact: a parameter of the fact's name, or an argument holding its value."""
    if name in g.arguments:
        return True
    leaves: list = []
    arg_leaves(fact, leaves)
    args: list = []
    arg_leaves(g.arguments, args)
    return any(x is not None and not isinstance(x, bool) and any(x == y for y in args) for x in leaves)


def oracle_script(task: Task) -> list[tuple[str, Any]]:
    """The oracle's turns, in order: ("say", text) waits for the user; ("calls", (text, [GoldCall])) runs calls.

    Identify (ask the facts the first lookups need, and the personal ones) -> look up (the gold
    reads before a write) -> ask for any further facts that write needs -> state the write and ask
    for confirmation -> do it -> ... -> report (the `tell` values and completion). A read-only task
    has no confirmation step."""

    sc = scenario_of(task)
    writes = {id(g) for g in sc.writes}
    calls = list(task.gold_calls)
    # segments: the reads before a write, then that write; a trailing run of reads has no write
    segs: list[tuple[list, Any]] = []
    reads: list = []
    for g in calls:
        if id(g) in writes:
            segs.append((reads, g))
            reads = []
        else:
            reads.append(g)
    if reads or not segs:
        segs.append((reads, None))
    # facts the user already said when it opened ("I'm Ann; my user id is ann_1") are not asked again
    said = opening(task)
    facts = {k: v for k, v in task.user.facts.items() if not states_arguments(said, {k: v})}  # "basic economy" says basic_economy
    first_use: dict[str, int] = {}
    for k in facts:
        for si, (rs, w) in enumerate(segs):
            if any(_uses(facts[k], k, g) for g in rs):
                first_use[k] = si
                break
            if w is not None and _uses(facts[k], k, w):
                first_use[k] = si + 0.5  # needed by the write of segment si, not by its lookups
                break
        else:
            first_use[k] = 0
    names_of = said_names(sc.known)
    personal = {k for k in facts if any(is_personal(n) for n in names_of.get(k, [k]))}
    steps: list[tuple[str, Any]] = []
    asked: set[str] = set()
    served, wi = _served(sc), 0

    def ask(need: list[str]) -> None:
        names = list(dict.fromkeys(n for k in need for n in names_of.get(k, [k])))
        steps.append(("say", _ask(task, names, first=not steps)))
        asked.update(need)

    for si, (rs, w) in enumerate(segs):
        need = [k for k in sorted(facts) if k not in asked and (first_use[k] == si or si == 0 and k in personal)]
        if need:
            ask(need)
        if rs:
            steps.append(("calls", (("Thank you. Let me look that up." if steps else "Hello! Let me look that up.") if si == 0
                                    else "Let me check that.", rs)))
        if w is not None:
            more = [k for k in sorted(facts) if k not in asked and first_use[k] <= si + 0.5]
            if more:
                ask(more)
            steps.append(("say", _propose(w, served.get(wi))))
            wi += 1
            steps.append(("calls", ("", [w])))
    steps.append(("say", _report(task, sc)))
    return steps


def _outcome(g: Any) -> str:
    """What a write did, in the past tense: "cancelled your order o_1 (a new id it returned; status now cancelled)"."""
    verb, _ = _words(g.tool)
    act, _used = _action(g, participle(verb))
    r = g.result if isinstance(g.result, dict) else {}
    said = {json.dumps(v, sort_keys=True) for v in g.arguments.values()}
    tool_words = set(split_name(g.tool))
    bits = [f"the new {_id_noun(k)} is {say(v)}" for k, v in r.items()  # the id of the record the write made
            if isinstance(v, (str, int)) and not isinstance(v, bool) and _id_noun(k) and json.dumps(v) not in said
            and set(split_name(k)[:-1]) <= tool_words][:1]
    if isinstance(r.get("status"), str):
        bits.append(f"its status is now {say(r['status'])}")
    return act + (f" ({'; '.join(bits)})" if bits else "")


def _report(task: Task, sc: Any) -> str:
    done = [_outcome(g) for g in sc.writes]
    parts = []
    if done:
        parts.append("All done: I " + "; ".join(done) + ".")
    used = set(map(id, _served(sc).values()))
    for it in sc.intents:  # a conditional intent no write served: its condition did not hold
        if it.condition and id(it) not in used and set(re.findall(r"[a-z]+", it.text.lower())) & WRITE_VERBS:
            parts.append(f"You asked me to {_your(it.text)} only if {_your(it.condition)}; that is not the case, so I left it as it is.")
    return " ".join(parts + [oracle_final_text(task)])


class OracleAgent:
    """Plays the task's gold path as a dialogue (`oracle_script`): asks for identification, looks
    things up with the gold reads, states each gold write and asks for confirmation before doing
    it, then reports the outcome and the `tell` values.

    It must score 1.0 on every valid task: the compiler runs it (with the scripted user) as a
    self-check, and `forgec sft` trains on its trajectories. Stateless: the next turn is the
    script's step at the number of assistant messages so far.
    """

    def __init__(self, task: Task):
        self.task = task
        self._steps = oracle_script(task)

    def limits(self, base: Any = None) -> Any:
        """Episode limits that fit this task's dialogue (a long gold path needs more than 30 turns)."""
        from dataclasses import replace


        base = base or EpisodeLimits()
        return replace(base, max_turns=max(base.max_turns, len(self._steps) + 1),
                       max_tool_calls=max(base.max_tool_calls, len(self.task.gold_calls)))

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if turn >= len(self._steps):
            return AgentReply(content=self._steps[-1][1])
        kind, what = self._steps[turn]
        if kind == "say":
            return AgentReply(content=what)
        text, gold = what
        calls = [ToolCall(id=f"call_{turn}_{i}", name=g.tool, arguments=jcopy(g.arguments)) for i, g in enumerate(gold)]
        return AgentReply(content=text, tool_calls=calls)

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)


# --------------------------------------------------------------------------- random

_INJECTIONS = [
    "'; DROP TABLE users; --", "{{7*7}}", "${jndi:ldap://x}", "../../etc/passwd", "<script>alert(1)</script>",
    "__import__('os').system('echo hi')", "\x00", "\u202e", "null", "NaN", "-1", "9" * 40, "",
]


def random_value(schema: Any, rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value, mostly of the schema's type, sometimes deliberately wrong."""
    if not isinstance(schema, dict) or depth > 3 or rng.random() < 0.08:
        return rng.choice([None, True, 0, -7, 3.5, "x", [], {}, rng.choice(_INJECTIONS)])
    if "enum" in schema and schema["enum"] and rng.random() < 0.8:
        return rng.choice(schema["enum"])
    t = schema.get("type")
    if isinstance(t, list):
        t = rng.choice(t) if t else None
    if t == "integer":
        return rng.choice([0, 1, 2, 5, 10, 42, 100, -1, 10**12, rng.randint(-1000, 100000)])
    if t == "number":
        return rng.choice([0.0, 1.5, 99.99, -3.25, 1e300, rng.uniform(-1e4, 1e4)])
    if t == "boolean":
        return rng.random() < 0.5
    if t == "array":
        return [random_value(schema.get("items", {}), rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if t == "object":
        props = schema.get("properties") or {}
        return {k: random_value(v, rng, depth + 1) for k, v in props.items() if rng.random() < 0.7}
    if t == "null":
        return None
    return rng.choice([f"{rng.choice('abcdefghijklmnopqrstuvwxyz')}_{rng.randint(0, 60)}", f"id{rng.randint(0, 999)}", "2024-05-15",
                       "alice@example.com", rng.choice(_INJECTIONS), "x" * rng.randint(1, 50)])


def random_arguments(tool: dict, rng: random.Random) -> dict:
    params = (tool.get("function") or {}).get("parameters") or {}
    props = params.get("properties") or {}
    required = set(params.get("required") or [])
    args = {}
    for name, sch in props.items():
        if name in required and rng.random() < 0.95 or rng.random() < 0.4:
            args[name] = random_value(sch, rng)
    if rng.random() < 0.05:
        args[rng.choice(["extra", "__class__", "id", "ignore_previous_instructions"])] = rng.choice(_INJECTIONS)
    return args


class RandomAgent:
    """Calls random tools with random (schema-shaped, sometimes wrong) arguments, then says it is done.

    A baseline (it should score near 0) and a fuzzer of environments.
    Deterministic: the choice at each turn depends on `seed` and the turn number only.
    """

    def __init__(self, seed: int = 0, max_calls: int = 5, calls_per_turn: int = 1):
        self.seed = seed
        self.max_calls = max_calls
        self.calls_per_turn = calls_per_turn

    def act_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        rng = random.Random(f"random-agent:{self.seed}:{turn}")
        made = sum(len(m.get("tool_calls") or []) for m in messages if m.get("role") == "assistant")
        if not tools or made >= rng.randint(1, self.max_calls):
            return AgentReply(content="I have done what I could. " + DONE_TEXT)
        calls = []
        for i in range(self.calls_per_turn):
            tool = rng.choice(tools)
            calls.append(ToolCall(id=f"call_{turn}_{i}", name=tool["function"]["name"], arguments=random_arguments(tool, rng)))
        return AgentReply(content="", tool_calls=calls)

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        return self.act_sync(messages, tools)


# --------------------------------------------------------------------------- hermes text format

HERMES_TOOLS_PROMPT = """# Tools

You may call one or more functions to assist with the user query.

You are provided with function signatures within <tools></tools> XML tags:
<tools>
{tools}
</tools>

For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:
<tool_call>
{{"name": <function-name>, "arguments": <args-json-object>}}
</tool_call>"""


def hermes_messages(messages: list[dict], tools: list[dict]) -> list[dict]:
    """OpenAI-format messages -> plain-text messages in the Hermes/Qwen convention.

    Tools go into the system prompt; assistant tool calls become `<tool_call>` text;
    tool results become a user turn of `<tool_response>` blocks.
    """
    tool_text = "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tools)
    out: list[dict] = []
    sys_prompt = HERMES_TOOLS_PROMPT.format(tools=tool_text)
    rest = messages
    if messages and messages[0].get("role") == "system":
        sys_prompt = (messages[0].get("content") or "") + "\n\n" + sys_prompt
        rest = messages[1:]
    out.append({"role": "system", "content": sys_prompt})
    for m in rest:
        role = m.get("role")
        if role == "assistant":
            think = m.get("reasoning_content")
            parts = [f"<think>\n{think}\n</think>" if think else "", m.get("content") or ""]
            for tc in parse_openai_tool_calls(m.get("tool_calls")):
                parts.append(render_hermes_call(tc))
            out.append({"role": "assistant", "content": "\n".join(p for p in parts if p)})
        elif role == "tool":
            block = f"<tool_response>\n{m.get('content') or ''}\n</tool_response>"
            if out and out[-1]["role"] == "user" and out[-1].get("_tool"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "_tool": True})
        else:
            out.append({"role": role, "content": m.get("content") or ""})
    for m in out:
        m.pop("_tool", None)
    return out


# --------------------------------------------------------------------------- OpenAI-compatible endpoint

_API_FIELDS = {
    "system": ("role", "content"),
    "user": ("role", "content"),
    "assistant": ("role", "content", "tool_calls"),
    "tool": ("role", "content", "tool_call_id"),
}


def api_messages(messages: list[dict]) -> list[dict]:
    """Episode messages as the chat completions API accepts them (drops `reasoning_content`, a tool message's `name`)."""
    out = []
    for m in messages:
        keep = _API_FIELDS.get(m.get("role"), tuple(m))
        out.append({k: m[k] for k in keep if k in m})
    return out



class OpenAIAgent:
    """An agent behind any OpenAI-compatible chat endpoint (vLLM's server, OpenAI, others).

    `tool_format="openai"` passes the tools as the API's `tools` and reads
    `message.tool_calls`; `"hermes"` puts them in the system prompt and parses
    `<tool_call>` text (for servers without a tool parser). A request that
    still fails after retries returns `AgentReply(error=...)`, which ends the
    episode with that error.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, tool_format: str = "openai", temperature: float = 0.0,
                 timeout: float = 60.0, max_retries: int = 4, *, backoff_s: float = 0.5, max_tokens: int | None = None, seed: int = 0):
        if tool_format not in ("openai", "hermes"):
            raise ValueError(f"tool_format must be 'openai' or 'hermes', not {tool_format!r}")
        self.model = model
        self.tool_format = tool_format
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.client = LazyClient(base_url, api_key, timeout)
        self.policy = RetryPolicy(max_retries=max_retries, backoff_s=backoff_s)
        self.rng = random.Random(seed)

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        kwargs: dict[str, Any] = {"model": self.model, "temperature": self.temperature}
        if self.max_tokens:
            kwargs["max_tokens"] = self.max_tokens
        if self.tool_format == "openai":
            kwargs["messages"] = api_messages(messages)
            if tools:
                kwargs["tools"] = tools
        else:
            kwargs["messages"] = hermes_messages(messages, tools)
        try:
            resp = await chat(self.client.get(), self.policy, self.rng, **kwargs)
        except LLMError as e:
            return AgentReply(error=f"agent request failed: {e}")
        msg = resp.choices[0].message
        usage = usage_of(resp)
        text = msg.content or ""
        # the one parser of model text (training rollouts use it too): `<think>` blocks are reasoning, never words to
        # the user, also from a server without a reasoning parser; `<tool_call>` text from one without a tool parser
        p = parse_hermes(text, f"call_{turn}")
        if self.tool_format == "openai":
            calls = parse_openai_tool_calls(msg.tool_calls, f"call_{turn}") or p.tool_calls
            reasoning = getattr(msg, "reasoning_content", None) or p.reasoning
            raw = text if p.tool_calls or p.reasoning is not None else None
            return AgentReply(content=p.content, tool_calls=calls, raw=raw, reasoning=reasoning, usage=usage)
        return AgentReply(content=p.content, tool_calls=p.tool_calls, raw=text, reasoning=p.reasoning, usage=usage)


# --------------------------------------------------------------------------- local transformers model

_HF_CACHE: dict[str, tuple[Any, Any]] = {}
_HF_LOCK = threading.Lock()


def _load_hf(model_path: str, device: str) -> tuple[Any, Any]:
    key = f"{model_path}@{device}"
    with _HF_LOCK:
        if key not in _HF_CACHE:
            from transformers import AutoModelForCausalLM, AutoTokenizer

            tok = AutoTokenizer.from_pretrained(model_path)
            model = AutoModelForCausalLM.from_pretrained(model_path)
            model.to(device)
            model.eval()
            _HF_CACHE[key] = (tok, model)
        return _HF_CACHE[key]


def hf_template_messages(messages: list[dict]) -> list[dict]:
    """OpenAI messages as HF chat templates expect them (tool-call arguments as dicts)."""
    out = []
    for m in messages:
        m = dict(m)
        if m.get("role") == "assistant" and m.get("tool_calls"):
            m["tool_calls"] = [
                {"type": "function", "id": tc.id, "function": {"name": tc.name, "arguments": tc.arguments if isinstance(tc.arguments, dict) else {}}}
                for tc in parse_openai_tool_calls(m["tool_calls"])
            ]
        if m.get("content") is None:
            m["content"] = ""
        out.append(m)
    return out


class HFAgent:
    """A local transformers causal LM with its own chat template; Hermes tool-call parsing; CPU by default.

    Prompted, stopped and parsed as a training rollout is (`forgec.train.rollout.PolicyAgent`): the
    conversation rendered by the training template function (`forgec.train.template.render_segments`,
    the model's own chat template when its tokenizer has one; `keep_thinking` as in training), generation
    stopped on `end_of_turn_id`, the text read by `parse_hermes`. So a policy is evaluated in the format
    it was trained in. Returns the exact prompt and generated token ids and their logprobs. Generation
    runs in a worker thread, one at a time per model, so the event loop keeps serving other episodes.
    """

    def __init__(self, model_path: str, *, max_new_tokens: int = 256, temperature: float = 0.0, device: str = "cpu",
                 seed: int = 0, max_prompt_tokens: int | None = None, keep_thinking: bool = True):
        self.model_path = str(model_path)
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.device = device
        self.seed = seed
        self.max_prompt_tokens = max_prompt_tokens
        self.keep_thinking = keep_thinking  # training's template.keep_thinking (default true there too)
        self._lock = threading.Lock()  # one generation at a time per agent (a thread lock: usable from any event loop)

    def generate_sync(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        with self._lock:
            return self._generate(messages, tools)

    def _generate(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        import torch

        tok, model = _load_hf(self.model_path, self.device)
        segs = render_segments(messages, tools, keep_thinking=self.keep_thinking, add_generation_prompt=True, tokenizer=tok)
        prompt_ids = [i for s in segs for i in tokenize_text(tok, s.text)]  # segment by segment, as rollouts tokenize
        if self.max_prompt_tokens and len(prompt_ids) > self.max_prompt_tokens:
            return AgentReply(error=f"prompt of {len(prompt_ids)} tokens exceeds max_prompt_tokens={self.max_prompt_tokens}")
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        torch.manual_seed(self.seed * 1_000_003 + turn)
        ids = torch.tensor([prompt_ids], device=self.device)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        gen_kwargs: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "return_dict_in_generate": True, "output_scores": True,
                                      "pad_token_id": pad, "attention_mask": torch.ones_like(ids),
                                      "eos_token_id": end_of_turn_id(tok)}  # where training rollouts stop
        if self.temperature > 0:
            gen_kwargs.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
        else:
            gen_kwargs.update(do_sample=False)
        with torch.no_grad():
            out = model.generate(ids, **gen_kwargs)
        new = out.sequences[0, len(prompt_ids):]
        logprobs = []
        for step, tid in enumerate(new.tolist()):
            logprobs.append(float(torch.log_softmax(out.scores[step][0].float(), dim=-1)[tid]))
        token_ids = new.tolist()
        text = tok.decode(token_ids, skip_special_tokens=False)  # as PolicyAgent decodes; the end-of-turn marker is not content
        eot = end_of_turn(tok)
        p = parse_hermes(text.removesuffix(eot) if token_ids and token_ids[-1] == end_of_turn_id(tok) else text, f"call_{turn}")
        return AgentReply(content=p.content, tool_calls=p.tool_calls, raw=text, reasoning=p.reasoning, prompt_token_ids=prompt_ids,
                          token_ids=token_ids, logprobs=logprobs, usage={"prompt_tokens": len(prompt_ids), "completion_tokens": len(token_ids)})

    async def act(self, messages: list[dict], tools: list[dict]) -> AgentReply:
        try:
            return await asyncio.to_thread(self.generate_sync, messages, tools)
        except Exception as e:  # noqa: BLE001 - a broken model/template ends this episode, not the run
            return AgentReply(error=f"hf agent failed: {type(e).__name__}: {e}")
