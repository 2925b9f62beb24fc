"""The native observation adapters (jaxecon.wrappers.native, jaxecon.wrappers.rgb) and policy_env.

The economy is the canonical one without trade (Build, Gather, taxes) with two
agents and 10-step episodes, cheap to compile; the state the frames are drawn
from has three houses added (two owned, one unowned) so that every layer of
the picture appears. Oracles: a numpy recomputation of the normalised vector
from ``env.observation_space``; ``jaxecon.render.render_world`` (host numpy)
for the frames, and numpy average pooling for the preprocessing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon import spaces
from jaxecon.bench.measure import measure_adapter_overhead
from jaxecon.configs import default_config
from jaxecon.render import COLORS, agent_colors, render_world
from jaxecon.wrappers import AutoResetWrapper, LogWrapper, Wrapper
from jaxecon.wrappers.native import (
    NativeObjectObservationWrapper,
    NativeRGBObservationWrapper,
    policy_env,
)
from jaxecon.wrappers.rgb import WorldRenderer, check_resize

EPISODE = 10
TILE = 8


def _config(flatten=True):
    cfg = default_config()
    cfg["components"] = [c for c in cfg["components"] if "ContinuousDoubleAuction" not in c]
    cfg.update(episode_length=EPISODE, n_agents=2, flatten_observations=flatten)
    return cfg


def _with_houses(state):
    """``state`` with houses at (3, 3) (agent 0), (3, 4) (agent 1) and (4, 3) (unowned)."""
    house = state.maps["House"].at[3, 3].set(1.0).at[3, 4].set(1.0).at[4, 3].set(1.0)
    owner = state.owner["House"].at[3, 3].set(0).at[3, 4].set(1)
    return state.replace(maps={**state.maps, "House": house}, owner={**state.owner, "House": owner})


@pytest.fixture(scope="module")
def econ():
    """The flattened-observation economy after 4 random steps, houses added to the state,
    and its jitted step (``env, params, obs, state, step``)."""
    env = jaxecon.make_from_config(_config())
    params = env.default_params
    step, sample = jax.jit(env.step), jax.jit(env.sample_actions)
    obs, state = jax.jit(env.reset)(jax.random.key(0), params)
    for t in range(4):
        ka, ks = jax.random.split(jax.random.key(100 + t))
        obs, state, _reward, _done, _info = step(ks, state, sample(ka, obs), params)
    return env, params, obs, _with_houses(state), step


@pytest.fixture(scope="module")
def wrapped(econ):
    """The object adapter on ``econ``'s env, its jitted step, and one step from ``econ``'s
    state with random actions, bare and wrapped."""
    env, params, obs, state, step = econ
    w = NativeObjectObservationWrapper(env)
    wstep = jax.jit(w.step)
    actions = jax.jit(env.sample_actions)(jax.random.key(3), obs)
    raw = step(jax.random.key(4), state, actions, params)
    out = wstep(jax.random.key(4), state, actions, params)
    return w, raw, out


@pytest.fixture(scope="module")
def econ_unflat():
    """The same economy with Foundation's flatten_observations=False (many fields, nested
    p<i>): its first observation."""
    env = jaxecon.make_from_config(_config(flatten=False))
    obs, _state = jax.jit(env.reset)(jax.random.key(0), env.default_params)
    return env, obs


def _numpy_vector(space, obs_kind, lead):
    """The normalised vector recomputed in numpy from the space's Box fields (mask left out)."""
    parts = []

    def walk(sp, ob, top):
        for name, sub in sp.spaces.items():
            if top and name == "action_mask":
                continue
            if isinstance(sub, spaces.Dict):
                walk(sub, ob[name], False)
                continue
            x = np.asarray(ob[name], np.float32).reshape(lead + (-1,))
            low = np.broadcast_to(sub.low.astype(np.float64), sub.shape).reshape(-1)
            high = np.broadcast_to(sub.high.astype(np.float64), sub.shape).reshape(-1)
            norm = np.isfinite(low) & np.isfinite(high) & (low != high)
            lo32 = low.astype(np.float32)
            d32 = (high - low).astype(np.float32)
            parts.append(np.where(norm, (x - np.where(norm, lo32, 0)) / np.where(norm, d32, 1), x))

    walk(space, obs_kind, True)
    return np.concatenate(parts, axis=-1).astype(np.float32)


