"""Spaces: the classes of ``jaxecon.spaces`` and every env's ``observation_space``/``action_space``.

- The space classes: ``contains`` and ``sample`` (also under jit), bad
  arguments raise ``ValueError``.
- Structure: for every shipped scenario and the configurations that change
  the observation's layout (flattening, masks, multi-action modes, scaling,
  views), ``observation_space(agent)`` has exactly the keys, shapes and
  dtypes of one agent's entry of ``observe`` (checked with ``jax.eval_shape``,
  no compilation).
- Bounds: random episodes (vmapped envs, random valid actions from
  ``env.sample_actions``) in every shipped scenario stay inside the spaces at
  every step; one jitted scan per configuration.
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
import jaxecon.foundation
from jaxecon.core.agent_kinds import Observed
from jaxecon import configs, spaces
from jaxecon.scenarios.covid19 import default_covid_config

from common import jit_fast


# --------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------


def _gtb(**kw):
    cfg = configs.default_config()
    cfg.update({"episode_length": 30, **kw})
    return cfg


def _gtb_components(tax=None, build=None, gather=None):
    """The canonical components with some kwargs replaced."""
    return [
        {"Build": {"payment": 10, "payment_max_skill_multiplier": 3, "skill_dist": "pareto",
                   "build_labor": 10, **(build or {})}},
        {"ContinuousDoubleAuction": {"max_bid_ask": 10, "max_num_orders": 5, "order_duration": 50,
                                     "order_labor": 0.25}},
        {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "pareto", **(gather or {})}},
        {"PeriodicBracketTax": {"bracket_spacing": "us-federal", "period": 10, "rate_disc": 0.05,
                                "tax_model": "model_wrapper", "usd_scaling": 1000, **(tax or {})}},
    ]


def _generated(scenario, **kw):
    cfg = _gtb(**kw)
    for k in ("env_layout_file", "fixed_four_skill_and_loc"):
        cfg.pop(k)
    cfg.update(scenario_name=scenario, world_size=[15, 15])
    return cfg


def _one_step(**kw):
    return {
        "scenario_name": "one-step-economy", "n_agents": 4, "world_size": [1, 1], "episode_length": 2,
        "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": {"period": 2}}], **kw,
    }


def _covid(**kw):
    cfg = default_covid_config()
    cfg.update({"episode_length": 20, **kw})
    return cfg


#: name -> config: every shipped scenario, and the kwargs that change the layout of observations.
STRUCTURE_CONFIGS = {
    "gtb": _gtb(),
    "gtb_unflattened": _gtb(flatten_observations=False),
    "gtb_unflattened_masks": _gtb(flatten_masks=False, flatten_observations=False),
    "gtb_multi_agents_single_planner": _gtb(multi_action_mode_agents=True, multi_action_mode_planner=False),
    "gtb_full_view_spatial_planner": _gtb(full_observability=True, planner_gets_spatial_info=True),
    "gtb_unscaled": _gtb(allow_observation_scaling=False, planner_gets_spatial_info=True),
    "gather_build": dict(configs.gather_build_config(), episode_length=30),
    "gtb_saez_lognormal": _gtb(fixed_four_skill_and_loc=False, components=_gtb_components(
        tax={"tax_model": "saez"}, build={"skill_dist": "lognormal"}, gather={"skill_dist": "lognormal"})),
    "gtb_fixed_rates_no_skills": _gtb(fixed_four_skill_and_loc=False, components=_gtb_components(
        tax={"tax_model": "us-federal-single-filer-2018-scaled", "tax_annealing_schedule": [-100, 0.001]},
        build={"skill_dist": "none"}, gather={"skill_dist": "none"})),
    "uniform": _generated("uniform/simple_wood_and_stone"),
    "quadrant": _generated("quadrant/simple_wood_and_stone", world_size=[16, 16]),
    "multi_zone": _generated("multi_zone/simple_wood_and_stone"),
    "split_layout": _gtb(scenario_name="split_layout/simple_wood_and_stone", fixed_four_skill_and_loc=False),
    "one_step_economy": _one_step(),
    "one_step_economy_unflattened": _one_step(flatten_observations=False, multi_action_mode_planner=False),
    "covid19": _covid(),
    "covid19_flattened_multi": _covid(flatten_observations=True, multi_action_mode_agents=True,
                                      multi_action_mode_planner=True),
    "covid19_real_world": _covid(use_real_world_policies=True),
}
STRUCTURE_CONFIGS["quadrant"]["world_size"] = [16, 16]


@pytest.fixture(scope="module")
def envs():
    """name -> env, built once per module."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = jaxecon.make_from_config(copy.deepcopy(STRUCTURE_CONFIGS[name]))
        return cache[name]

    return get


