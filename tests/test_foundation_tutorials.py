"""Foundation's tutorials with the import changed.

The tutorial notebooks are not in the PyPI package, so each test here makes
the sequence of calls one notebook makes (its configs, with short episodes;
what its cells read and write on the env, world, agents, components and
dense logs, its plotting helpers' reads), written for these tests. Each
sequence runs on ``ai_economist.foundation`` and on ``jaxecon.foundation``,
and the records (structures, types, and values where both are deterministic)
must agree:

- ``economic_simulation_basic.ipynb``: build, sample masked random actions,
  step, print obs/rewards, play dense-logged episodes, the plotting reads;
- ``economic_simulation_advanced.ipynb`` (cells not about user components):
  registries, maps, entities, agent and planner state, ``_components``,
  component isinstance checks, action dims with and without taxes;
- ``optimal_taxation_theory_and_simulation.ipynb``: the tax economy's agents,
  planner and action dims;
- ``covid19_and_economic_simulation.ipynb``: the collated COVID-19 env, the
  tutorial's action generators (``np.array([k])`` actions), ``env._dense_log``
  and its ``visualize_states`` reads, real-world replay included.

The WarpDrive and RLlib tutorials' wrapper calls are in test_foundation_wrappers.py.
"""

from __future__ import annotations

import copy
from datetime import datetime

import numpy as np
import pytest

from reference import make_reference_env, require_foundation

pytestmark = pytest.mark.reference

T = 6


@pytest.fixture(scope="module")
def packages():
    from jaxecon import foundation

    return {"jaxecon": foundation, "ai_economist": require_foundation()}


def _make(pkg, cfg):
    """``foundation.make_env_instance(**cfg)`` (the reference's COVID-19 env past its
    activation gate, through the test helper)."""
    if pkg.__name__.startswith("ai_economist"):
        return make_reference_env(cfg, seed=None)
    return pkg.make_env_instance(**copy.deepcopy(cfg))


def category(v):
    """What a tutorial's ``type(val)`` print tells apart: array, list, dict, number, str."""
    if isinstance(v, np.ndarray):
        return "ndarray"
    if isinstance(v, (list, dict, str)):
        return type(v).__name__
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return "number"
    return type(v).__name__


def kind(v):
    """Dict order/nesting, list lengths, array shapes; numbers alike."""
    if isinstance(v, dict):
        return {k: kind(x) for k, x in v.items()}, list(v)
    if isinstance(v, list):
        return "list", len(v)
    if isinstance(v, np.ndarray):
        return "array", v.shape
    return category(v)


def _both(packages, run):
    records = {name: run(pkg) for name, pkg in packages.items()}
    return records["jaxecon"], records["ai_economist"]


# --------------------------------------------------------------- basic tutorial
BASIC_CONFIG = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "components": [
        ("Build", {"skill_dist": "pareto", "payment_max_skill_multiplier": 3}),
        ("ContinuousDoubleAuction", {"max_num_orders": 5}),
        ("Gather", {}),
    ],
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "starting_agent_coin": 10,
    "fixed_four_skill_and_loc": True,
    "n_agents": 4,
    "world_size": [25, 25],
    "episode_length": T,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "flatten_observations": False,
    "flatten_masks": True,
}


def sample_random_action(agent, mask):
    """The basic tutorial's masked sampler (``np.random.choice`` over the mask)."""
    if agent.multi_action_mode:
        split_masks = np.split(mask, agent.action_spaces.cumsum()[:-1])
        return [np.random.choice(np.arange(len(m)), p=m / m.sum()) for m in split_masks]
    return np.random.choice(np.arange(agent.action_spaces), p=mask / mask.sum())


def sample_random_actions(env, obs):
    return {a_idx: sample_random_action(env.get_agent(a_idx), a_obs["action_mask"]) for a_idx, a_obs in obs.items()}


