"""The opt-in compact observation dtypes of the wood-and-stone scenarios (``obs_dtype``).

Every value of the observed ``map`` is a whole count (resource health, at most
``max_health``) or 0/1 (landmarks, the inside-the-world channel), so a
bfloat16 or uint8 map must hold exactly the float32 map's values: the same
economy stepped with the same keys gives the same observations (the map
converted back to float32) and bit-identical states; under "uint8" the
index maps (whole numbers up to n_agents + 1) are uint8 with the same values. The observation spaces
follow the dtype, and a dtype that cannot hold the scenario's ``max_health``
is refused at construction.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.configs import uniform10_config

N_STEPS = 4


def small_config(**kw):
    # 20 agents on 15x15: the windows read each tile many times (the padded-canvas
    # route of observation_windows); the planner sees the map too.
    cfg = uniform10_config()
    cfg.update(n_agents=20, world_size=[15, 15], episode_length=10, planner_gets_spatial_info=True)
    cfg.update(kw)
    return cfg


def run(env):
    """Observations and state after each of N_STEPS random steps (same keys for every env)."""
    params = env.default_params

    @jax.jit
    def rollout(key):
        obs, state = env.reset(key, params)

        def body(carry, k):
            obs, state = carry
            ka, ks = jax.random.split(k)
            obs, state, _, _, _ = env.step(ks, state, env.sample_actions(ka, obs), params)
            return (obs, state), (obs, state)

        return jax.lax.scan(body, (obs, state), jax.random.split(key, N_STEPS))[1]

    return rollout(jax.random.key(3))


@pytest.fixture(scope="module")
def float32_run():
    return run(jaxecon.make_from_config(small_config()))


@pytest.mark.parametrize("dtype", ["bfloat16", "uint8"])
def test_compact_map_holds_the_float32_values(float32_run, dtype):
    env = jaxecon.make_from_config(small_config(obs_dtype=dtype))
    obs, state = run(env)
    want_obs, want_state = float32_run
    run_maps = {}
    for group in ("a", "p"):
        got_map, want_map = obs[group].pop("world-map"), want_obs[group]["world-map"]
        run_maps[group] = got_map
        assert got_map.dtype == jnp.dtype(dtype) and want_map.dtype == jnp.float32
        np.testing.assert_array_equal(np.asarray(got_map.astype(jnp.float32)), np.asarray(want_map))
        assert float(jnp.max(want_map)) >= 1.0  # the comparison saw resources, not only zeros
    # the index maps: uint8 under obs_dtype="uint8" (20 agents: values up to 21), else int16
    idx_dtype = np.uint8 if dtype == "uint8" else np.int16
    for group in ("a", "p"):
        assert obs[group]["world-idx_map"].dtype == idx_dtype
        assert want_obs[group]["world-idx_map"].dtype == np.int16
        assert env.observation_space(group).spaces["world-idx_map"].dtype == idx_dtype
        assert int(jnp.max(want_obs[group]["world-idx_map"])) >= 2  # other agents were seen
    rest = {g: {k: v for k, v in want_obs[g].items() if k != "world-map"} for g in ("a", "p")}
    jax.tree.map(lambda a, b: np.testing.assert_array_equal(np.asarray(a), np.asarray(b)), obs, rest)
    jax.tree.map(lambda a, b: np.testing.assert_array_equal(np.asarray(a), np.asarray(b)), state, want_state)
    # the spaces follow the dtype and hold the observations of the last step
    last = {"a": run_maps["a"][-1], "p": run_maps["p"][-1]}
    for agent in ("a", "p"):
        space = env.observation_space(agent).spaces["world-map"]
        assert space.dtype == jnp.dtype(dtype)
    assert all(bool(env.observation_space("a").spaces["world-map"].contains(w)) for w in last["a"])
    assert bool(env.observation_space("p").spaces["world-map"].contains(last["p"]))


def test_default_is_float32():
    env = jaxecon.make_from_config(small_config())
    assert env.obs_dtype == "float32"
    assert env.observation_space("a").spaces["world-map"].dtype == np.float32


@pytest.mark.parametrize("bad", ["float16", "int8", 3, None])
def test_bad_obs_dtype_is_refused(bad):
    with pytest.raises(ValueError, match="obs_dtype"):
        jaxecon.make_from_config(small_config(obs_dtype=bad))


def test_numpy_dtype_objects_are_accepted():
    env = jaxecon.make_from_config(small_config(obs_dtype=np.uint8))
    assert env.obs_dtype == "uint8"


@pytest.mark.parametrize("dtype,max_health,ok", [
    ("uint8", 255, True), ("uint8", 256, False), ("bfloat16", 256, True), ("bfloat16", 257, False),
    ("float32", 10_000, True),
])
def test_max_health_must_fit_the_dtype(dtype, max_health, ok):
    cfg = small_config(obs_dtype=dtype, wood_max_health=max_health)
    if ok:
        assert jaxecon.make_from_config(cfg).obs_dtype == dtype
    else:
        with pytest.raises(ValueError, match=rf"obs_dtype='{dtype}'.*{max_health}"):
            jaxecon.make_from_config(cfg)


def test_idx_map_stays_int16_when_the_agents_do_not_fit_uint8():
    # 255 agents: idx_map values reach 256, more than uint8 holds
    env = jaxecon.make_from_config(small_config(obs_dtype="uint8", n_agents=255, world_size=[16, 16]))
    assert env.idx_obs_dtype == np.int16
    assert env.observation_space("a").spaces["world-idx_map"].dtype == np.int16
    assert env.observation_space("a").spaces["world-map"].dtype == np.uint8
