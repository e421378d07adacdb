"""The LLM backend: a model proposes the env in .forge; forgec validates and asks for repairs.

Loop (AutoForge / EnvFactory validate-revise):
1. prompt = the language summary + the tool docs + the rules backend's draft env;
2. the reply's ```forge block is parsed, checked, compiled and verified;
3. any error (rendered diagnostics, failing tools, missing tools) goes back to the model,
   at most `max_repair_rounds` times;
4. on final failure (or an endpoint that keeps failing) the rules backend's env is used,
   with a `synth-llm-fallback` / `synth-llm-error` warning.

Every request goes through the official `openai` client (retries with backoff on 429,
5xx and timeouts) and is cached on disk by SHA-256 of (model, messages, params).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from forgec import ir
from forgec.diagnostics import Diagnostic, has_errors, info, render, warning
from forgec.lang import ast as A

from . import codes
from .cache import LLMCache, request_key
from .names import ident
from forgec import lang
from .rules import synthesize_rules


@dataclass(frozen=True)
class LLMConfig:
    base_url: str = "http://127.0.0.1:8000/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = "OPENAI_API_KEY"
    max_repair_rounds: int = 3
    timeout: float = 60.0
    max_retries: int = 3
    temperature: float = 0.0
    allow_python: bool = False  # the escape hatch only when asked


SYSTEM = """You write environments in the .forge language for tool-using agents.
An env declares `state { ... }` globals, `record` value types, `entity Name key field { ... }`
keyed collections, and tools:

  @update
  tool cancel_order(order_id: Order, reason: str) -> Order "doc" {
    require order_id.status == "pending" else "order is not pending"
    set order_id.status = "cancelled"
    return order_id
  }

