"""jaxecon.interfaces.tf_agents: TF-Agents' PyEnvironment over a jaxecon economy.

The tiny economy ``common.TINY_CONFIG`` (2 agents, 25x25, 3-step episodes,
multi-action agents so that the action spec has per-subspace bounds). Every
PyEnvironment here is built on the one env object ``jitted_env`` shares with
the RLHive and checkpoint tests, so the host driver's jitted reset/step
compile once per batch size for the session.
"""

from __future__ import annotations

import jax
import matplotlib
import numpy as np
import pytest

from jaxecon.interfaces import specs
from jaxecon.interfaces import tf_agents as tfa
from jaxecon.render import render_world

from common import TINY_CONFIG, tree_equal

BATCH = 2


@pytest.fixture(scope="module")
def env(jitted_env):
    return jitted_env(TINY_CONFIG).env


def lead(pyenv) -> tuple:
    return () if pyenv.batch_size is None else (pyenv.batch_size,)


def random_actions(pyenv, rng):
    return specs.sample_spec_nest(pyenv.action_spec(), rng, outer_dims=lead(pyenv))


# ------------------------------------------------------------------------ specs
def test_backend_is_native_without_tf_agents():
    try:
        import tf_agents  # noqa: F401
    except ImportError:
        assert tfa.BACKEND == "jaxecon"
        assert tfa.ArraySpec is specs.ArraySpec and tfa.TimeStep is specs.TimeStep
        assert issubclass(tfa.PyEnvironment, tfa._NativePyEnvironment)
    else:
        from tf_agents.environments.py_environment import PyEnvironment as Real

        assert tfa.BACKEND == "tf_agents" and issubclass(tfa.PyEnvironment, Real)


def test_specs_are_keyed_by_agent_with_a_leading_agent_axis(env):
    pyenv = tfa.PyEnvironment(env)
    n = env.n_agents
    obs = pyenv.observation_spec()
    assert set(obs) == {"a", "p"}
    space_a, space_p = env.observation_space("a"), env.observation_space("p")
    assert set(obs["a"]) == set(space_a.spaces) and set(obs["p"]) == set(space_p.spaces)
    for k, s in obs["a"].items():
        assert s.shape == (n,) + space_a[k].shape and s.dtype == space_a[k].dtype
    for k, s in obs["p"].items():
        assert s.shape == space_p[k].shape
    # bounded quantities get bounded specs with the space's bounds
    mask = obs["a"]["action_mask"]
    assert specs.is_bounded(mask) and mask.minimum.min() == 0 and mask.maximum.max() == 1
    np.testing.assert_array_equal(obs["p"]["time"].maximum, np.broadcast_to(space_p["time"].high, (1,)))

    act = pyenv.action_spec()
    dims = env.action_space("a").nvec
    assert act["a"].shape == (n, len(dims)) and act["a"].dtype == np.int32
    np.testing.assert_array_equal(act["a"].maximum, np.broadcast_to(dims - 1, (n, len(dims))))
    assert np.all(act["a"].minimum == 0)
    assert act["p"].shape == env.action_space("p").shape

    assert pyenv.reward_spec()["a"].shape == (n,) and pyenv.reward_spec()["p"].shape == ()
    disc = pyenv.discount_spec()
    assert disc["a"].shape == (n,) and float(disc["p"].minimum) == 0.0 and float(disc["p"].maximum) == 1.0
    ts_spec = pyenv.time_step_spec()
    assert ts_spec.step_type == tfa.ArraySpec((), np.int32)
    assert ts_spec.observation is obs and ts_spec.reward is pyenv.reward_spec()
    assert ts_spec.discount is pyenv.discount_spec()


def test_a_config_dict_gives_the_same_specs(env):
    from_dict = tfa.PyEnvironment(dict(TINY_CONFIG))
    from_env = tfa.PyEnvironment(env)
    assert from_dict.time_step_spec() == from_env.time_step_spec()
    assert from_dict.action_spec() == from_env.action_spec()


# ------------------------------------------------- validate_py_environment, ours
def validate_py_environment(pyenv, episodes: int, rng) -> list:
    """What tf_agents.environments.utils.validate_py_environment checks, in our
    own code: random actions drawn within action_spec(), every TimeStep
    checked against time_step_spec() (with the batch axis when batched).
    Returns the step types seen."""
    spec = pyenv.time_step_spec()
    if pyenv.batch_size is not None:
        spec = specs.add_outer_dims_nest(spec, (pyenv.batch_size,))
    seen, count = [], 0
    time_step = pyenv.reset()
    while count < episodes:
        if not specs.check_arrays_nest(time_step, spec):
            bad = [jax.tree_util.keystr(p) for (p, s), x in zip(
                jax.tree_util.tree_flatten_with_path(spec, is_leaf=lambda s: isinstance(s, tfa.ArraySpec))[0],
                jax.tree.leaves(time_step)) if not s.check_array(x)]
            raise AssertionError(f"time step does not match time_step_spec() at {bad}")
        seen.append(np.asarray(time_step.step_type).copy())
        action = random_actions(pyenv, rng)
        assert specs.check_arrays_nest(action, specs.add_outer_dims_nest(pyenv.action_spec(), lead(pyenv)))
        time_step = pyenv.step(action)
        count += int(np.sum(time_step.is_last()))
    return seen