@pytest.mark.parametrize("which", ["flat", "unflat"])
def test_object_vector_is_the_normalised_fields(which, econ, econ_unflat):
    env, obs = (econ[0], econ[2]) if which == "flat" else econ_unflat
    w = NativeObjectObservationWrapper(env)
    out = jax.jit(w.observation)(obs)
    for kind, lead in (("a", (env.n_agents,)), ("p", ())):
        expected = _numpy_vector(env.observation_space(kind), obs[kind], lead)
        got = np.asarray(out[kind]["obs"])
        assert got.dtype == np.float32 and got.shape == lead + (w.obs_size[kind],)
        np.testing.assert_array_equal(got, expected)
        # the mask is beside the vector, unchanged
        np.testing.assert_array_equal(np.asarray(out[kind]["action_mask"]), np.asarray(obs[kind]["action_mask"]))
        box = w.observation_space(kind)["obs"]
        assert bool(box.contains(got if kind == "p" else got[0]))
        assert (box.low[w.normalised[kind]] == 0).all() and (box.high[w.normalised[kind]] == 1).all()
    # the maps are inside the agents' vector (unflattened economy: 7 x 11 x 11 world-map)
    assert w.obs_size["a"] > 7 * 11 * 11
    # some elements are normalised, some (unbounded inventories) are kept as they are
    assert w.normalised["a"].any() and not w.normalised["a"].all()


class _Bounds(Wrapper):
    """The env with one field's bounds replaced (to test constant and unbounded elements)."""

    def __init__(self, env, field, low, high):
        super().__init__(env)
        sp = env.observation_space("a")
        box = sp[field]
        new = dict(sp.spaces)
        new[field] = spaces.Box(low, high, box.shape, np.float32)
        self._space_a = spaces.Dict(new)

    def observation_space(self, agent):
        return self._space_a if agent == "a" else self._env.observation_space(agent)


def test_constant_and_unbounded_elements_are_kept(econ):
    env, obs = econ[0], econ[2]
    # "time" (one element): constant bounds -> kept; then unbounded -> kept; then [0, 2] -> t / 2
    t = np.asarray(obs["a"]["time"])[:, 0]
    order = list(env.observation_space("a").spaces)
    i = sum(int(np.prod(env.observation_space("a")[k].shape)) for k in order[: order.index("time")])
    for low, high, expected in ((0.5, 0.5, t), (-np.inf, np.inf, t), (0.0, 2.0, t / np.float32(2))):
        w = NativeObjectObservationWrapper(_Bounds(env, "time", low, high))
        np.testing.assert_array_equal(np.asarray(w.observation(obs)["a"]["obs"])[:, i], expected)


def test_side_channels_and_collective_reward(econ, wrapped):
    env = econ[0]
    w, raw, (wobs, _state, reward, _done, info) = wrapped
    ns = env.name
    for k, v in raw[4].items():  # the env's own info stays
        np.testing.assert_array_equal(np.asarray(info[k]), np.asarray(v))
    expected = {f"{ns}.flat", f"{ns}.time", f"{ns}.p.flat", f"{ns}.p.time", f"{ns}.collective_reward"}
    expected |= {f"{ns}.p.agents"}  # the planner's view of the agents, [n, d]
    assert expected <= set(info)
    # no maps (matrix-valued) and no mask in info
    assert not any(k.endswith(("world-map", "world-idx_map", "action_mask")) for k in info)
    np.testing.assert_array_equal(np.asarray(info[f"{ns}.flat"]), np.asarray(raw[0]["a"]["flat"]))
    np.testing.assert_array_equal(np.asarray(info[f"{ns}.p.agents"]), np.asarray(raw[0]["p"]["agents"]))
    assert all(info[k].dtype == jnp.float32 for k in expected)
    cr = info[f"{ns}.collective_reward"]
    assert cr.shape == () and float(cr) == pytest.approx(float(np.sum(np.asarray(reward["a"]))))
    np.testing.assert_array_equal(np.asarray(reward["a"]), np.asarray(raw[2]["a"]))
    np.testing.assert_array_equal(np.asarray(wobs["a"]["obs"]), np.asarray(w.observation(raw[0])["a"]["obs"]))


