"""The rollout fleet over real local HTTP servers (tests/fakevllm.py): spread, affinity, failover,
weight sync with versions, and the per-server accounting. No torch, no model: fast."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from fakevllm import FakeVLLM  # noqa: E402

from forgec.train.fleet import Fleet, NoServerLeft, fleet_consistent, sync_servers  # noqa: E402
from forgec.train.rollout import Sampling  # noqa: E402

S = Sampling(8, 1.0, 1.0)


async def episode(fleet: Fleet, eid: int, turns: int = 3, pause: float = 0.0):
    """An episode: `turns` requests whose prompts start with the episode id (so servers can tell episodes apart)."""
    view = fleet.episode()
    prompt = [1000 + eid]
    try:
        for t in range(turns):
            ids, _ = await view.generate(prompt, S, seed=eid * 10 + t)
            prompt = prompt + ids + [7]
            if pause:
                await asyncio.sleep(pause)
    finally:
        view.release()
    return view


def episodes_seen(server: FakeVLLM) -> dict[int, int]:
    out: dict[int, int] = {}
    for p in server.prompts:
        out[p[0]] = out.get(p[0], 0) + 1
    return out


def test_spread_and_affinity_over_two_servers():
    with FakeVLLM("a", delay=0.02) as a, FakeVLLM("b", delay=0.02) as b:
        fleet = Fleet.of_urls([a.url, b.url], "policy", eos_token_id=0, timeout=10)

        async def main():
            return await asyncio.gather(*(episode(fleet, i) for i in range(20)))

        views = asyncio.run(main())
        total = len(a.prompts) + len(b.prompts)
        assert total == 60
        # least loaded: both servers carry a real share (each >= 30%)
        assert len(a.prompts) / total >= 0.3 and len(b.prompts) / total >= 0.3
        # affinity: every request of an episode went to one server (its prefix cache)
        ea, eb = episodes_seen(a), episodes_seen(b)
        assert not set(ea) & set(eb)
        assert all(n == 3 for n in [*ea.values(), *eb.values()])
        assert all(len(v.servers) == 1 and v.failovers == 0 for v in views)
        assert all(e.episodes == 0 for e in fleet.endpoints)  # every pin released
        stats = fleet.take_stats()
        assert stats[a.url]["requests"] + stats[b.url]["requests"] == 60
        assert stats[a.url]["tokens"] == 3 * len(a.prompts)  # 3 generated tokens per reply
        assert 0.0 < stats[a.url]["busy_share"] <= 1.0 and stats[b.url]["tokens_per_s"] > 0
        # the window resets
        assert fleet.take_stats()[a.url]["requests"] == 0


def test_a_dead_server_is_taken_out_and_its_episodes_finish_elsewhere():
    with FakeVLLM("a", delay=0.01) as a, FakeVLLM("b", delay=0.01) as b:
        fleet = Fleet.of_urls([a.url, b.url], "policy", eos_token_id=0, timeout=10)

        async def main():
            tasks = [asyncio.create_task(episode(fleet, i, turns=4, pause=0.05)) for i in range(8)]
            for _ in range(400):  # until a has served a few turns (the first request also builds the clients)
                if len(a.prompts) >= 6:
                    break
                await asyncio.sleep(0.01)
            a.kill()
            return await asyncio.gather(*tasks)

        views = asyncio.run(main())
        ea = episodes_seen(a)
        assert ea, "server a served some episodes before it died"
        assert all(len(v.versions) == 4 for v in views)  # every episode finished all its turns
        moved = [v for v in views if v.failovers]
        assert moved and all(v.servers[-1] == b.url for v in moved)
        (ep_a,) = [e for e in fleet.endpoints if e.name == a.url]
        assert not ep_a.alive and "Connection" in ep_a.error
        # the moved episodes' later turns are on b: b saw their ids too
        eb = episodes_seen(b)
        assert all(eid in eb for eid in ea if ea[eid] < 4)
        st = fleet.take_stats()
        assert st[a.url]["failures"] >= 1 and st[a.url]["alive"] is False
        # once a answers again a probe brings it back
        a.revive()
        assert fleet.probe() == [a.url] and ep_a.alive


def test_a_server_that_times_out_is_taken_out():
    with FakeVLLM("a") as a, FakeVLLM("b") as b:
        a.hang = True
        fleet = Fleet.of_urls([a.url, b.url], "policy", eos_token_id=0, timeout=0.5)
        async def main():
            return await asyncio.wait_for(asyncio.gather(*(episode(fleet, i, turns=2) for i in range(2))), 30)

        views = asyncio.run(main())
        assert all(v.servers[-1] == b.url for v in views)
        assert not fleet.endpoints[0].alive and "Timeout" in fleet.endpoints[0].error


def test_every_server_out_is_a_clear_error():
    with FakeVLLM("a") as a:
        fleet = Fleet.of_urls([a.url], "policy", eos_token_id=0, timeout=5)
        a.kill()
        with pytest.raises(NoServerLeft, match="every rollout server is out"):
            asyncio.run(episode(fleet, 0))


def test_weight_sync_reaches_every_server_and_versions_match(tmp_path):
    with FakeVLLM("a") as a, FakeVLLM("b") as b:
        fleet = Fleet.of_urls([a.url, b.url], "policy", eos_token_id=0, timeout=5)
        prompt = [5, 6, 7]
        before = asyncio.run(fleet.episode().generate(prompt, S, 0))
        w = tmp_path / "w"
        w.mkdir()
        (w / "version").write_text("3")
        res = sync_servers({a.url: None, b.url: None}, w, "reload")
        assert res == {a.url: "reload", b.url: "reload"}
        fleet.set_version(3, list(res))
        assert a.version == b.version == 3 and [e.version for e in fleet.endpoints] == [3, 3]
        assert fleet_consistent([a.url, b.url], "policy", prompt)
        # the served outputs changed on both
        views = [fleet.episode() for _ in range(2)]
        async def both():
            return await asyncio.gather(*(v.generate(prompt, S, 0) for v in views))

        outs = asyncio.run(both())
        assert {v.endpoint.name for v in views} == {a.url, b.url}
        assert all(o != before for o in outs) and outs[0] == outs[1]
        assert [v.version for v in views] == [3, 3]
        # a server that refuses the reload is reported; the fleet is no longer consistent
        (w / "version").write_text("4")
        b.refuse_reload = True
        res = sync_servers({a.url: None, b.url: None}, w, "reload")
        assert res[a.url] == "reload" and res[b.url].startswith("error: the server refused")
        assert not fleet_consistent([a.url, b.url], "policy", prompt)
        # restart is only for servers this trainer started
        assert sync_servers({a.url: None}, w, "restart")[a.url].startswith("error: restart needs")


def test_pause_holds_requests_until_resume():
    with FakeVLLM("a") as a:
        fleet = Fleet.of_urls([a.url], "policy", eos_token_id=0, timeout=5)
        fleet.pause()

        async def main():
            t = asyncio.create_task(episode(fleet, 0, turns=1))
            await asyncio.sleep(0.2)
            assert not a.prompts  # nothing sent while paused
            fleet.resume()
            return await t

        asyncio.run(main())
        assert len(a.prompts) == 1


def test_the_simulated_user_has_its_own_pool_pinned_per_episode(tmp_path):
    """rollout.user=llm: each episode's LLM user goes to the user server with the fewest episodes, and is released."""
    from fakeserver import FakeServer

    from forgec.runtime.loader import load
    from forgec.train.config import load_config
    from forgec.train.toybuild import make_toy_build
    from forgec.train.trainer import Trainer

    build = load(make_toy_build(tmp_path / "build", tasks_per_env=2))
    with FakeServer(lambda body: {"content": "Please do it."}) as u1, FakeServer(lambda body: {"content": "Thanks."}) as u2:
        t = Trainer.__new__(Trainer)  # only the config is needed to make users
        t.cfg = load_config("cpu-tiny", ["rollout.user=llm", f"rollout.user_base_urls=[{u1.url}, {u2.url}]", "rollout.user_model=sim"])
        make = t._user_factory()
        users = [make(build.tasks[0], seed) for seed in range(4)]
        assert [e.episodes for e in t.user_pool.endpoints] == [2, 2]
        msgs = [{"role": "user", "content": "Turn on the light."}, {"role": "assistant", "content": "Which one?"}]

        async def replies():
            return await asyncio.gather(*(u.reply(msgs) for u in users))

        out = asyncio.run(replies())
        assert sorted(r.content for r in out) == ["Please do it.", "Please do it.", "Thanks.", "Thanks."]
        assert len(u1.requests) == len(u2.requests) == 2 and u1.requests[0]["model"] == "sim"
        for u in users:
            u.release()
        assert [e.episodes for e in t.user_pool.endpoints] == [0, 0]


