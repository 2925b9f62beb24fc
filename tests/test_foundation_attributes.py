"""Foundation's attribute surface on the shim, against ai-economist 1.7.1.

What Foundation's tutorials, its two env wrappers and user scripts read or
write on an environment, its world, agents and components, public or
underscored, exists on ``jaxecon.foundation`` and has Foundation's value
where both are deterministic (fixed layouts and skills); writes land in the
``EnvState`` / ``EnvParams`` or raise an error saying what to do.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from jaxecon import foundation

from reference import CANONICAL_CONFIG, make_reference_env, require_foundation

pytestmark = pytest.mark.reference

T = 4

#: Names the tutorials and wrappers use, and the rest of the public surface checked here.
ENV_NAMES = [
    "name", "_components", "_components_dict", "_shorthand_lookup", "_dense_log", "_last_ep_dense_log",
    "_replay_log", "_last_ep_replay_log", "_last_ep_metrics", "_entities", "_episode_length",
    "_allow_observation_scaling", "_flatten_observations", "_flatten_masks", "_completions", "_agent_lookup",
    "collate_agent_obs", "collate_agent_rew", "collate_agent_info", "num_agents", "n_agents", "world_size",
    "agent_subclasses", "required_entities", "multi_action_mode_agents", "multi_action_mode_planner",
]
WOOD_AND_STONE_NAMES = [
    "energy_weight", "curr_optimization_metric", "get_current_optimization_metrics", "_auto_warmup_integrator",
    "energy_cost", "energy_warmup_constant", "energy_warmup_method", "isoelastic_eta", "starting_agent_coin",
    "planner_reward_type", "mixing_weight_gini_vs_coin", "fixed_four_skill_and_loc", "_full_observability",
    "_mobile_agent_observation_range", "_planner_gets_spatial_info", "_ranked_locs", "_source_maps",
]
COVID_NAMES = [
    "us_state_idx_to_state_name", "start_date", "us_state_population", "us_population", "num_us_states",
    "use_real_world_data", "use_real_world_policies", "pop_between_age_18_65",
    "infection_too_sick_to_work_rate", "risk_free_interest_rate", "economic_reward_crra_eta", "value_of_life",
    "beta_delay", "filter_len", "num_filters", "num_stringency_levels", "policy_start_date",
    "start_date_index", "date_format", "current_date", "get_data_dictionary", "get_tensor_dictionary",
    "np_float_dtype", "np_int_dtype", "beta_slopes", "beta_intercepts", "unemployment_bias",
]
WORLD_NAMES = [
    "maps", "agents", "planner", "timestep", "loc_map", "get_random_order_agents", "set_agent_loc",
    "clear_agent_locs", "agent_locs_are_valid", "consume_resource", "create_landmark", "is_valid",
    "is_location_accessible", "can_agent_occupy", "location_resources", "location_landmarks", "_agents",
    "_planner", "use_cuda", "cuda_data_manager", "cuda_function_manager", "n_agents", "world_size",
    "resources", "landmarks",
]
COVID_WORLD_NAMES = ["us_state_population", "us_population", "start_date", "n_stringency_levels",
                     "use_real_world_policies"]
AGENT_NAMES = [
    "idx", "state", "inventory", "escrow", "endogenous", "action", "action_dim", "action_spaces",
    "multi_action_mode", "single_action_map", "inventory_to_escrow", "escrow_to_inventory",
    "total_endowment", "reset_actions", "has_component", "get_random_action", "get_component_action",
    "set_component_action", "populate_random_actions", "parse_actions", "flatten_masks",
    "_registered_inventory", "_registered_endogenous", "_registered_components", "_total_actions",
    "_noop_action_dict",
    "_action_names", "_unique_actions", "_passive_multi_action_agent",
]
COMPONENT_NAMES = [
    "name", "shorthand", "component_type", "required_entities", "agent_subclasses", "world", "_world",
    "episode_length", "_episode_length", "n_agents", "resources", "landmarks", "timescale", "inv_scale",
    "_inventory_scale", "get_metrics", "get_dense_log", "obs", "generate_observations", "generate_masks",
    "get_additional_state_fields", "get_n_actions",
]


def _gtb_config(**overrides):
    cfg = copy.deepcopy(CANONICAL_CONFIG)
    cfg.update(episode_length=T, starting_agent_coin=10, dense_log_frequency=1)
    cfg.update(overrides)
    return cfg


def _covid_config():
    from jaxecon.scenarios.covid19.config import default_covid_config

    cfg = default_covid_config()
    cfg["episode_length"] = T
    return cfg


@pytest.fixture(scope="module")
def gtb():
    require_foundation()
    cfg = _gtb_config()
    env, ref = foundation.make_env_instance(**copy.deepcopy(cfg)), make_reference_env(cfg)
    env.reset(), ref.reset()
    return env, ref


@pytest.fixture(scope="module")
def covid():
    require_foundation()
    cfg = _covid_config()
    env, ref = foundation.make_env_instance(**copy.deepcopy(cfg)), make_reference_env(cfg)
    env.reset(), ref.reset()
    return env, ref


def _missing(obj, names):
    return [n for n in names if not hasattr(obj, n)]


def test_the_names_exist_in_both(gtb, covid):
    for (env, ref), extra, world_extra in ((gtb, WOOD_AND_STONE_NAMES, []), (covid, COVID_NAMES, COVID_WORLD_NAMES)):
        for obj, names in ((ref, ENV_NAMES + extra), (ref.world, WORLD_NAMES + world_extra),
                           (ref.world.agents[0], AGENT_NAMES), (ref.world.planner, AGENT_NAMES)):
            assert not _missing(obj, names), (type(obj).__name__, _missing(obj, names))
        assert not _missing(env, ENV_NAMES + extra)
        assert not _missing(env.world, WORLD_NAMES + world_extra)
        for agent in (env.world.agents[0], env.world.planner):
            assert not _missing(agent, AGENT_NAMES)
        for c, rc in zip(env._components, ref._components):
            assert not _missing(rc, COMPONENT_NAMES)
            assert not _missing(c, COMPONENT_NAMES), (c.name, _missing(c, COMPONENT_NAMES))


def _same(a, b):
    if isinstance(b, (list, tuple)) and not isinstance(a, str):
        return list(a) == list(b)
    if isinstance(b, np.ndarray) or isinstance(a, np.ndarray):
        return np.allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-6)
    return a == b


def test_configuration_values_match(gtb, covid):
    env, ref = gtb
    for n in ["name", "_episode_length", "_allow_observation_scaling", "_flatten_observations",
              "_flatten_masks", "num_agents", "n_agents", "world_size", "agent_subclasses",
              "multi_action_mode_agents", "multi_action_mode_planner", "energy_cost", "energy_warmup_constant",
              "energy_warmup_method", "isoelastic_eta", "starting_agent_coin", "planner_reward_type",
              "mixing_weight_gini_vs_coin", "fixed_four_skill_and_loc", "_full_observability",
              "_mobile_agent_observation_range", "_planner_gets_spatial_info", "energy_weight"]:
        assert _same(getattr(env, n), getattr(ref, n)), (n, getattr(env, n), getattr(ref, n))
    assert {k: sorted(v) for k, v in env._entities.items()} == {
        k: sorted(set(v)) for k, v in ref._entities.items() if k != "landmarks"} | {"landmarks": env.landmarks}
    assert list(env._shorthand_lookup) == list(ref._shorthand_lookup)
    assert list(env._components_dict) == list(ref._components_dict)
    assert [type(c).__name__ for c in env._components] == [type(c).__name__ for c in ref._components]
    np.testing.assert_array_equal(np.asarray(env._ranked_locs), np.asarray(ref._ranked_locs))
    assert env.curr_optimization_metric.keys() == ref.curr_optimization_metric.keys()
    for k, v in ref.curr_optimization_metric.items():
        assert env.curr_optimization_metric[k] == pytest.approx(v, rel=1e-5), k
    assert env.get_current_optimization_metrics() == pytest.approx(ref.get_current_optimization_metrics(), rel=1e-5)

    env, ref = covid
    for n in ["name", "us_state_idx_to_state_name", "start_date", "us_state_population", "us_population",
              "num_us_states", "use_real_world_data", "use_real_world_policies", "pop_between_age_18_65",
              "infection_too_sick_to_work_rate", "risk_free_interest_rate", "economic_reward_crra_eta",
              "value_of_life", "beta_delay", "filter_len", "num_filters", "num_stringency_levels",
              "policy_start_date", "start_date_index", "date_format", "current_date", "beta_slopes",
              "beta_intercepts", "unemployment_bias"]:
        assert _same(getattr(env, n), getattr(ref, n)), n
    for n in COVID_WORLD_NAMES:
        assert _same(getattr(env.world, n), getattr(ref.world, n)), n
    with pytest.raises(NotImplementedError, match="WarpDrive"):
        env.get_data_dictionary()


def test_covid_world_global_state_like_foundation(covid):
    env, ref = covid
    env.reset(), ref.reset()
    for t in range(T - 1):
        acts = {str(i): (i + t) % 11 for i in range(51)}
        acts["p"] = t
        env.step(dict(acts)), ref.step(dict(acts))
    ours, theirs = env.world.global_state, ref.world.global_state
    assert set(ours) == set(theirs) - {"Subsidy Level"}  # Foundation's stays all zeros here
    assert [k for k in theirs if k in ours][:4] == list(ours)[:4]
    for k, v in ours.items():
        assert v.shape == theirs[k].shape == (T + 1, 51) and v.dtype == theirs[k].dtype
        np.testing.assert_allclose(v, theirs[k], rtol=1e-5, err_msg=k)
    assert not hasattr(foundation.make_env_instance(**_gtb_config()).world, "global_state")


@pytest.mark.parametrize("method", ["decay", "auto"])
def test_energy_weight_follows_the_warmup_like_foundation(method):
    require_foundation()
    cfg = _gtb_config(energy_warmup_constant=3, energy_warmup_method=method)
    env, ref = foundation.make_env_instance(**copy.deepcopy(cfg)), make_reference_env(cfg)
    for k in (0, 1, 4, 10):
        env._completions = ref._completions = k
        env._auto_warmup_integrator = ref._auto_warmup_integrator = 2 * k
        assert env.energy_weight == pytest.approx(ref.energy_weight, rel=1e-12), (method, k)
        assert env._auto_warmup_integrator == 2 * k and int(env.state.scenario.auto_warmup_integrator) == 2 * k


def test_writes_land_in_the_state_or_raise(gtb):
    env, _ = gtb
    env.reset()
    env.step({"0": 1})
    env.world.timestep = 0
    assert env.world.timestep == 0 and int(env.state.timestep) == 0
    env.energy_cost = 0.5
    assert env.energy_cost == 0.5 and env.params.scenario.energy_cost == 0.5
    env.energy_cost = 0.21
    with pytest.raises(ValueError, match="finite"):
        env.energy_cost = float("nan")
    with pytest.raises(AttributeError, match="make_env_instance"):
        env.energy_warmup_method = "auto"
    with pytest.raises(AttributeError, match="computed"):
        env.energy_weight = 0.3
    metric = dict(env.curr_optimization_metric)
    env.curr_optimization_metric = {**metric, "p": 7.0}
    assert env.curr_optimization_metric["p"] == 7.0
    env.curr_optimization_metric = metric
    tax = env.get_component("PeriodicBracketTax")
    tax.tax_cycle_pos = 5  # a sub-state field: written into env.state
    assert tax.tax_cycle_pos == 5 and env.get_component("PeriodicBracketTax").tax_cycle_pos == 5
    with pytest.raises(AttributeError, match="configuration"):
        env.get_component("Build").skill_dist = "lognormal"
    env.world.energy_cost = 0.3  # a scenario attribute set on the world lands in the params too
    assert env.params.scenario.energy_cost == 0.3
    env.energy_cost = 0.21
    env.reset()
    env.observation_space = {"a": 1}  # a wrapper's own attribute: a plain attribute
    assert env.observation_space == {"a": 1}
    with pytest.raises(AttributeError):
        env.no_such_attribute


def test_world_methods_like_foundation(gtb):
    env, ref = gtb
    env.reset(), ref.reset()  # the layout file fixes the maps: the worlds' maps are equal
    env.world.clear_agent_locs(), ref.world.clear_agent_locs()
    assert [a.loc for a in env.world.agents] == [list(a.loc) for a in ref.world.agents] == [[-1, -1]] * 4
    np.random.seed(11)
    order = [a.idx for a in env.world.get_random_order_agents()]
    np.random.seed(11)
    assert order == [a.idx for a in ref.world.get_random_order_agents()]
    h, w = env.world_size
    water = tuple(np.argwhere(np.asarray(ref.world.maps.get("Water")) > 0)[0])
    moves = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, h // 2, w // 2), (2, *water), (3, 3, 5), (0, h - 1, w - 1),
             (2, 5, 5), (2, 5, 6)]
    for i, r, c in moves:  # onto free tiles, an occupied one, water
        got = env.world.set_agent_loc(env.world.agents[i], r, c)
        assert got == ref.world.set_agent_loc(ref.world.agents[i], r, c), (i, r, c)
        assert [a.loc for a in env.world.agents] == [list(a.loc) for a in ref.world.agents], (i, r, c)
    assert all(a.loc != [-1, -1] for a in env.world.agents)
    # (Foundation's loc_map marks an unplaced agent at [-1, -1], the last tile; all are placed here.)
    np.testing.assert_array_equal(env.world.loc_map, ref.world.loc_map)
    assert env.world.agent_locs_are_valid() == ref.world.agent_locs_are_valid()
    wood = np.argwhere(np.asarray(ref.world.maps.get("Wood")) > 0)[0]
    for e in (env, ref):
        e.world.consume_resource("Wood", *wood)
        e.world.consume_resource("Wood", *wood)  # never below 0
        e.world.create_landmark("House", 1, 1, agent_idx=0)
    for k in ("Wood", "House"):
        np.testing.assert_array_equal(env.world.maps.get(k), ref.world.maps.get(k))
    np.testing.assert_array_equal(env.world.maps.get("House", owner=True), ref.world.maps.get("House", owner=True))
    env.reset(), ref.reset()


def test_agent_transfers_and_masks_like_foundation(gtb):
    env, ref = gtb
    env.reset(), ref.reset()
    for i in ("0", "p"):
        a, ra = env.get_agent(i), ref.get_agent(i)
        for op, amount in (("inventory_to_escrow", 3), ("inventory_to_escrow", 100), ("escrow_to_inventory", 4)):
            assert getattr(a, op)("Coin", amount) == getattr(ra, op)("Coin", amount), (i, op)
            assert a.inventory == ra.inventory and a.escrow == ra.escrow, (i, op)
        with pytest.raises(ValueError):
            a.inventory_to_escrow("Coin", -1)
        assert a._registered_inventory is ra._registered_inventory is True
        assert a._total_actions == ra._total_actions and a._noop_action_dict == ra._noop_action_dict
        rng = np.random.default_rng(0)
        masks = {n: rng.integers(0, 2, size) for n, size in zip(ra._action_names, _sizes(ra))}
        np.testing.assert_array_equal(a.flatten_masks(masks), ra.flatten_masks(masks))
    env.reset(), ref.reset()


def _sizes(agent):
    if agent.multi_action_mode:
        return [int(d) - 1 for d in agent.action_spaces]
    return [agent.action_dim[n] for n in agent._action_names]


def test_component_views_like_foundation(gtb):
    env, ref = gtb
    env.reset(), ref.reset()
    for c, rc in zip(env.components, ref.components):
        assert isinstance(c, foundation.components.get(c.name)) and c is env.get_component(c.name)
        assert c.world is env.world and c._episode_length == rc._episode_length == T
        assert c.resources == rc.resources and c.landmarks == rc.landmarks and c.timescale == rc.timescale
        assert c._inventory_scale == rc._inventory_scale
        assert sorted(c.get_metrics() or {}) == sorted(rc.get_metrics() or {}), c.name
        for agent_cls in ("BasicMobileAgent", "BasicPlanner"):
            if agent_cls in rc.agent_subclasses:
                ours = c.get_additional_state_fields(agent_cls)
                assert sorted(ours) == sorted(rc.get_additional_state_fields(agent_cls))
        ours, theirs = c.generate_masks(), rc.generate_masks()
        assert list(map(str, ours)) == list(map(str, theirs)), c.name
        for k in theirs:
            got, want = ours[k], theirs[k]
            if isinstance(want, dict):
                assert sorted(got) == sorted(want)
            else:
                assert np.shape(got) == np.shape(want), (c.name, k)
        obs, ref_obs = c.obs(), rc.obs()
        assert sorted(obs) == sorted(ref_obs), c.name
        for k in ref_obs:
            assert sorted(obs[k]) == sorted(ref_obs[k]), (c.name, k)
        assert sorted(map(str, c.generate_observations())) == sorted(map(str, rc.generate_observations()))
    tax = env.get_component("PeriodicBracketTax")
    assert tax.tax_cycle_pos == ref.get_component("PeriodicBracketTax").tax_cycle_pos
    for _ in range(T):
        env.step(), ref.step({})
    ours, theirs = env.get_component("Gather").get_dense_log(), ref.get_component("Gather").get_dense_log()
    assert len(ours) == len(theirs) == T  # dense-logged episode (dense_log_frequency=1)
    assert all(set(g) == {"agent", "resource", "n", "loc"} for step in ours for g in step)


def test_dense_log_attribute_during_and_after_an_episode(gtb):
    env, ref = gtb
    for e in (env, ref):
        e.reset(force_dense_logging=True)
        e.step({})
    assert list(env._dense_log) == list(ref._dense_log) == ["world", "states", "actions", "rewards"]
    assert [len(v) for v in env._dense_log.values()] == [len(v) for v in ref._dense_log.values()]
    for e in (env, ref):
        for _ in range(T - 1):
            e.step({})
    assert env._dense_log is env.previous_episode_dense_log and ref._dense_log is ref.previous_episode_dense_log
    assert list(env._dense_log) == list(ref._dense_log)
    assert env._last_ep_metrics == env.previous_episode_metrics
    assert env._last_ep_replay_log is env.previous_episode_replay_log