def test_side_channels_of_unflattened_fields(econ_unflat):
    """Scalar fields are [n] per mobile agent and 0-d for the planner; the nested "agents" dict is skipped."""
    from jaxecon.wrappers.native import side_channels

    env, obs = econ_unflat
    reward = {"a": jnp.array([1.5, -0.25], jnp.float32), "p": jnp.zeros((), jnp.float32)}
    info = side_channels(obs, reward, "x")
    assert info["x.world-inventory-Coin"].shape == (env.n_agents,)
    assert info["x.p.world-inventory-Coin"].shape == ()
    assert info["x.PeriodicBracketTax-curr_rates"].shape == (env.n_agents, 7)
    assert "x.p.agents" not in info  # a nested dict without flatten_observations
    assert "x.world-map" not in info and "x.action_mask" not in info
    assert float(info["x.collective_reward"]) == 1.25


def test_renderer_draws_render_worlds_picture(econ):
    env, state = econ[0], econ[3]
    maps = {k: np.asarray(v) for k, v in state.maps.items()}
    owner, loc = np.asarray(state.owner["House"]), np.asarray(state.loc)
    for tile in (1, 4, TILE):
        got = np.asarray(jax.jit(WorldRenderer(env, tile).world_frame)(state))
        np.testing.assert_array_equal(got, render_world(maps, owner=owner, loc=loc, scale=tile))
    # the houses take their owner's colour (unowned: House magenta)
    pal = agent_colors(env.n_agents)
    c = TILE // 2
    np.testing.assert_array_equal(got[3 * TILE + c, 3 * TILE + c], pal[0])
    np.testing.assert_array_equal(got[3 * TILE + c, 4 * TILE + c], pal[1])
    np.testing.assert_array_equal(got[4 * TILE + c, 3 * TILE + c], COLORS["House"])


@pytest.fixture(scope="module")
def world_frame(econ):
    state = econ[3]
    maps = {k: np.asarray(v) for k, v in state.maps.items()}
    return render_world(maps, owner=np.asarray(state.owner["House"]), loc=np.asarray(state.loc), scale=TILE)


def _pool(x, f):
    h, w = x.shape[-3] // f[0], x.shape[-2] // f[1]
    x = x.astype(np.float32).reshape(x.shape[:-3] + (h, f[0], w, f[1], 3))
    return x.mean(axis=(-4, -2), dtype=np.float32) / np.float32(255)


def test_fully_observable_frames(econ, world_frame):
    env, obs, state = econ[0], econ[2], econ[3]
    for kwargs, pool in ((dict(), (4, 4)), (dict(rgb_preprocessing="native"), (1, 1)),
                         (dict(rgb_resize=(100, 50)), (2, 4))):
        w = NativeRGBObservationWrapper(env, **kwargs)
        out = jax.jit(w.observation)(obs, state)
        a, p = np.asarray(out["a"]["obs"]), np.asarray(out["p"]["obs"])
        expected = _pool(world_frame, pool)
        assert a.shape == (env.n_agents,) + expected.shape == w.obs_shape["a"]
        np.testing.assert_allclose(p, expected, rtol=1e-6, atol=1e-7)
        for i in range(env.n_agents):  # the same frame for every agent and the planner
            np.testing.assert_array_equal(a[i], p)
        assert a.dtype == np.float32 and 0 <= a.min() and a.max() <= 1
        np.testing.assert_array_equal(np.asarray(out["a"]["action_mask"]), np.asarray(obs["a"]["action_mask"]))


