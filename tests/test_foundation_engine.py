"""The shim's engine: packing, the cached compiled steps, the host-hook engine, the CPU runtime setting.

- ``TreePacking`` / ``WordPacking`` round trips keep values, dtypes and weak types.
- Environments of the same configuration share one compiled engine; a second
  construction in a process is fast.
- ``HostEngine`` (jitted segments between host hooks) with no host hooks gives
  bit-for-bit the all-jitted engine's observations, rewards and states on the
  canonical economy, across two episodes (so its reset and step follow
  ``BaseEnvironment.reset`` / ``step``, carry-over included).
- Plain action dicts are packed by the agents' fast path exactly as their
  full parse would pack them, with its errors; anything else goes to the parse.
- ``configure_cpu_runtime`` sets its two CPU settings only when asked
  (``$JAXECON_SHIM_CPU_RUNTIME`` or ``enable=True``), once, and keeps the
  user's own values; in a fresh process XLA's
  CPU client then runs one pool thread, and building a shim environment
  without the switch changes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon import foundation
from jaxecon.configs import default_config
from jaxecon.foundation import cpu_runtime
from jaxecon.foundation.engine import clear_engine_cache, engine_key
from jaxecon.foundation.host_engine import HostEngine
from jaxecon.foundation.packing import TreePacking, WordPacking
from jaxecon.interop.reference import random_valid_actions

T = 15


def _canonical(**overrides) -> dict:
    cfg = default_config()
    cfg.update(episode_length=T, dense_log_frequency=None)
    cfg.update(overrides)
    return cfg


def test_packing_round_trips():
    tree = {"f": jnp.arange(6.0).reshape(2, 3), "i16": jnp.array([-3, 7], jnp.int16),
            "b": jnp.array([True, False]), "w": 2.5, "u": jnp.array([1, 2], jnp.uint32)}
    tp = TreePacking(tree)
    assert set(tp.dtypes) == {np.dtype(np.float32), np.dtype(np.int16), np.dtype(bool), np.dtype(np.uint32)}
    out = jax.jit(lambda t: tp.unpack(tp.pack(t)))(tree)
    for k in tree:
        np.testing.assert_array_equal(np.asarray(out[k]), np.asarray(tree[k]))
        assert out[k].dtype == jnp.asarray(tree[k]).dtype
    assert out["w"].weak_type  # a Python float stays weakly typed
    host = tp.unpack_numpy(tp.pack_numpy(jax.device_get(tree)))
    np.testing.assert_array_equal(host["i16"], [-3, 7])
    wp = WordPacking(tree)
    back = wp.unpack_numpy([np.asarray(b) for b in jax.jit(wp.pack)(tree)])
    for k in tree:
        np.testing.assert_array_equal(back[k], np.asarray(tree[k]))
        assert back[k].dtype == jnp.asarray(tree[k]).dtype
    # narrow dtypes of odd sizes are packed densely, 8-byte ones after them aligned
    odd = {"a": jnp.array([True, False, True]), "b": jnp.array([-3, 7, -32768], jnp.int16),
           "c": jnp.arange(5, dtype=jnp.uint8) * 50, "d": jnp.array(False), "e": jnp.float32(-0.0)}
    with jax.enable_x64(True):
        t64 = dict(odd, f=jnp.array([1.0 / 3.0], jnp.float64), g=jnp.array([2**40, -1], jnp.int64))
        wp = WordPacking(t64)
        assert wp.size == 1 + 2 + 2 + 1 + 1 + 1 + 2 + 4  # dense, f aligned to an even word
        buf, = (np.array(b) for b in jax.jit(wp.pack)(t64))
        back = wp.unpack_numpy([buf])
        for k, v in t64.items():
            assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
            np.testing.assert_array_equal(np.ravel(back[k]).view(np.uint8), np.ravel(v).view(np.uint8))
            assert np.shares_memory(back[k], buf) or back[k].size == 0  # views, no copies
        assert back["f"][0] == 1.0 / 3.0 and back["g"][0] == 2**40



def test_word_packing_sends_maps_as_their_own_arrays():
    """With ``separate_ndim``, leaves of that many dimensions leave beside the
    word buffer, and the host reads every leaf back exactly, as views."""
    tree = {"map": jnp.arange(24, dtype=jnp.int16).reshape(2, 3, 4), "v": jnp.array([1.5, -2.0]),
            "b": jnp.array([True, False, True]), "m": jnp.ones((2, 2, 2), bool)}
    wp = WordPacking(tree, separate_ndim=3)
    out = jax.jit(wp.pack)(tree)
    assert wp.n_separate == 2 and len(out) == 3 and wp.size == 2 + 1
    # the leaves in flattening order (b, m, map, v): m and map leave as they are
    assert out[1].dtype == jnp.bool_ and out[2].shape == (2, 3, 4) and out[2].dtype == jnp.int16
    bufs = [np.array(b) for b in out]
    back = wp.unpack_numpy(bufs)
    for k, v in tree.items():
        assert back[k].dtype == v.dtype and back[k].shape == v.shape, k
        np.testing.assert_array_equal(back[k], np.asarray(v))
    assert np.shares_memory(back["map"], bufs[2]) and np.shares_memory(back["v"], bufs[0])
    with pytest.raises(ValueError, match="separate_ndim must be None or an int >= 1"):
        WordPacking(tree, separate_ndim=0)


def test_same_configuration_shares_one_compiled_engine():
    cfg = _canonical()
    first = foundation.make_env_instance(**cfg, seed=2)
    first.reset()
    first.step()  # (waits for the compiles)
    # The same compiled engine serves the second env (its construction time
    # is measured by `jaxecon bench`, not asserted here: timed tests flake
    # on a loaded machine).
    second = foundation.make_env_instance(**cfg, seed=2)
    second.reset()
    second.step()
    assert second._engine is first._engine
    # shim-only kwargs share the engine; anything else is a new configuration
    third = foundation.make_env_instance(**_canonical(dense_log_frequency=2), seed=2)
    assert third._engine is first._engine
    # so does the seed: it reaches only the key and the params
    assert foundation.make_env_instance(**cfg, seed=3)._engine is first._engine
    assert engine_key(first._core.name, _canonical(episode_length=T + 1)) != engine_key(first._core.name, cfg)


def test_host_engine_matches_the_jitted_engine_bit_for_bit():
    cfg = _canonical()
    fast = foundation.make_env_instance(**cfg, seed=5)
    slow = foundation.make_env_instance(**cfg, seed=5)
    slow._engine = HostEngine(slow._core, slow, {})
    assert fast._engine.runs_on_host is False and slow._engine.runs_on_host is True
    rng = np.random.default_rng(0)
    for episode in range(2):  # the second reset carries the first episode's state over
        obs_f, obs_s = fast.reset(), slow.reset()
        for t in range(T):
            jax.tree.map(np.testing.assert_array_equal, obs_s, obs_f)
            actions = random_valid_actions(obs_f, fast, rng)
            obs_f, rew_f, done_f, _ = fast.step(dict(actions))
            obs_s, rew_s, done_s, _ = slow.step(dict(actions))
            assert rew_s == rew_f and done_s == done_f
        jax.tree.map(np.testing.assert_array_equal, jax.device_get(slow.state), jax.device_get(fast.state))
        assert slow.previous_episode_metrics == pytest.approx(fast.previous_episode_metrics, nan_ok=True)


def test_plain_actions_pack_as_the_parsers_do():
    """The agents' fast path (``FoundationEnv._plain_actions``) packs plain
    action dicts exactly as the full parse does, raises its errors, and
    leaves other formats to it."""
    env = foundation.make_env_instance(**_canonical(), seed=1)
    obs = env.reset()
    engine = env._engine
    rng = np.random.default_rng(3)
    for _ in range(20):
        actions = random_valid_actions(obs, env, rng)
        plain = env._plain_actions(actions)
        buffers = env._parsed_buffers(actions)
        buffers = {k: buffers.get(k, dict(a.action)) for k, a in env._agent_lookup.items()}
        fa = env._functional_actions(buffers)
        np.testing.assert_array_equal(plain, engine.pack_actions(fa["a"], fa["p"]))
        obs, *_ = env.step(actions)
    too_high = env.get_agent(0).action_spaces
    with pytest.raises(ValueError, match="out of range") as fast:
        env._plain_actions({"0": too_high})
    with pytest.raises(ValueError, match="out of range") as full:
        env.parse_actions({"0": too_high})
    assert str(fast.value) == str(full.value)  # one rule, one message
    planner = env.get_agent("p")
    with pytest.raises(ValueError, match="out of range"):
        env._plain_actions({"p": [0] * (len(planner.action_spaces) - 1) + [int(planner.action_spaces[-1])]})
    with pytest.raises(ValueError, match="integer"):
        env._plain_actions({"p": [0.5] * len(planner.action_spaces)})
    assert env._plain_actions({"0": np.array([1])}) is None  # not the fast path's format
    assert env._plain_actions({"p": [0]}) is None  # wrong length: the parser's message
    assert env._plain_actions({"9": 1}) is None  # no such agent
    with pytest.raises(ValueError, match="out of range"):
        env.step({"0": too_high})


def test_cpu_runtime_setting(monkeypatch):
    saved = jax.config.values["jax_cpu_enable_async_dispatch"]
    for var in ("PJRT_NPROC", "NPROC", "JAX_CPU_ENABLE_ASYNC_DISPATCH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(cpu_runtime, "_checked", False)
    monkeypatch.delenv(cpu_runtime.ENV_VAR, raising=False)
    assert cpu_runtime.configure_cpu_runtime() == {} and "PJRT_NPROC" not in os.environ  # not asked
    monkeypatch.setenv(cpu_runtime.ENV_VAR, "1")
    assert cpu_runtime.configure_cpu_runtime(enable=False) == {} and "PJRT_NPROC" not in os.environ
    monkeypatch.setenv("PJRT_NPROC", "2")  # the user's own value stays
    try:
        assert cpu_runtime.configure_cpu_runtime() == {"jax_cpu_enable_async_dispatch": False}
        assert os.environ["PJRT_NPROC"] == "2" and jax.config.values["jax_cpu_enable_async_dispatch"] is False
        monkeypatch.delenv("PJRT_NPROC")
        monkeypatch.delenv(cpu_runtime.ENV_VAR)
        monkeypatch.setattr(cpu_runtime, "_checked", False)
        assert cpu_runtime.configure_cpu_runtime(enable=True)["PJRT_NPROC"] == "1"
        assert cpu_runtime.configure_cpu_runtime(enable=True) == {}  # once per process
    finally:
        os.environ.pop("PJRT_NPROC", None)
        jax.config.update("jax_cpu_enable_async_dispatch", saved)


def test_cpu_runtime_applies_in_a_fresh_process():
    code = (
        "import collections, os\n"
        "from jaxecon.foundation.cpu_runtime import configure_cpu_runtime\n"
        "done = configure_cpu_runtime(enable=True)\n"
        "import jax, jax.numpy as jnp\n"
        "jnp.arange(3).sum().block_until_ready()\n"
        "tasks = os.listdir('/proc/self/task') if os.path.isdir('/proc/self/task') else []\n"
        "pool = sum(open(f'/proc/self/task/{t}/comm').read().startswith('tf_XLAEigen') for t in tasks)\n"
        "print(sorted(done), jax.config.values['jax_cpu_enable_async_dispatch'], pool)\n"
    )
    env = {k: v for k, v in os.environ.items()
           if k not in ("PJRT_NPROC", "NPROC", "JAX_CPU_ENABLE_ASYNC_DISPATCH", cpu_runtime.ENV_VAR)}
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    assert words[:3] == ["['PJRT_NPROC',", "'jax_cpu_enable_async_dispatch']", "False"], out.stdout
    if os.path.isdir("/proc/self/task"):  # Linux (thread names): XLA made one pool thread
        assert words[3] == "1", out.stdout


def test_envs_of_other_seeds_share_the_engine_with_their_own_params():
    """SimpleLabor draws its skills from the seed into Params.skills: an env
    built with another seed through a cached engine steps exactly as one
    built from scratch with that seed."""
    cfg = {"scenario_name": "one-step-economy", "n_agents": 3, "world_size": [1, 1],
           "episode_length": 2, "multi_action_mode_agents": False,
           "multi_action_mode_planner": True, "flatten_observations": True, "flatten_masks": True,
           "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": {"period": 2}}]}
    runs = {}
    for label, seed, fresh in (("seed 1", 1, True), ("seed 2 cached", 2, False), ("seed 2 fresh", 2, True)):
        if fresh:
            clear_engine_cache()
        env = foundation.make_env_instance(**cfg, seed=seed)
        obs0 = env.reset()
        obs1, rew, _, _ = env.step({str(i): 3 for i in range(3)})
        runs[label] = (env._engine, obs0, obs1, rew)
    assert runs["seed 2 cached"][0] is runs["seed 1"][0]
    assert runs["seed 2 fresh"][0] is not runs["seed 1"][0]
    a, b = runs["seed 2 cached"][1:], runs["seed 2 fresh"][1:]
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    differ = [not np.array_equal(np.asarray(x), np.asarray(y)) for x, y in
              zip(jax.tree_util.tree_leaves(runs["seed 1"][1:]), jax.tree_util.tree_leaves(a))]
    assert any(differ)  # the skills (and so the rewards) depend on the seed