# --------------------------------------------------------------------------
# The space classes
# --------------------------------------------------------------------------


def test_box_contains_bounds_shape_and_nan():
    box = spaces.Box(np.array([0.0, -1.0]), np.array([1.0, np.inf]), (2,))
    assert box.shape == (2,) and box.dtype == np.float32
    assert box.low.dtype == np.float32 and box.low.shape == (2,)
    assert bool(box.contains(jnp.array([0.5, 100.0])))
    assert bool(box.contains(jnp.array([0.0, -1.0])))
    assert not bool(box.contains(jnp.array([1.5, 0.0])))
    assert not bool(box.contains(jnp.array([0.5, -2.0])))
    assert not bool(box.contains(jnp.array([jnp.nan, 0.0])))
    assert not bool(box.contains(jnp.zeros(3)))
    assert bool(jax.jit(box.contains)(jnp.array([0.25, 3.0])))
    assert box.bounded.tolist() == [True, False]


def test_box_broadcasts_scalar_bounds_and_integer_boxes_need_whole_numbers():
    box = spaces.Box(0, 5, (2, 3), np.int16)
    assert box.low.shape == (2, 3) and box.low.dtype == np.int16 and int(box.high.max()) == 5
    assert bool(box.contains(jnp.full((2, 3), 5, jnp.int16)))
    assert not bool(box.contains(jnp.full((2, 3), 2.5)))
    assert not bool(box.contains(jnp.full((2, 3), 6, jnp.int16)))


@pytest.mark.parametrize("low, high", [(0.0, 1.0), (-np.inf, np.inf), (0.0, np.inf), (-np.inf, 2.0)])
def test_box_samples_lie_inside(low, high):
    box = spaces.Box(low, high, (64,))
    x = jax.jit(box.sample)(jax.random.key(0))
    assert x.shape == (64,) and x.dtype == jnp.float32
    assert bool(box.contains(x))
    assert float(jnp.std(x)) > 0


def test_integer_box_samples_cover_the_range():
    box = spaces.Box(-1, 2, (500,), np.int32)
    x = box.sample(jax.random.key(1))
    assert x.dtype == jnp.int32 and bool(box.contains(x))
    assert set(np.unique(np.asarray(x)).tolist()) == {-1, 0, 1, 2}


def test_integer_and_bool_boxes_sample_their_whole_range():
    full = spaces.Box(np.iinfo(np.int32).min, np.iinfo(np.int32).max, (400,), np.int32)
    x = np.asarray(jax.jit(full.sample)(jax.random.key(2)))
    assert x.min() < -2**30 and x.max() > 2**30
    byte = spaces.Box(0, 255, (2000,), np.uint8)
    assert np.asarray(byte.sample(jax.random.key(0))).max() == 255
    flags = spaces.Box(np.array([0, 1, 0]), np.array([0, 1, 1]), (3,), bool)
    draws = np.asarray(jax.vmap(flags.sample)(jax.random.split(jax.random.key(0), 50)))
    assert draws.dtype == bool and not draws[:, 0].any() and draws[:, 1].all() and 0 < draws[:, 2].sum() < 50