def test_egocentric_frames_are_centred_on_each_agent(econ, world_frame):
    env, obs, state = econ[0], econ[2], econ[3]
    r = env.mobile_agent_observation_range
    pal = agent_colors(env.n_agents)
    size = (2 * r + 1) * TILE
    padded = np.pad(world_frame, ((r * TILE, r * TILE), (r * TILE, r * TILE), (0, 0)))
    native = NativeRGBObservationWrapper(env, rgb_preprocessing="native", fully_observable=False)
    pooled = NativeRGBObservationWrapper(env, fully_observable=False)
    views = np.asarray(jax.jit(native.observation)(obs, state)["a"]["obs"])
    small = np.asarray(jax.jit(pooled.observation)(obs, state)["a"]["obs"])
    assert views.shape == (env.n_agents, size, size, 3) and small.shape == (env.n_agents, 22, 22, 3)
    c = r * TILE + TILE // 2  # the centre pixel of the window's centre cell
    for i, (row, col) in enumerate(np.asarray(state.loc)):
        expected = padded[row * TILE : row * TILE + size, col * TILE : col * TILE + size]
        np.testing.assert_array_equal(np.round(views[i] * 255).astype(np.uint8), expected)
        np.testing.assert_array_equal(np.round(views[i, c, c] * 255), pal[i])
        np.testing.assert_allclose(small[i], _pool(expected, (4, 4)), rtol=1e-6, atol=1e-7)
        # window cell (r + dr, r + dc) shows world cell (row + dr, col + dc), black outside the world
        for dr, dc in ((-r, -r), (r, r), (-r, r)):
            wr, wc = row + dr, col + dc
            px = views[i, (r + dr) * TILE + 1, (r + dc) * TILE + 1]
            if 0 <= wr < env.world_size[0] and 0 <= wc < env.world_size[1]:
                np.testing.assert_array_equal(np.round(px * 255), world_frame[wr * TILE + 1, wc * TILE + 1])
            else:
                assert not px.any()
    # the planner has no location: it sees the whole world, preprocessed
    np.testing.assert_allclose(np.asarray(jax.jit(pooled.observation)(obs, state)["p"]["obs"]),
                               _pool(world_frame, (4, 4)), rtol=1e-6, atol=1e-7)


def test_rgb_shapes_of_each_mode(econ):
    env, params = econ[:2]
    cases = [
        (dict(), (50, 50), (50, 50)),
        (dict(rgb_preprocessing="native"), (200, 200), (200, 200)),
        (dict(rgb_resize=(25, 400)), (25, 400), (25, 400)),
        (dict(fully_observable=False), (22, 22), (50, 50)),
        (dict(fully_observable=False, rgb_preprocessing="native"), (88, 88), (200, 200)),
        (dict(fully_observable=False, rgb_resize=(11, 176)), (11, 176), (50, 50)),
    ]
    for kwargs, agent_hw, planner_hw in cases:
        w = NativeRGBObservationWrapper(env, **kwargs)
        obs, _ = jax.eval_shape(w.reset, jax.random.key(0), params)
        assert obs["a"]["obs"].shape == (env.n_agents,) + agent_hw + (3,), kwargs
        assert obs["p"]["obs"].shape == planner_hw + (3,), kwargs
        assert w.observation_space("a")["obs"].shape == agent_hw + (3,)
        assert w.observation_space("p")["obs"].shape == planner_hw + (3,)