def _plot_env_state_reads(env):
    """What ``tutorials/utils/plotting.py``'s ``plot_env_state`` reads."""
    maps = env.world.maps
    world_size = np.array(maps.get("Wood")).shape
    entities = [k for k in maps.keys() if "source" not in k.lower()]
    stacked = [np.array(maps.get(e)) for e in entities if e != "House"]
    owner, health = maps.get("House", owner=True), maps.get("House")
    locs = [agent.loc for agent in env.world.agents]
    coin = [agent.state["inventory"]["Coin"] for agent in env.world.agents]
    return world_size, entities, [m.shape for m in stacked], owner.shape, health.shape, len(locs), len(coin)


def _dense_log_reads(log, n_agents):
    """What ``vis_world_range`` and ``breakdown`` read from a dense log."""
    viable = [i for i, w in enumerate(log["world"]) if w]
    locs = [[log["states"][t][str(i)]["loc"] for i in range(n_agents)] for t in viable]
    endowments = [[x[str(i)]["inventory"]["Coin"] + x[str(i)]["escrow"]["Coin"] for x in log["states"]]
                  for i in range(n_agents)]
    labor = [[x[str(i)]["endogenous"]["Labor"] for x in log["states"]] for i in range(n_agents)]
    builds = [len(b["builds"] if isinstance(b, dict) else b) for b in log["Build"]]
    trades = [len(t["trades"] if isinstance(t, dict) else t) for t in log["Trade"]]
    return {
        "keys": list(log), "viable": viable, "n_locs": [len(x) for x in locs],
        "endowments": np.shape(endowments), "labor": np.shape(labor), "builds": len(builds),
        "trades": len(trades), "entry_kinds": (kind(log["Build"][0]), kind(log["Trade"][0])),
        "stone": np.array(log["world"][0]["Stone"]).shape,
    }


def test_basic_tutorial(packages):
    def run(pkg):
        np.random.seed(7)
        env = _make(pkg, BASIC_CONFIG)
        rec = {"agent0": type(env.get_agent(0)).__name__}
        obs = env.reset()
        actions = sample_random_actions(env, obs)
        obs, rew, done, info = env.step(actions)
        rec["obs_keys"] = list(obs.keys())
        rec["types"] = [(key, category(val)) for key, val in obs["0"].items()]
        rec["rewards"] = ["{:2} {:.3f}".format(i, r).split()[0] for i, r in rew.items()]
        rec["done"], rec["info"] = done, info
        for dense in (False, True):
            obs = env.reset(force_dense_logging=dense)
            for _ in range(env.episode_length):
                obs, rew, done, info = env.step(sample_random_actions(env, obs))
            rec[f"plot_{dense}"] = _plot_env_state_reads(env)
        rec["log"] = _dense_log_reads(env.previous_episode_dense_log, env.n_agents)
        rec["metrics"] = sorted(env.previous_episode_metrics)
        return rec

    ours, theirs = _both(packages, run)
    assert ours == theirs


# ------------------------------------------------------------ advanced tutorial
ADVANCED_CONFIG = {
    "n_agents": 4,
    "world_size": [15, 15],
    "episode_length": T,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "flatten_observations": False,
    "flatten_masks": True,
    "components": [{"Build": {}}, {"ContinuousDoubleAuction": {"max_num_orders": 5}}, {"Gather": {}}],
    "scenario_name": "uniform/simple_wood_and_stone",
    "starting_agent_coin": 10,
    "starting_stone_coverage": 0.10,
    "starting_wood_coverage": 0.10,
}


