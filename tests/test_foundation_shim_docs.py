"""docs/foundation_shim.md's porting example runs, and the port agrees with the original.

The page's two ``python`` code blocks (the numpy ``WoodBuyback`` and its
pure-JAX port) are executed as written. The same config and the same
actions run with each; coin, observations, ``agent.state`` and metrics must
agree (the component is deterministic). The port then also runs in the
functional API.
"""

from __future__ import annotations

import pathlib
import re

import jax
import numpy as np

import jaxecon
from jaxecon import foundation

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "foundation_shim.md"
CONFIG = dict(
    components=[("Build", {}), ("WoodBuyback", {"price": 3.0}), ("Gather", {})],
    n_agents=3, world_size=[10, 10], episode_length=40, starting_wood_coverage=0.4,
    wood_regen_weight=1.0, flatten_observations=False,
)


def _blocks() -> list:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def _run(seed: int = 0) -> list:
    env = foundation.make_env_instance("uniform/simple_wood_and_stone", **CONFIG, seed=seed)
    obs = env.reset()
    rng = np.random.default_rng(seed)
    trace = []
    for t in range(40):
        # move, gather and sell: Gather's 4 moves, then WoodBuyback's action
        actions = {str(i): int(rng.choice([0, 2, 3, 4, 5, 6, 6, 6])) for i in range(env.n_agents)}
        obs, rew, done, _ = env.step(actions)
        trace.append((
            {i: dict(env.get_agent(i).inventory) for i in range(env.n_agents)},
            {k: {f: np.asarray(v) for f, v in o.items() if f.startswith("WoodBuyback")} for k, o in obs.items()},
            [env.get_agent(i).state["wood_sold"] for i in range(env.n_agents)],
            {k: o["action_mask"] for k, o in obs.items() if k != "p"},
        ))
    trace.append(env.previous_episode_metrics["WoodBuyback/n_sales"])
    return trace


def test_the_porting_example_runs_and_agrees():
    numpy_block, jax_block = _blocks()
    exec(compile(numpy_block, str(DOC), "exec"), {})
    assert foundation.components.get("WoodBuyback").__module__ != "jaxecon.core.component"
    original = _run()
    exec(compile(jax_block, str(DOC), "exec"), {})
    ported = _run()
    assert original[-1] == ported[-1] > 0  # n_sales
    for t, (a, b) in enumerate(zip(original[:-1], ported[:-1])):
        assert a[0] == b[0], f"step {t} inventories"
        for k in a[1]:
            for f in a[1][k]:
                np.testing.assert_allclose(a[1][k][f], b[1][k][f], err_msg=f"step {t} {k} {f}")
        assert a[2] == b[2], f"step {t} wood_sold"
        for k in a[3]:
            np.testing.assert_array_equal(a[3][k], b[3][k])
    # the port is a jaxecon component: the functional API runs it, jitted
    env = jaxecon.make("uniform/simple_wood_and_stone", **CONFIG)
    obs, state = jax.jit(env.reset)(jax.random.key(0), env.default_params)
    obs, state, *_ = jax.jit(env.step)(jax.random.key(1), state, {}, env.default_params)
    assert "WoodBuyback-wood_sold" in obs["a"]