Types: str int float bool any, enum("a", "b"), list[T], T? (optional), entity or record names,
inline records {a: int, b: str}. A param typed with an entity takes its key on the wire and is
bound to the record; a field typed with an entity stores the key (use `x.key_field` to store a
record's key). Statements: require COND else "msg", let, set, insert E {...} (`let x = insert ...`),
delete, append V to LIST, remove V from LIST, for, if/else, return. Expressions: literals, names,
field access, indexing, Entity[key], `k in Entity`, and/or/not, comparisons, arithmetic,
`E where it.f == p`, len sum min max any all map fresh_id(E) str int float lower upper first last.
Annotate each tool with exactly one kind: @read @search @create @update @delete @action.
Keep every documented tool and its parameter names. Reply with ONE ```forge code block."""


def _docs_json(env: ir.Environment) -> str:
    tools = []
    for t in env.tools:
        tools.append(
            {
                "name": t.name,
                "description": t.description,
                "params": [{"name": p.name, "type": p.type.short(), "required": p.required, "description": p.description} for p in t.params],
                **({"returns": t.returns.short()} if t.returns is not None else {}),
                **({"http": f"{t.http_method} {t.http_path}"} if t.http_method else {}),
                **({"annotations": t.annotations} if t.annotations else {}),
            }
        )
    return json.dumps(tools, indent=1, sort_keys=True, ensure_ascii=False)


_BLOCK = re.compile(r"```(?:forge)?[ \t]*\n(.*?)```", re.S)


def extract_forge(reply: str) -> str:
    m = _BLOCK.search(reply or "")
    return m.group(1) if m else (reply or "")


class LLMError(Exception):
    pass


class Chat:
    """One model endpoint behind the openai client, with the on-disk cache in front."""

    def __init__(self, cfg: LLMConfig, cache_dir: Path | None):
        self.cfg = cfg
        self.cache = LLMCache(cache_dir)
        self._client = None
        self.requests = 0  # requests actually sent (cache misses)

    def client(self):
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                base_url=self.cfg.base_url,
                api_key=os.environ.get(self.cfg.api_key_env) or "not-needed",
                timeout=self.cfg.timeout,
                max_retries=self.cfg.max_retries,
            )
        return self._client

    def __call__(self, messages: list[dict]) -> str:
        params = {"temperature": self.cfg.temperature}
        key = request_key(self.cfg.model, messages, params)
        hit = self.cache.get(key)
        if hit is not None:
            return hit
        import openai

        self.requests += 1
        try:
            resp = self.client().chat.completions.create(model=self.cfg.model, messages=messages, **params)
        except openai.OpenAIError as e:
            raise LLMError(f"{type(e).__name__}: {e}") from None
        text = (resp.choices[0].message.content or "") if resp.choices else ""
        self.cache.put(key, {"model": self.cfg.model, "messages": messages, "params": params}, text)
        return text


def validate(text: str, env: ir.Environment, filename: str, verify: bool = True) -> tuple[A.EnvDecl | None, list[Diagnostic], str]:
    """Parse, check, compile and verify a proposal; returns (env, diagnostics, problems as text)."""

    module, pd = lang.parse(text, filename)
    if has_errors(pd):
        return None, pd, render(pd, "full", {filename: text})
    cd, typed = lang.check.check_typed([module])  # checked once: codegen below reads these types
    if has_errors(cd):
        return None, cd, render(cd, "full", {filename: text})
    envs = module.envs
    if len(envs) != 1:
        return None, [], f"expected exactly one `env` declaration, found {len(envs)}"
    decl = envs[0]
    missing = [t.name for t in env.tools if decl.tool(t.name) is None]
    if missing:
        return None, [], "these documented tools are missing: " + ", ".join(missing)
    for t in env.tools:
        got = {p.name for p in decl.tool(t.name).params}
        want = {p.name for p in t.params}
        if got != want:
            return None, [], f"tool {t.name}: parameters must be exactly {sorted(want)}, got {sorted(got)}"
    if verify:
        problems = _verify(decl, filename, typed.envs.get(decl.name))
        if problems:
            return None, [], problems
    return decl, pd + cd, ""


def _verify(decl: A.EnvDecl, filename: str, et=None) -> str:
    try:
        from forgec.codegen import emit_env, load_env_module
        from forgec.codegen.verify import verify_env
    except ImportError:  # codegen not available: parse + check is the bar
        return ""
    try:
        src = emit_env(decl, filename, et=et if et is not None and et.env is decl else None)
        d = Path(tempfile.mkdtemp(prefix="forgec_llm_"))
        (d / "env.py").write_text(src, encoding="utf-8")
        report = verify_env(load_env_module(d / "env.py"), decl, seed=0)
    except Exception as e:  # noqa: BLE001 - a proposal that breaks codegen is a repair reason
        return f"code generation failed: {type(e).__name__}: {e}"
    bad = [t for t in report.tools if not t.verified]
    return "\n".join(f"tool {t.tool} failed verification: {t.reason}" for t in bad)


def synthesize_llm(env: ir.Environment, cfg: LLMConfig, cache_dir: Path | None = None, verify: bool = True) -> tuple[A.EnvDecl, list[Diagnostic]]:


    draft, rules_diags = synthesize_rules(env)
    filename = f"{ident(env.name)}.forge"
    draft_text = lang.format(A.Module(file=filename, items=(draft,)))
    chat = Chat(cfg, cache_dir)
    extra = "You may use a `python \"\"\"...\"\"\"` body for a tool that the effect language cannot express." if cfg.allow_python else "Do not use python bodies."
    messages = [
        {"role": "system", "content": SYSTEM + "\n" + extra},
        {
            "role": "user",
            "content": f"Environment `{ident(env.name)}`. Tool documentation (JSON):\n{_docs_json(env)}\n\n"
            f"A rule-based draft (improve its state schema and effects; keep what is right):\n```forge\n{draft_text}```",
        },
    ]
    diags: list[Diagnostic] = []
    for round_ in range(cfg.max_repair_rounds + 1):
        try:
            reply = chat(messages)
        except LLMError as e:
            diags.append(warning(codes.LLM_ERROR, f"LLM request for env `{env.name}` failed: {e}; used the rules backend", help="check --llm-base-url and the API key; replies are cached once they succeed"))
            return draft, diags + rules_diags
        text = extract_forge(reply)
        decl, vd, problems = validate(text, env, filename, verify)
        if decl is not None:
            decl = dataclasses.replace(decl, name=ident(env.name))
            if round_:
                diags.append(info(codes.LLM_REPAIR, f"env `{env.name}`: the LLM proposal was accepted after {round_} repair round(s)"))
            return decl, diags + [d for d in vd if not d.is_error]
        diags.append(info(codes.LLM_REPAIR, f"env `{env.name}`: LLM proposal {round_ + 1} rejected; asking for a repair"))
        messages = messages + [
            {"role": "assistant", "content": reply},
            {"role": "user", "content": "Your environment has errors. Fix them and reply with the whole corrected env in one ```forge block.\n\n" + problems},
        ]
    diags.append(
        warning(
            codes.LLM_FALLBACK,
            f"env `{env.name}`: no valid LLM proposal after {cfg.max_repair_rounds} repair round(s); used the rules backend",
            help="edit build/src/<env>/env.forge by hand, or retry with a stronger model",
        )
    )
    return draft, diags + rules_diags