def test_jit_vmap_and_the_wrapper_stack(econ, wrapped):
    env, params, _obs, state = econ[:4]
    w, raw, out = wrapped
    # a batch of two: this step's observation and the same with one more coin
    batch = jax.tree.map(lambda x: jnp.stack([x, x]), raw[0])
    batch["a"]["flat"] = batch["a"]["flat"].at[1].add(0.01)
    got = jax.jit(jax.vmap(w.observation))(batch)
    np.testing.assert_array_equal(np.asarray(got["a"]["obs"][0]), np.asarray(out[0]["a"]["obs"]))
    one = jax.jit(w.observation)(jax.tree.map(lambda x: x[1], batch))
    np.testing.assert_array_equal(np.asarray(got["a"]["obs"][1]), np.asarray(one["a"]["obs"]))
    rgb = NativeRGBObservationWrapper(env, fully_observable=False)
    states = jax.tree.map(lambda x: jnp.stack([x, x]), state)
    frames = jax.jit(jax.vmap(rgb.observation))(batch, states)
    assert frames["a"]["obs"].shape == (2, env.n_agents, 22, 22, 3)
    keys = jax.random.split(jax.random.key(5), 2)
    acts = {"a": jnp.zeros((2, env.n_agents), jnp.int32), "p": jnp.zeros((2,) + env.planner_actions.action_shape, jnp.int32)}
    shapes = jax.eval_shape(jax.vmap(w.step, in_axes=(0, 0, 0, None)), keys, states, acts, params)
    assert shapes[0]["a"]["obs"].shape == (2, env.n_agents, w.obs_size["a"])
    assert shapes[4][f"{env.name}.collective_reward"].shape == (2,)
    # below the auto-reset and the log; the RGB adapter draws the EnvState inside a LogState
    stack = AutoResetWrapper(LogWrapper(w))
    assert stack.unwrapped is env and stack.observation_space("a") is w.observation_space("a")
    o = jax.eval_shape(AutoResetWrapper(w).step, keys[0], state, jax.tree.map(lambda x: x[0], acts), params)[0]
    assert o["a"]["obs"].shape == (env.n_agents, w.obs_size["a"])
    o, _ = jax.eval_shape(NativeRGBObservationWrapper(LogWrapper(env)).reset, keys[0], params)
    assert o["a"]["obs"].shape == (env.n_agents, 50, 50, 3)


def test_policy_env_modes(econ):
    from jaxecon import wrappers

    assert (wrappers.policy_env, wrappers.NativeObjectObservationWrapper, wrappers.NativeRGBObservationWrapper) == (
        policy_env, NativeObjectObservationWrapper, NativeRGBObservationWrapper)
    env = econ[0]
    assert policy_env(env) is env
    assert type(policy_env(env, flatten_observations=True)) is NativeObjectObservationWrapper
    for mode in ("rgb_array", "human"):
        w = policy_env(env, render_mode=mode, rgb_preprocessing="native", fully_observable=False)
        assert type(w) is NativeRGBObservationWrapper and w.obs_shape["a"][1:] == (88, 88, 3)
    w = policy_env(env, "rgb_array", rgb_resize=(44, 176), fully_observable=False)
    assert w.obs_shape == {"a": (env.n_agents, 44, 176, 3), "p": (50, 50, 3)}


