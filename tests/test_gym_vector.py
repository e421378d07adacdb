"""`forgec.gym` under Gymnasium's own vector envs (issue 24): every example task through `AsyncVectorEnv`.

Before, the spaces' character set was 100 ASCII characters while conversations hold em dashes and accents, so
`AsyncVectorEnv` (shared memory, which stores text as character indices) crashed on 47 of 60 tasks. Checked with
Gymnasium itself: its `AsyncVectorEnv` with shared memory, its `flatten`/`unflatten`, its `make` with the
module-qualified id in a fresh interpreter that never imported forgec.gym; and the oracle (which scores 1.0 under
`forgec eval`) scoring 1.0 on every task through the vector env.
"""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.spaces.utils import flatten, unflatten
from servekit import compile_examples

from forgec.gym import ChatText, make_vector, reply_to_action
from forgec.runtime import load
from forgec.runtime.agents import OracleAgent


@pytest.fixture(scope="module")
def build_dir(tmp_path_factory):
    return compile_examples(tmp_path_factory.mktemp("gymvec") / "build", n=20)


def test_chat_text_holds_any_unicode_through_gymnasiums_flatten():
    space = ChatText(max_length=64)
    for text in ["plain", "an em dash — and “quotes”", "Müller, São Paulo, 東京, emoji 🎉", "", "\x00\t\n", "\udfff lone"]:
        assert space.contains(text)
        flat = flatten(space, text)
        assert flat.dtype == np.int32 and flat.shape == (64,)
        assert unflatten(space, flat) == text
    sample = space.sample()
    assert space.contains(sample) and unflatten(space, flatten(space, sample)) == sample
    assert ChatText(max_length=64) == space and ChatText(max_length=65) != space


def test_async_vector_env_runs_every_example_task_and_the_oracle_scores_one(build_dir):
    b = load(build_dir)
    ids = [t.id for t in b.tasks]
    assert len(ids) == 60
    n = 4
    venv = make_vector(build_dir, n)  # AsyncVectorEnv with shared memory (Gymnasium's default)
    assert isinstance(venv, gymnasium.vector.AsyncVectorEnv)
    rewards: dict[str, float] = {}
    non_ascii = 0
    try:
        obs, infos = venv.reset(seed=0)
        pending = [False] * n  # the sub-env ended last step: this step resets it (Gymnasium's next-step autoreset)
        steps = 0
        while len(rewards) < len(ids):
            actions = []
            for i in range(n):
                if pending[i]:
                    actions.append("")  # ignored by the autoreset
                    continue
                msgs = json.loads(obs[i])
                assert msgs == infos["messages"][i]  # the text came through shared memory intact
                non_ascii += any(ord(c) > 127 for c in obs[i])
                task = b.task(infos["task_id"][i])
                actions.append(reply_to_action(OracleAgent(task).act_sync(msgs, b.envs[task.env].TOOLS)))
            obs, reward, terminated, truncated, infos = venv.step(tuple(actions))
            for i in range(n):
                if pending[i]:
                    pending[i] = False
                    continue
                if terminated[i] or truncated[i]:
                    tid = infos["task_id"][i]  # a sub-env done with its share starts it again: same reward
                    assert rewards.setdefault(tid, float(reward[i])) == float(reward[i]), tid
                    pending[i] = True
            steps += 1
            assert steps < 2000
    finally:
        venv.close()
    assert sorted(rewards) == sorted(ids)
    assert all(r == 1.0 for r in rewards.values()), {k: v for k, v in rewards.items() if v != 1.0}
    assert non_ascii > 0  # conversations with characters beyond ASCII (the em dashes) went through


def test_make_with_the_module_qualified_id_needs_no_import(build_dir):
    code = ("import gymnasium, sys; assert 'forgec.gym' not in sys.modules\n"
            f"env = gymnasium.make('forgec.gym:forgec/Task-v0', build={str(build_dir)!r})\n"
            "obs, info = env.reset(seed=1); print(info['task_id'])")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "/" in r.stdout.strip()