@pytest.mark.parametrize("batch_size", [None, BATCH])
def test_validate_py_environment(env, batch_size):
    pyenv = tfa.PyEnvironment(env, batch_size=batch_size)
    assert pyenv.batched == (batch_size is not None) and pyenv.batch_size == batch_size
    seen = validate_py_environment(pyenv, episodes=2 * (batch_size or 1), rng=np.random.default_rng(0))
    types = [int(np.asarray(s).reshape(-1)[0]) for s in seen]
    assert types == [0, 1, 1, 2, 0, 1, 1]  # FIRST MID MID LAST FIRST ...: 3-step episodes
    last = pyenv.current_time_step()
    assert np.all(last.is_last()) and np.asarray(last.step_type).shape == lead(pyenv)
    first = pyenv.step(random_actions(pyenv, np.random.default_rng(1)))
    assert np.all(first.is_first())
    for leaf in jax.tree.leaves(first.reward):
        assert np.all(leaf == 0.0) and leaf.dtype == np.float32
    for leaf in jax.tree.leaves(first.discount):
        assert np.all(leaf == 1.0)
    assert first.observation["a"]["flat"].shape == lead(pyenv) + (env.n_agents,) + env.observation_space("a")["flat"].shape
    # The real check too, where TF-Agents is installed; unbatched only: its random
    # policy cannot sample per-element bounds (the agents' action heads) under a batch axis.
    if tfa.BACKEND == "tf_agents" and batch_size is None:
        from tf_agents.environments import utils

        utils.validate_py_environment(pyenv, episodes=2)


def test_handle_auto_reset_and_should_reset(env):
    auto = tfa.PyEnvironment(env, handle_auto_reset=True)
    manual = tfa.PyEnvironment(env)
    rng = np.random.default_rng(2)
    ts = auto.reset()
    manual.reset()
    assert not auto.should_reset(ts)
    for _ in range(env.episode_length):
        action = random_actions(auto, rng)
        ts = auto.step(action)
        manual.step(action)
    assert ts.is_last() and auto.should_reset(ts) and not manual.should_reset(ts)
    # the step after LAST starts a new episode and ignores its action (even a bad one)
    bad = {"a": np.full((2, 2), 99, np.int32), "p": np.zeros(1, np.int32)}
    assert auto.step(bad).is_first() and manual.step(bad).is_first()
    assert tree_equal(auto.current_time_step(), manual.current_time_step())


# --------------------------------------------------------------------- state
@pytest.mark.parametrize("batch_size", [None, BATCH])
def test_get_state_set_state_continues_bit_for_bit(env, batch_size):
    pyenv = tfa.PyEnvironment(env, batch_size=batch_size)
    rng = np.random.default_rng(3)
    pyenv.reset()
    pyenv.step(random_actions(pyenv, rng))
    token = pyenv.get_state()
    saved_ts = jax.tree.map(np.copy, pyenv.current_time_step())
    actions = [random_actions(pyenv, rng) for _ in range(5)]  # crosses an episode end

    def run(e):
        return [(e.step(a), e.get_info()) for a in actions]

    first = run(pyenv)
    pyenv.set_state(token)
    assert tree_equal(pyenv.current_time_step(), saved_ts)
    again = run(pyenv)
    assert tree_equal(first, again)
    # the token is immutable and untouched by the steps taken after it
    assert tree_equal(token.extra["time_step"], saved_ts)
    with pytest.raises(ValueError):
        token.extra["time_step"].observation["a"]["flat"][...] = 0
    with pytest.raises(TypeError):
        token.extra["key"] = None
    # another PyEnvironment of the same configuration takes it too
    other = tfa.PyEnvironment(env, batch_size=batch_size)
    other.set_state(token)
    assert tree_equal(run(other), first)


def test_seed_gives_reproducible_episodes(env):
    a, b, c = (tfa.PyEnvironment(env) for _ in range(3))
    a.seed(7)
    b.seed(7)
    c.seed(8)
    rng_actions = [random_actions(a, np.random.default_rng(4)) for _ in range(2)]
    runs = []
    for e in (a, b, c):
        runs.append([e.reset()] + [e.step(x) for x in rng_actions])
    assert tree_equal(runs[0], runs[1])
    assert not tree_equal(runs[0][0].observation, runs[2][0].observation)


