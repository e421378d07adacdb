"""LLM backend against a real OpenAI-compatible HTTP server on 127.0.0.1 (starlette + uvicorn
in a thread), with scripted replies: unparseable .forge (repair round), a 429 then success,
a timeout then success, and a model that never gets it right (fallback to rules)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from forgec import ir
from forgec.lang import ast as A
from forgec.synth import LLMConfig, synthesize

S = ir.Type(kind="string")
ENV = ir.Environment(
    name="shop",
    tools=(
        ir.Tool(name="get_order_details", description="Get an order.", params=(ir.Param(name="order_id", type=S, required=True),)),
        ir.Tool(
            name="cancel_pending_order",
            description="Cancel a pending order.",
            params=(ir.Param(name="order_id", type=S, required=True),),
        ),
    ),
)

GOOD = '''Here you go:
```forge
env shop {
  entity Order key order_id {
    order_id: str
    status: enum("pending", "shipped", "cancelled")
    total: float
  }

  @read
  tool get_order_details(order_id: Order) -> Order "Get an order." {
    return order_id
  }

  @update
  tool cancel_pending_order(order_id: Order) -> Order "Cancel a pending order." {
    require order_id.status == "pending" else "only pending orders can be cancelled (llm)"
    set order_id.status = "cancelled"
    return order_id
  }
}
```'''
BAD = "```forge\nenv shop { entity Order key order_id { order_id: str } tool get_order_details(order_id: Order) -> Order { return order_id\n```"


class Script:
    """What the fake endpoint answers, request by request; records every request body."""

    def __init__(self, steps):
        self.steps = list(steps)
        self.requests: list[dict] = []

    async def handle(self, request: Request):
        body = await request.json()
        self.requests.append(body)
        step = self.steps.pop(0) if self.steps else ("reply", GOOD)
        if step[0] == "status":
            return JSONResponse({"error": {"message": "rate limited", "type": "rate_limit"}}, status_code=step[1], headers={"retry-after": "0"})
        if step[0] == "sleep":
            await asyncio.sleep(step[1])
            step = ("reply", step[2])
        return JSONResponse(
            {
                "id": f"c{len(self.requests)}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": step[1]}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )


@pytest.fixture
def server():
    """Start a uvicorn server on a free port; yield a function that installs a script."""
    holder = {"script": Script([])}

    async def endpoint(request: Request):
        return await holder["script"].handle(request)

    app = Starlette(routes=[Route("/v1/chat/completions", endpoint, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level="error", lifespan="off")
    srv = uvicorn.Server(config)
    th = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    deadline = time.time() + 10
    while not srv.started and time.time() < deadline:
        time.sleep(0.02)

    def install(steps):
        holder["script"] = Script(steps)
        return holder["script"]

    yield f"http://127.0.0.1:{port}/v1", install
    srv.should_exit = True
    th.join(timeout=5)
    sock.close()


def cfg(url, **kw):
    base = dict(base_url=url, model="scripted", max_repair_rounds=2, timeout=5.0, max_retries=2)
    base.update(kw)
    return LLMConfig(**base)


def _cancel(decl):
    return decl.tool("cancel_pending_order")


def test_repair_round_then_cache_replays_offline(server, tmp_path):
    url, install = server
    script = install([("reply", BAD), ("reply", GOOD)])
    decl, diags = synthesize(ENV, backend="llm", llm=cfg(url), cache_dir=tmp_path)
    assert len(script.requests) == 2
    # the repair prompt carries the rendered parse diagnostics of the first proposal
    repair = script.requests[1]["messages"][-1]["content"]
    assert "error[" in repair and "Fix them" in repair
    assert any(d.code == "synth-llm-repair" for d in diags)
    req = _cancel(decl).body[0]
    assert isinstance(req, A.Require) and req.message == "only pending orders can be cancelled (llm)"
    assert decl.entity("Order").fields[2].name == "total"  # the model's schema, not the rules draft

    script2 = install([("reply", "should never be asked")])
    decl2, _ = synthesize(ENV, backend="llm", llm=cfg(url), cache_dir=tmp_path)
    assert script2.requests == []  # zero requests: every reply came from the cache
    assert decl2 == decl


def test_429_is_retried_with_backoff(server, tmp_path):
    url, install = server
    script = install([("status", 429), ("reply", GOOD)])
    decl, diags = synthesize(ENV, backend="llm", llm=cfg(url), cache_dir=tmp_path)
    assert len(script.requests) == 2
    assert _cancel(decl).body[0].message.endswith("(llm)")
    assert not any(d.code in ("synth-llm-error", "synth-llm-fallback") for d in diags)


def test_timeout_is_retried(server, tmp_path):
    url, install = server
    script = install([("sleep", 3.0, GOOD), ("reply", GOOD)])
    decl, diags = synthesize(ENV, backend="llm", llm=cfg(url, timeout=0.5), cache_dir=tmp_path)
    assert len(script.requests) == 2
    assert _cancel(decl).body[0].message.endswith("(llm)")


def test_endpoint_down_falls_back_to_rules(tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there
    decl, diags = synthesize(ENV, backend="llm", llm=cfg(f"http://127.0.0.1:{port}/v1", max_retries=0), cache_dir=tmp_path)
    assert any(d.code == "synth-llm-error" for d in diags)
    assert decl == synthesize(ENV)[0]


def test_never_valid_falls_back_after_bounded_rounds(server, tmp_path):
    url, install = server
    script = install([("reply", BAD)] * 10)
    decl, diags = synthesize(ENV, backend="llm", llm=cfg(url, max_repair_rounds=2), cache_dir=tmp_path)
    assert len(script.requests) == 3  # first proposal + 2 repair rounds
    assert any(d.code == "synth-llm-fallback" for d in diags)
    assert decl == synthesize(ENV)[0]


def test_missing_tool_is_a_repair_reason(server, tmp_path):
    url, install = server
    only_one = GOOD.split("  @update")[0] + "}\n```"
    script = install([("reply", only_one), ("reply", GOOD)])
    decl, _ = synthesize(ENV, backend="llm", llm=cfg(url), cache_dir=tmp_path)
    assert "cancel_pending_order" in script.requests[1]["messages"][-1]["content"]
    assert decl.tool("cancel_pending_order") is not None