def _complete(url: str, max_tokens: int = 4) -> None:
    from forgec.train.rollout import http_json

    http_json("POST", url + "/completions", {"model": "policy", "prompt": [1, 2, 3], "max_tokens": max_tokens})


def test_a_reload_pauses_generation_and_checks_the_cache_reset(tmp_path):
    """vLLM answers /reset_prefix_cache with success=false while requests hold blocks: forgec pauses (in-flight
    requests finish on the old weights), reloads, resets until success, stamps the version, resumes."""
    import threading
    import time

    from forgec.train.fleet import server_versions
    from forgec.train.rollout import StaleCacheError, reload_remote

    (tmp_path / "version").write_text("5")
    with FakeVLLM("a", delay=0.4) as a:
        t = threading.Thread(target=_complete, args=(a.url,))
        t.start()
        time.sleep(0.1)  # a request is in flight
        got = reload_remote(a.url, tmp_path, retries=3, version=5)
        t.join()
        assert got == {"paused": True, "cache_refusals": 0, "version": "5"}
        assert a.calls == ["/pause", "/collective_rpc", "/reset_prefix_cache", "/update_weight_version", "/resume"]
        assert server_versions([a.url]) == {a.url: "5"}

    # an older server without /pause: the reset is refused while the request runs, retried until it says success
    with FakeVLLM("b", delay=0.6) as b:
        b.no_pause = True
        t = threading.Thread(target=_complete, args=(b.url,))
        t.start()
        time.sleep(0.1)
        got = reload_remote(b.url, tmp_path, retries=6)
        t.join()
        assert got["paused"] is False and got["cache_refusals"] >= 1 and b.reset_refusals == got["cache_refusals"]

    # a server whose cache never resets is refused (and, through sync_servers, taken out) instead of serving old prefixes
    with FakeVLLM("c", delay=1.5) as c:
        c.no_pause = True
        t = threading.Thread(target=_complete, args=(c.url,))
        t.start()
        time.sleep(0.1)
        with pytest.raises(StaleCacheError, match="refused 2 times"):
            reload_remote(c.url, tmp_path, retries=1)
        res = sync_servers({c.url: None}, tmp_path, "reload", version=6, retries=1)
        assert res[c.url].startswith("error: StaleCacheError")
        t.join()


def test_colocated_servers_sleep_through_the_update_and_wake_for_the_sync(tmp_path):
    from forgec.train.rollout import reload_remote
    from forgec.train.weightsync import colocated_update

    with FakeVLLM("a") as a, FakeVLLM("b") as b:
        def update():
            assert a.sleeping and b.sleeping  # the trainer only allocates once every server is asleep
            a.calls.append("UPDATE")
            return "updated"

        def sync():
            return [reload_remote(s.url, tmp_path, version=1) for s in (a, b)]

        out, res = colocated_update([a.url, b.url], update, sync)
        assert out == "updated" and all(r["version"] == "1" for r in res)
        assert a.calls == ["/sleep", "UPDATE", "/wake_up?tags=weights", "/pause", "/collective_rpc", "/reset_prefix_cache",
                           "/update_weight_version", "/resume", "/wake_up?tags=kv_cache"]
        assert b.calls[0] == "/sleep" and b.calls[-1] == "/wake_up?tags=kv_cache" and not b.sleeping