def test_advanced_tutorial_without_user_components(packages):
    def run(pkg):
        rec = {name: sorted(n for n in getattr(pkg, name).entries  # shipped classes: other tests
                            if getattr(pkg, name).get(n).__module__.split(".")[0] in ("jaxecon", "ai_economist"))
               for name in ("landmarks", "resources", "endogenous", "agents")}  # register test-only ones
        rec["scenario_name"] = pkg.scenarios.get("layout_from_file/simple_wood_and_stone").name
        np.random.seed(3)
        env = _make(pkg, ADVANCED_CONFIG)
        obs = env.reset()
        maps = env.world.maps
        rec["maps"] = (type(maps.keys()).__name__, list(maps.keys()), maps.get("Stone").shape)
        rec["location"] = (category(env.world.location_resources(0, 0)),
                           category(env.world.location_landmarks(0, 0)))
        house = pkg.landmarks.get("House")
        rec["house"] = (house.ownable, house.solid, np.shape(house.color))
        wood, coin = pkg.resources.get("Wood"), pkg.resources.get("Coin")
        rec["wood"] = (wood.name, wood.collectible, coin.collectible)
        rec["labor"] = pkg.endogenous.get("Labor").name
        agent0, planner = env.get_agent(agent_idx=0), env.get_agent(agent_idx="p")
        rec["agent0"] = (sorted(agent0.inventory), sorted(agent0.endogenous), agent0.idx, planner.idx)
        rec["world_agents"] = [a.idx for a in env.world.agents] + [env.world.planner.idx]
        rec["states"] = [sorted(a.state) for a in env.all_agents]
        rec["state_kinds"] = kind(agent0.state)
        rec["components"] = [type(c).__name__ for c in env._components]
        build = env.get_component("Build")
        rec["isinstance"] = isinstance(build, pkg.components.get("Build"))
        rec["action_dim"] = (agent0.action_dim, planner.action_dim)
        tax_config = copy.deepcopy(ADVANCED_CONFIG)
        tax_config["components"].append({"PeriodicBracketTax": {}})
        tax_env = _make(pkg, tax_config)
        rec["tax"] = ([c.name for c in tax_env._components], tax_env.get_agent(agent_idx=0).action_dim,
                      tax_env.get_agent(agent_idx="p").action_dim)
        rec["obs"] = kind(obs)
        return rec

    ours, theirs = _both(packages, run)
    assert ours == theirs


# ------------------------------------------------------------ taxation tutorial
TAX_CONFIG = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "components": [
        ("Build", dict(skill_dist="pareto", payment_max_skill_multiplier=3)),
        ("ContinuousDoubleAuction", dict(max_num_orders=5)),
        ("Gather", dict()),
        ("PeriodicBracketTax", dict(bracket_spacing="us-federal", period=100)),
    ],
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "fixed_four_skill_and_loc": True,
    "n_agents": 4,
    "world_size": [25, 25],
    "episode_length": T,
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "flatten_observations": False,
    "flatten_masks": True,
}


def test_optimal_taxation_tutorial(packages):
    def run(pkg):
        env = _make(pkg, TAX_CONFIG)
        obs = env.reset()
        rec = {
            "agents": [type(a).__name__ for a in env.world.agents],
            "state": sorted(env.world.agents[0].state),
            "idx": env.get_agent(agent_idx=0).idx,
            "keys": (list(obs.keys()), list(obs["0"].keys())),
            "build_payment": [category(a.state["build_payment"]) for a in env.world.agents],
            "planner": type(env.world.planner).__name__,
            "action_dim": (env.get_agent(agent_idx=0).action_dim, env.get_agent(agent_idx="p").action_dim),
        }
        return rec

    ours, theirs = _both(packages, run)
    assert ours == theirs


# --------------------------------------------------------------- COVID-19 tutorial
def _covid_config(**overrides):
    from jaxecon.scenarios.covid19.config import default_covid_config

    cfg = default_covid_config()
    cfg.update(episode_length=T, collate_agent_step_and_reset_data=True, **overrides)
    return cfg


def generate_actions(env, kind_, episode_length=None):
    """The COVID-19 tutorial's action generators."""
    episode_length = episode_length or env.episode_length
    n = env.n_agents
    agent_spaces = env.all_agents[0].action_spaces
    planner_spaces = env.all_agents[-1].action_spaces
    seq = []
    for t in range(episode_length):
        if kind_ == "real_world":
            actions = {}
        elif kind_ == "random":
            actions = {str(i): np.random.randint(agent_spaces) for i in range(n)}
            actions["p"] = np.random.randint(planner_spaces)
        elif kind_ == "states_open_no_subsidies":
            actions = {str(i): np.array([1]) for i in range(n)}
            actions["p"] = np.zeros_like(planner_spaces)
        elif kind_ == "states_closed_full_subsidies":
            actions = {str(i): np.array([agent_spaces - 1]) for i in range(n)}
            actions["p"] = np.array(planner_spaces) - 1
        else:
            raise NotImplementedError(kind_)
        seq.append(actions)
    return seq