def test_widen_moves_finite_nonzero_bounds_outwards():
    box = spaces.Box(np.array([0.0, -2.0, -np.inf]), np.array([1.0, 4.0, np.inf]), (3,))
    wide = box.widen()
    assert wide.low[0] == 0 and wide.low[1] < -2 and np.isneginf(wide.low[2])
    assert wide.high[0] > 1 and wide.high[1] > 4 and np.isposinf(wide.high[2])
    assert float(wide.high[0]) == pytest.approx(1 + spaces.ROUNDING_SLACK, rel=1e-7)
    assert wide.widen(rel=0.0, abs=0.5).low[0] == -0.5
    # The case that made it necessary: 14 / 15 rounded one ulp above float32(14 / 15).
    ratio = jnp.nextafter(jnp.float32(14 / 15), jnp.float32(1))
    assert not bool(spaces.Box(0.0, 14 / 15, ()).contains(ratio))
    assert bool(spaces.Box(0.0, 14 / 15, ()).widen().contains(ratio))
    with pytest.raises(ValueError, match="only float"):
        spaces.Box(0, 1, (), np.int32).widen()
    with pytest.raises(ValueError, match=">= 0"):
        box.widen(rel=-1.0)


@pytest.mark.parametrize("args, match", [
    ((1.0, 0.0, ()), "low must be <= high"),
    ((np.zeros(3), 1.0, (2,)), "broadcast"),
    ((0.0, np.nan, ()), "NaN"),
    ((0, np.inf, (), np.int32), "finite"),
    ((0, 1, (), np.complex64), "dtype"),
    ((0, 1, (-1,)), "shape"),
    ((0, 40000, (), np.int16), "range"),
])
def test_box_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        spaces.Box(*args)


def test_discrete_and_multidiscrete():
    d = spaces.Discrete(5)
    assert d.n == 5 and d.shape == () and d.dtype == np.int32
    assert bool(d.contains(4)) and not bool(d.contains(5)) and not bool(d.contains(-1))
    assert not bool(d.contains(jnp.zeros(2, jnp.int32)))
    xs = jax.vmap(d.sample)(jax.random.split(jax.random.key(0), 200))
    assert xs.dtype == jnp.int32 and set(np.unique(np.asarray(xs)).tolist()) == set(range(5))

    m = spaces.MultiDiscrete([2, 3, 1])
    assert m.nvec.dtype == np.int32 and m.nvec.tolist() == [2, 3, 1] and m.shape == (3,)
    assert bool(m.contains(jnp.array([1, 2, 0]))) and not bool(m.contains(jnp.array([1, 3, 0])))
    assert not bool(m.contains(jnp.array([1, 2])))
    xs = jax.vmap(m.sample)(jax.random.split(jax.random.key(0), 300))
    assert bool(jnp.all(jax.vmap(m.contains)(xs)))
    assert np.asarray(xs).max(axis=0).tolist() == [1, 2, 0]