def _covid_env():
    from jaxecon.scenarios.covid19.config import default_covid_config

    return jaxecon.make_from_config(default_covid_config())


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda env: policy_env(object()), TypeError, ["env", "jaxecon"]),
        (lambda env: NativeObjectObservationWrapper({"a": 1}), TypeError, ["env"]),
        (lambda env: policy_env(env, render_mode="rgb"), ValueError, ["render_mode", "'rgb_array'", "'human'"]),
        (lambda env: policy_env(env, "rgb_array", flatten_observations=True), ValueError,
         ["flatten_observations", "rgb_array"]),
        (lambda env: policy_env(env, "human", flatten_observations=True), ValueError, ["flatten_observations"]),
        (lambda env: policy_env(env, flatten_observations="yes"), ValueError, ["flatten_observations"]),
        (lambda env: policy_env(env, "rgb_array", rgb_preprocessing="bilinear"), ValueError,
         ["rgb_preprocessing", "'tile_scale'", "'native'"]),
        (lambda env: policy_env(env, "rgb_array", rgb_resize=(30, 30)), ValueError,
         ["rgb_resize", "200", "divisor"]),
        (lambda env: policy_env(env, "rgb_array", rgb_resize=(22, 23), fully_observable=False), ValueError,
         ["rgb_resize", "width", "88"]),
        (lambda env: policy_env(env, "rgb_array", rgb_resize=(0, 10)), ValueError, ["rgb_resize", "positive"]),
        (lambda env: policy_env(env, "rgb_array", rgb_resize=64), ValueError, ["rgb_resize", "(height, width)"]),
        (lambda env: policy_env(env, rgb_resize=(50, 50)), ValueError, ["rgb_resize", "render_mode"]),
        (lambda env: policy_env(env, "rgb_array", fully_observable=None), ValueError, ["fully_observable"]),
        (lambda env: NativeRGBObservationWrapper(env, tile=3), ValueError, ["tile_scale", "multiple"]),
        (lambda env: NativeRGBObservationWrapper(env, tile=0), ValueError, ["tile"]),
        (lambda env: NativeRGBObservationWrapper(env, view_radius=-1), ValueError, ["view_radius"]),
        (lambda env: NativeObjectObservationWrapper(env, namespace=""), ValueError, ["namespace"]),
        (lambda env: NativeObjectObservationWrapper(env).observation_space("q"), ValueError,
         ["agent", "'a'", "'p'"]),
        (lambda env: NativeRGBObservationWrapper(env).observation_space(0), ValueError, ["agent"]),
        (lambda env: NativeRGBObservationWrapper(_covid_env()), ValueError, ["no world map"]),
    ],
)
def test_bad_input_names_the_argument(econ, call, error, words):
    with pytest.raises(error) as exc:
        call(econ[0])
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_a_foundation_env_is_pointed_to_its_core():
    from jaxecon import foundation

    shim = foundation.make_env_instance(**_config())
    with pytest.raises(TypeError, match=r"env\.core"):
        policy_env(shim, flatten_observations=True)
    assert type(policy_env(shim.core, flatten_observations=True)) is NativeObjectObservationWrapper


def test_check_resize_pools_or_repeats():
    assert check_resize((200, 88), (50, 176)) == (50, 176)
    assert check_resize((200, 88), [200, 88]) == (200, 88)
    with pytest.raises(ValueError, match="height 200 does not divide evenly into 30"):
        check_resize((200, 88), (30, 88))


@pytest.mark.slow  # a benchmark run
def test_bench_times_the_adapter_against_the_bare_env(econ):
    env, params = econ[:2]
    r = measure_adapter_overhead(env, NativeObjectObservationWrapper(env), params, batch=2, n_steps=2,
                                 min_time=0.0, min_rounds=2)
    assert r["mode"] == "object adapter" and r["batch"] == 2 and r["repeats"] >= 2
    assert r["env_steps_per_s"] > 0 and r["bare_env_steps_per_s"] > 0
    assert r["overhead"] > -1 and r["overhead_wall"] > -1
    assert r["agent_steps_per_s"] == pytest.approx(env.n_agents * r["env_steps_per_s"])


def test_bench_option_parses():
    from jaxecon import cli

    parser = cli.build_parser()
    assert parser.parse_args(["bench", "--adapter-batch-sizes", "none"]).adapter_batch_sizes == []
    assert parser.parse_args(["bench", "--adapter-batch-sizes", "8,1024"]).adapter_batch_sizes == [8, 1024]
    assert parser.parse_args(["bench"]).adapter_batch_sizes is None
    with pytest.raises(SystemExit):
        parser.parse_args(["bench", "--adapter-batch-sizes", "0"])