def _unwrap_arrays(actions):
    """numpy 2 refuses ``int(np.array([k]))`` inside Foundation 1.7.1 (numpy 1 accepted
    it): the reference gets the scalar, jaxecon the tutorial's array."""
    return {k: (v.reshape(-1)[0] if isinstance(v, np.ndarray) and v.size == 1 else v) for k, v in actions.items()}


def fetch_env_dense_log(pkg, cfg, action_type):
    env = _make(pkg, cfg)
    env.reset(force_dense_logging=True)
    seq = generate_actions(env, action_type)
    for t in range(env.episode_length):
        env.step(seq[t] if pkg.__name__.startswith("jaxecon") else _unwrap_arrays(seq[t]))
    return env, env._dense_log


PLOT_KEYS = ["Current Open Close Stringency Level", "Current Subsidy Level", "Total Susceptible",
             "Total Infected", "Total Recovered", "Total Deaths", "New Infections", "New Deaths",
             "Total Vaccinated", "Total Unemployed", "Health Index", "Economic Index"]


def visualize_states_reads(env, dense_log, entity):
    """The series ``visualize_states`` extracts (without plotting)."""
    name_to_idx = {v: k for k, v in env.us_state_idx_to_state_name.items()}
    name_to_idx["USA"] = "p"
    agent_id = name_to_idx[entity]
    steps = range(len(dense_log["states"]) - 1)
    dates = [datetime.strptime(dense_log["states"][t][agent_id]["Date"], "%Y-%m-%d") for t in steps]
    if entity == "USA":
        reward = [dense_log["rewards"][t][agent_id] for t in steps]
    else:
        reward = [dense_log["rewards"][t]["a"][int(agent_id)] for t in steps]
    series = {}
    for key in PLOT_KEYS:
        if key == "Current Subsidy Level":
            values = [dense_log["states"][t]["p"].get(key, np.nan) for t in steps]
        else:
            values = [dense_log["states"][t][str(agent_id)].get(key, np.nan) for t in steps]
        series[key] = np.array(values, dtype=np.float64).reshape(len(values), -1)
    sub_key = "New Subsidy Provided" if entity == "USA" else "New Subsidy Received"
    series[sub_key] = np.array([dense_log["states"][t][agent_id].get(sub_key, np.nan) for t in steps], np.float64)
    return dates, np.asarray(reward, np.float64), series


@pytest.mark.parametrize("scenario, overrides, action_type", [
    ("real_world", {"use_real_world_data": True, "use_real_world_policies": True}, "real_world"),
    ("real_world_policies", {"use_real_world_policies": True}, "real_world"),
    ("open_no_subsidies", {}, "states_open_no_subsidies"),
    ("closed_full_subsidies", {"health_priority_scaling_agents": 0.5}, "states_closed_full_subsidies"),
])
def test_covid19_tutorial(packages, scenario, overrides, action_type):
    cfg = _covid_config(**overrides)

    def run(pkg):
        env = _make(pkg, cfg)
        dims = (env.get_agent(agent_idx="0").action_dim, env.get_agent(agent_idx="p").action_dim)
        env, log = fetch_env_dense_log(pkg, cfg, action_type)
        usa = visualize_states_reads(env, log, "USA")
        california = visualize_states_reads(env, log, "California")
        return {"dims": dims, "keys": list(log), "usa": usa, "california": california,
                "start": env.start_date, "population": np.asarray(env.us_state_population)}

    ours, theirs = _both(packages, run)
    assert ours["dims"] == theirs["dims"] and ours["keys"] == theirs["keys"]
    assert ours["start"] == theirs["start"]
    np.testing.assert_allclose(ours["population"], theirs["population"])
    for entity in ("usa", "california"):
        (d1, r1, s1), (d2, r2, s2) = ours[entity], theirs[entity]
        assert d1 == d2
        np.testing.assert_allclose(r1, r2, rtol=2e-4, atol=1e-6)
        assert list(s1) == list(s2)
        for k in s1:
            # the two economies agree to float32 rounding (test_covid19.py pins the details)
            np.testing.assert_allclose(s1[k], s2[k], rtol=2e-4, atol=1.0, err_msg=f"{entity} {k}")