@pytest.mark.parametrize("make, match", [
    (lambda: spaces.Discrete(0), "n must be an int >= 1"),
    (lambda: spaces.Discrete(2.5), "n must be an int >= 1"),
    (lambda: spaces.MultiDiscrete([2, 0]), "nvec"),
    (lambda: spaces.MultiDiscrete([[2]]), "nvec"),
    (lambda: spaces.Dict([("a", spaces.Discrete(2))]), "mapping"),
    (lambda: spaces.Dict({"a": 3}), "Space"),
    (lambda: spaces.concatenate([spaces.Discrete(2)]), "Box"),
])
def test_bad_space_arguments(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_dict_contains_sample_and_concatenate():
    sp = spaces.Dict({"x": spaces.Box(0.0, 1.0, (2,)), "k": spaces.Discrete(3)})
    assert list(sp.spaces) == ["x", "k"] and sp["k"].n == 3
    s = jax.jit(sp.sample)(jax.random.key(0))
    assert set(s) == {"x", "k"} and bool(sp.contains(s))
    assert not bool(sp.contains({"x": jnp.zeros(2)}))
    assert not bool(sp.contains({"x": jnp.full(2, 2.0), "k": 0}))
    flat = spaces.concatenate([sp["x"], spaces.Box(-1, 4, (2, 2), np.int16)])
    assert flat.shape == (6,) and flat.dtype == np.float32
    assert flat.low.tolist() == [0, 0, -1, -1, -1, -1] and flat.high.tolist() == [1, 1, 4, 4, 4, 4]


# --------------------------------------------------------------------------
# Env spaces: structure
# --------------------------------------------------------------------------


def _space_struct(space):
    if isinstance(space, spaces.Dict):
        return {k: _space_struct(v) for k, v in space.spaces.items()}
    return (tuple(space.shape), np.dtype(space.dtype))


def _obs_struct(tree, lead: int):
    if isinstance(tree, dict):
        return {k: _obs_struct(v, lead) for k, v in tree.items()}
    return (tuple(tree.shape[lead:]), np.dtype(tree.dtype))


@pytest.mark.parametrize("name", sorted(STRUCTURE_CONFIGS))
def test_observation_space_matches_observe(envs, name):
    env = envs(name)
    obs, _ = jax.eval_shape(env.reset, jax.random.key(0), env.default_params)
    sa, sp = env.observation_space("a"), env.observation_space("p")
    assert _space_struct(sa) == _obs_struct(obs["a"], 1)
    assert _space_struct(sp) == _obs_struct(obs["p"], 0)
    assert env.observation_space("a") is sa and env.observation_space("p") is sp


@pytest.mark.parametrize("name", ["gtb", "gtb_multi_agents_single_planner", "one_step_economy_unflattened",
                                  "covid19", "covid19_flattened_multi"])
def test_action_space_matches_step(envs, name):
    env = envs(name)
    for agent, layout in (("a", env.agent_actions), ("p", env.planner_actions)):
        space = env.action_space(agent)
        assert env.action_space(agent) is space
        if layout.multi_action_mode:
            assert isinstance(space, spaces.MultiDiscrete) and space.nvec.tolist() == layout.dims.tolist()
        else:
            assert isinstance(space, spaces.Discrete) and space.n == layout.n_actions
    # A sampled action of every agent is one step accepts.
    keys = jax.random.split(jax.random.key(0), env.n_agents)
    actions = {"a": jax.vmap(env.action_space("a").sample)(keys), "p": env.action_space("p").sample(keys[0])}
    jax.eval_shape(env.step, jax.random.key(1), jax.eval_shape(env.reset, jax.random.key(0), env.default_params)[1],
                   actions, env.default_params)


def test_unknown_agent_id_names_the_allowed_ones(envs):
    env = envs("gtb")
    for fn in (env.observation_space, env.action_space):
        with pytest.raises(ValueError, match=r"\('a', 'p'\)"):
            fn("0")


def test_flat_split_is_foundations_packing_rule():
    from jaxecon.core.env import flat_split

    shapes = {"world-map": (4, 5, 5), "time": (1,), "b-x": (), "a-y": (3,), "world-idx_map": (2, 5, 5)}
    assert flat_split(shapes) == (["time", "world-idx_map", "world-map"], ["a-y", "b-x", "time"])
    assert flat_split(shapes, with_time=False) == (["world-idx_map", "world-map"], ["a-y", "b-x", "time"])


def test_flat_bounds_concatenate_the_fields_in_sorted_order(envs):
    env = envs("gtb")
    flat_un = envs("gtb_unflattened").observation_space("a")
    parts = [flat_un[k] for k in sorted(flat_un.keys()) if k != "action_mask" and len(flat_un[k].shape) <= 1]
    want = spaces.concatenate(parts)
    assert env.observation_space("a")["flat"] == want
    # a few known bounds: time, the tax phase, the location, the market.
    sa = flat_un
    assert sa["time"] == spaces.Box(0.0, 1.0, (1,)).widen()
    assert sa["PeriodicBracketTax-curr_rates"].high.tolist() == [1.0] * 7
    assert float(sa["world-loc-row"].high) == pytest.approx(24 / 25, rel=1e-5)
    assert float(sa["ContinuousDoubleAuction-my_asks-Wood"].high.max()) == 5
    assert np.isinf(sa["world-inventory-Coin"].high) and float(sa["world-inventory-Coin"].low) == 0


def test_shim_delegates_to_the_functional_env():
    from jaxecon import foundation

    cfg = _one_step()
    shim = foundation.make_env_instance(**cfg)
    assert shim.observation_space("a") is shim.core.observation_space("a")
    assert shim.action_space("p") is shim.core.action_space("p")
    with pytest.raises(ValueError, match="agent must be one of"):
        shim.observation_space("planner")


def test_undeclared_component_spaces_are_inferred_unbounded():
    """A user component without ``observation_spaces`` gets observe's shapes and
    dtypes with infinite bounds (integers: the dtype's range)."""
    from jaxecon.core.component import Component

    @jaxecon.component_registry.add
    class Counter(Component):
        name = "SpacesUndeclaredTest"
        agent_subclasses = ("BasicMobileAgent",)

        def observe(self, state, params):
            return Observed(mobile={"steps": jnp.broadcast_to(state.timestep, (self.n_agents, 2))},
                            planner={"coin": jnp.sum(state.inventory["Coin"])})

    env = jaxecon.make_from_config(_one_step(
        flatten_observations=False, components=[{"SimpleLabor": {}}, {"SpacesUndeclaredTest": {}}]))
    steps = env.observation_space("a")["SpacesUndeclaredTest-steps"]
    assert steps.shape == (2,) and steps.dtype == np.int32 and int(steps.high[0]) == np.iinfo(np.int32).max
    coin = env.observation_space("p")["SpacesUndeclaredTest-coin"]
    assert coin.shape == () and np.isinf(coin.low) and np.isinf(coin.high)
    assert env.observation_space("a")["SimpleLabor-skill"].high == pytest.approx(1.0)


def test_foundation_style_component_has_no_observation_space():
    from jaxecon.foundation.base.base_component import BaseComponent
    from jaxecon.factory import build_scenario
    from jaxecon.core.registry import scenario_registry

    @jaxecon.foundation.components.add
    class Tally(BaseComponent):
        name = "SpacesHostTest"
        required_entities = ["Coin"]
        agent_subclasses = ["BasicMobileAgent"]

        def get_n_actions(self, agent_cls_name):
            return None

        def get_additional_state_fields(self, agent_cls_name):
            return {}

        def component_step(self):
            pass

        def generate_observations(self):
            return {a.idx: {"n": 0} for a in self.world.agents}

        def generate_masks(self, completions=0):
            return {}

    cfg = _one_step(components=[{"SimpleLabor": {}}, {"SpacesHostTest": {}}])
    core = build_scenario(scenario_registry.get(cfg.pop("scenario_name")), cfg, host_components=True)
    with pytest.raises(NotImplementedError, match="SpacesHostTest"):
        core.observation_space("a")
    assert core.action_space("a") == spaces.Discrete(101)


# --------------------------------------------------------------------------
# Env spaces: every observation of random episodes lies inside
# --------------------------------------------------------------------------

#: The rollout configurations (each costs one compilation of a vmapped scan):
#: the canonical economy with short tax periods and unflattened observations
#: (every field checked on its own), the one-step economy and COVID-19.
ROLLOUT_CONFIGS = {
    "gtb": _gtb(flatten_observations=False, episode_length=40, components=_gtb_components(tax={"period": 5})),
    "one_step_economy": _one_step(flatten_observations=False),
    "covid19": _covid(),
}
#: Scenarios whose layouts and placements differ: their reset observations
#: (many keys) are checked in one compilation; their steps run the components above.
RESET_CONFIGS = {
    name: dict(STRUCTURE_CONFIGS[name], components=copy.deepcopy(configs.gather_build_config()["components"]),
               flatten_observations=False, planner_gets_spatial_info=True)
    for name in ("uniform", "quadrant", "multi_zone", "split_layout")
}
N_EPISODES = 3


def _flags(space, obs, lead):
    """{field path: bool [*lead]} whether each field of ``obs`` lies in its space."""
    out = {}
    for k, sub in space.spaces.items():
        if isinstance(sub, spaces.Dict):
            for kk, v in _flags(sub, obs[k], lead).items():
                out[f"{k}/{kk}"] = v
            continue
        fn = sub.contains
        for _ in range(lead):
            fn = jax.vmap(fn)
        out[k] = fn(obs[k])
    return out


def _check(env, obs):
    """{"a:<field>" / "p:<field>": bool []}: every agent's entry is inside its space."""
    fa = _flags(env.observation_space("a"), obs["a"], 1)  # [agent]
    fp = _flags(env.observation_space("p"), obs["p"], 0)
    return {**{"a:" + k: jnp.all(v) for k, v in fa.items()}, **{"p:" + k: v for k, v in fp.items()}}


def _all(flags_a, flags_b):
    return jax.tree.map(jnp.logical_and, flags_a, flags_b)


def _all_true(env, reset):
    """The flags of ``_check`` all True (the scans' initial carry)."""
    shapes = jax.eval_shape(lambda k: _check(env, reset(k)[0]), jax.random.key(0))
    return jax.tree.map(lambda _: jnp.ones((), bool), shapes)


def _rollout_flags(env, n_episodes: int):
    """``n_episodes`` episodes with random valid actions, jitted; per field,
    whether every observation was inside its space. Unbatched: a vmapped step
    costs more compilation than the few extra steps cost to run."""
    params = env.default_params

    def step(carry, key):
        obs, state, ok = carry
        ka, ks = jax.random.split(key)
        obs, state, _, _, _ = env.step(ks, state, env.sample_actions(ka, obs), params)
        return (obs, state, _all(ok, _check(env, obs))), None

    def episode(ok, key):
        k_reset, k_steps = jax.random.split(key)
        obs, state = env.reset(k_reset, params)
        (_, _, ok), _ = jax.lax.scan(
            step, (obs, state, _all(ok, _check(env, obs))), jax.random.split(k_steps, env.episode_length))
        return ok, None

    def run(keys):
        return jax.lax.scan(episode, _all_true(env, lambda k: env.reset(k, params)), keys)[0]

    return jit_fast(run)(jax.random.split(jax.random.key(7), n_episodes))


def _outside(flags: dict) -> list:
    return sorted(k for k, v in jax.device_get(flags).items() if not bool(v))


@pytest.mark.parametrize("name", sorted(ROLLOUT_CONFIGS))
def test_random_episodes_stay_inside_the_spaces(name):
    env = jaxecon.make_from_config(copy.deepcopy(ROLLOUT_CONFIGS[name]))
    flags = _rollout_flags(env, N_EPISODES)
    assert len(flags) > 4
    assert not _outside(flags), f"{name}: observations outside their space: {_outside(flags)}"


def test_reset_observations_of_every_layout_stay_inside_the_spaces():
    built = {name: jaxecon.make_from_config(copy.deepcopy(cfg)) for name, cfg in RESET_CONFIGS.items()}

    def run(keys):
        out = {}
        for name, env in built.items():
            def one(ok, key, env=env):
                return _all(ok, _check(env, env.reset(key, env.default_params)[0])), None

            ok, _ = jax.lax.scan(one, _all_true(env, lambda k, env=env: env.reset(k, env.default_params)), keys)
            out.update({f"{name}/{k}": v for k, v in ok.items()})
        return out

    flags = jit_fast(run)(jax.random.split(jax.random.key(3), 8))
    assert len(flags) > 4 * len(built)
    assert not _outside(flags), f"reset observations outside their space: {_outside(flags)}"