def test_get_info_and_current_time_step_before_reset(env):
    pyenv = tfa.PyEnvironment(env)
    with pytest.raises(ValueError, match="not initialized"):
        pyenv.current_time_step()
    with pytest.raises(ValueError, match="before reset"):
        pyenv.get_info()
    assert pyenv.step({"a": None, "p": None}).is_first()  # step before reset resets
    assert pyenv.get_info() == {}
    pyenv.step(random_actions(pyenv, np.random.default_rng(5)))
    info = pyenv.get_info()
    assert "social/equality" in info and np.ndim(info["social/equality"]) == 0


# ----------------------------------------------------------------- rendering
def test_render_rgb_array_and_human(env):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    h, w = env.world_size
    with tfa.PyEnvironment(env) as pyenv:
        pyenv.reset()
        rgb = pyenv.render("rgb_array")
        assert rgb.shape == (h * 16, w * 16, 3) and rgb.dtype == np.uint8
        state = pyenv._economy.state
        np.testing.assert_array_equal(
            rgb, render_world(jax.device_get(state.maps), owner=np.asarray(state.owner["House"]),
                              loc=np.asarray(state.loc)))
        before = set(plt.get_fignums())
        assert pyenv.render("human") is None
        assert len(set(plt.get_fignums()) - before) == 1
    assert set(plt.get_fignums()) == before  # close() on leaving the context

    batched = tfa.PyEnvironment(env, batch_size=BATCH)
    batched.reset()
    frames = batched.render()
    assert frames.shape == (BATCH, h * 16, w * 16, 3) and frames.dtype == np.uint8


# ----------------------------------------------------------------- bad input
def test_actions_outside_the_spec_are_clear_errors(env):
    pyenv = tfa.PyEnvironment(env)
    pyenv.reset()
    ok = random_actions(pyenv, np.random.default_rng(6))
    too_big = dict(ok, a=np.array([[0, 5], [1, 0]], np.int32))  # Gather head has 0..4
    with pytest.raises(ValueError, match=r'action\["a"\] is outside the action space.*bad entries at \[\[0, 1\]\]'):
        pyenv.step(too_big)
    with pytest.raises(ValueError, match=r'action\["a"\] must have shape \(2, 2\)'):
        pyenv.step(dict(ok, a=np.zeros(2, np.int32)))
    with pytest.raises(ValueError, match=r'action\["p"\] must hold integers'):
        pyenv.step(dict(ok, p=np.array([0.5])))
    with pytest.raises(ValueError, match='keys "a" and "p"'):
        pyenv.step({"a": ok["a"]})
    batched = tfa.PyEnvironment(env, batch_size=BATCH)
    batched.reset()
    with pytest.raises(ValueError, match=r'action\["a"\] must have shape \(2, 2, 2\)'):
        batched.step(ok)  # missing the batch axis


def test_set_state_rejects_tokens_from_another_env(env):
    pyenv = tfa.PyEnvironment(env)
    other_config = dict(TINY_CONFIG, n_agents=3, episode_length=4)
    foreign = tfa.PyEnvironment(other_config).get_state()
    with pytest.raises(ValueError, match=r"different configuration.*episode_length.*n_agents"):
        pyenv.set_state(foreign)
    with pytest.raises(ValueError, match="batch_size=2"):
        pyenv.set_state(tfa.PyEnvironment(env, batch_size=BATCH).get_state())
    with pytest.raises(TypeError, match="token returned by get_state"):
        pyenv.set_state({"state": None})


def test_bad_construction_and_render_arguments(env):
    with pytest.raises(TypeError, match="env_or_config"):
        tfa.PyEnvironment("uniform/simple_wood_and_stone")
    from jaxecon.wrappers import LogWrapper

    with pytest.raises(TypeError, match=r"env_or_config must be .*got jaxecon.wrappers.log.LogWrapper \(a wrapped env: "
                                        r"pass its jaxecon env, env.unwrapped\)"):
        tfa.PyEnvironment(LogWrapper(env))
    with pytest.raises(TypeError, match="params must be the env's EnvParams"):
        tfa.PyEnvironment(env, params={"isoelastic_eta": 0.23})
    p = env.default_params
    wide = p.replace(scenario=p.scenario.replace(isoelastic_eta=np.full(3, 0.23)))
    with pytest.raises(ValueError, match=r"params.scenario.isoelastic_eta has shape \(3,\), this env's has \(\)"):
        tfa.PyEnvironment(env, params=wide)
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        tfa.PyEnvironment(env, batch_size=0)
    with pytest.raises(ValueError, match="handle_auto_reset"):
        tfa.PyEnvironment(env, handle_auto_reset="yes")
    pyenv = tfa.PyEnvironment(env)
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        pyenv.seed(-1)
    with pytest.raises(RuntimeError, match="before reset"):
        pyenv.render()
    pyenv.reset()
    with pytest.raises(ValueError, match=r"mode must be one of \['rgb_array', 'human'\], got 'ansi'"):
        pyenv.render("ansi")


def test_native_base_keeps_reset_and_step_final():
    with pytest.raises(TypeError, match="implement _reset/_step"):
        class Bad(tfa._NativePyEnvironment):  # noqa: F841
            def step(self, action):
                return None
