"""Agent groups: several mobile-agent types and an economy without a planner.

The two proof economies (gather-trade-build with builders, who Build but do
not trade, and traders, who trade but do not Build, each with its own skill
distribution, plus the planner; and gather-build with no planner) are held
against the economy with Foundation's groups: given the same actions, the
state after every step is the same to the bit, and each group's rewards are
its agents' entries of the default economy's.

The tests call the economies' functions jitted: op by op, JAX compiles each
primitive of a step apart (hundreds of small compiles a test).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.bounds import bound_of
from jaxecon.core.groups import AgentGroup, parse_groups
from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneParams
from jaxecon.wrappers import GymnaxEnv, MultiAgentEnv

GTB = [("Build", {"skill_dist": "pareto", "build_labor": 1}), ("ContinuousDoubleAuction", {}),
       ("Gather", {"move_labor": 1, "collect_labor": 1}), ("PeriodicBracketTax", {"period": 5})]
KW = dict(n_agents=5, world_size=[12, 12], episode_length=12)
TYPES = [{"name": "builders", "n_agents": 2, "components": ["Build", "Gather"]},
         {"name": "traders", "n_agents": 3, "components": ["ContinuousDoubleAuction", "Gather"]}]


def make(components=GTB, **kw):
    return jaxecon.make("uniform/simple_wood_and_stone", components=components, **{**KW, **kw})


@pytest.fixture(scope="module")
def pair():
    return make(mobile_agent_groups=TYPES), make()


def to_default(typed, default, actions: dict) -> dict:
    """The default economy's actions equal to ``typed``'s: each group's local
    index mapped to the same (subspace, action) in the joint layout."""
    joint = {v: k for k, v in default.agent_actions.single_action_map().items()}
    rows = []
    for g in typed.mobile_groups:
        local = typed.group_actions[g.name].single_action_map()
        table = np.zeros(typed.group_actions[g.name].n_actions, np.int32)
        for idx, sub_k in local.items():
            table[idx] = joint[sub_k]
        rows.append(jnp.asarray(table)[actions[g.name]])
    return {"a": jnp.concatenate(rows), "p": actions["p"]}


def test_default_economies_keep_foundations_groups(pair):
    _, default = pair
    assert default.group_names == ("a", "p") and default.has_foundation_groups
    assert default.agent_groups == (AgentGroup("a", "BasicMobileAgent", 5), AgentGroup("p", "BasicPlanner", 1))
    assert default.group_actions["a"] is default.agent_actions


def test_mobile_agent_types_have_their_own_actions_observations_and_skills(pair):
    typed, default = pair
    assert typed.group_names == ("builders", "traders", "p") and not typed.has_foundation_groups
    builders, traders = typed.mobile_groups
    assert (builders.start, builders.stop, traders.start, traders.stop) == (0, 2, 2, 5)
    assert typed.group_actions["builders"].names == ("Build", "Gather")
    assert all(n.startswith("ContinuousDoubleAuction") or n == "Gather" for n in typed.group_actions["traders"].names)
    assert typed.action_space("builders").n == 1 + 1 + 4
    assert typed.action_space("traders").n == default.action_space("a").n - 1
    obs, state = jax.jit(typed.reset)(jax.random.key(0), typed.default_params)
    assert set(obs) == {"builders", "traders", "p"}
    assert obs["builders"]["flat"].shape[0] == 2 and obs["traders"]["flat"].shape[0] == 3
    # a type observes the components whose actions it takes, and every other one (the taxes)
    assert obs["builders"]["flat"].shape[1] < obs["traders"]["flat"].shape[1]
    for g in typed.group_names:
        assert typed.observation_space(g)["flat"].shape == obs[g]["flat"].shape[-1:]
        assert obs[g]["action_mask"].shape[-1] == typed.observation_space(g)["action_mask"].shape[0]
    # its own skill distribution per component
    two = make(mobile_agent_groups=[{**TYPES[0]}, {**TYPES[1], "skill_dist": {"Build": "none", "Gather": "pareto"}}])
    _, s = jax.jit(two.reset)(jax.random.key(1), two.default_params)
    build, gather = s.components["Build"], s.components["Gather"]
    np.testing.assert_array_equal(build.build_skill[2:], 1.0)
    assert np.all(np.asarray(build.build_skill[:2]) != 1.0)
    np.testing.assert_array_equal(gather.bonus_gather_prob[:2], 0.0)
    assert np.all(np.asarray(gather.bonus_gather_prob[2:]) > 0.0)


def test_mobile_agent_types_step_as_the_default_economy_given_the_same_actions(pair):
    typed, default = pair
    params = typed.default_params
    step_t, step_d = jax.jit(typed.step), jax.jit(default.step)
    key = jax.random.key(7)
    obs_t, s_t = jax.jit(typed.reset)(key, params)
    _, s_d = jax.jit(default.reset)(key, params)
    jax.tree.map(np.testing.assert_array_equal, s_t, s_d)
    loc0 = np.asarray(s_t.loc)
    traded = 0
    sample = jax.jit(typed.sample_actions)
    for t in range(12):
        acts = sample(jax.random.key(100 + t), obs_t)
        k = jax.random.key(200 + t)
        obs_t, s_t, r_t, _, _ = step_t(k, s_t, acts, params)
        _, s_d, r_d, _, _ = step_d(k, s_d, to_default(typed, default, acts), params)
        jax.tree.map(np.testing.assert_array_equal, s_t, s_d)
        np.testing.assert_array_equal(jnp.concatenate([r_t["builders"], r_t["traders"]]), r_d["a"])
        np.testing.assert_array_equal(r_t["p"], r_d["p"])
        local = jax.jit(lambda a: typed.codec.component_actions(typed.codec.check_actions(a)))(acts)
        build = local[0].mobile["Build"]
        assert not np.any(np.asarray(build[2:]))  # traders never build
        traded += int(sum(np.sum(np.asarray(v[:2])) for v in local[1].mobile.values()))
    assert traded == 0  # builders never trade
    moved = np.any(np.asarray(s_t.loc) != loc0, axis=1)
    assert moved[:2].any() and moved[2:].any()  # both types acted


def test_joint_actions_in_multi_action_mode_step_as_the_group_actions():
    """Foundation's joint layout of per-group heads (an out-of-range head stays a NO-OP)."""
    typed, default = make(mobile_agent_groups=TYPES, multi_action_mode_agents=True), make(multi_action_mode_agents=True)
    params = typed.default_params
    step_t, step_d, sample = jax.jit(typed.step), jax.jit(default.step), jax.jit(typed.sample_actions)
    obs, s_t = jax.jit(typed.reset)(jax.random.key(3), params)
    _, s_d = jax.jit(default.reset)(jax.random.key(3), params)
    for t in range(3):
        acts = sample(jax.random.key(10 + t), obs)
        acts["traders"] = acts["traders"].at[0, 0].set(99)  # out of range: NO-OP in that head only
        joint = jax.jit(typed.codec.joint_actions)(acts)
        assert joint["a"].shape == (5, len(default.agent_actions.names))
        obs, s_t, _, _, _ = step_t(jax.random.key(20 + t), s_t, acts, params)
        _, s_d, _, _, _ = step_d(jax.random.key(20 + t), s_d, joint, params)
        jax.tree.map(np.testing.assert_array_equal, s_t, s_d)


def test_an_economy_without_a_planner():
    comps = [("Build", {}), ("Gather", {})]
    none, default = make(comps, n_planners=0), make(comps)
    assert none.group_names == ("a",) and none.num_agents == 5 and none.planner_group is None
    params = none.default_params
    obs, s0 = jax.jit(none.reset)(jax.random.key(3), params)
    assert set(obs) == {"a"}
    _, d0 = jax.jit(default.reset)(jax.random.key(3), params)
    acts = jax.jit(none.sample_actions)(jax.random.key(4), obs)
    assert set(acts) == {"a"}
    _, s1, r, _, _ = jax.jit(none.step)(jax.random.key(5), s0, acts, params)
    _, d1, rd, _, _ = jax.jit(default.step)(jax.random.key(5), d0, acts, params)
    assert set(r) == {"a"}
    jax.tree.map(np.testing.assert_array_equal, s1, d1)
    np.testing.assert_array_equal(r["a"], rd["a"])
    with pytest.raises(ValueError, match="unknown keys"):
        none.step(jax.random.key(5), s0, {"a": acts["a"], "p": 0}, params)
    with pytest.raises(ValueError, match="no planner"):
        make(GTB, n_planners=0)
    assert make(GTB[:3] + [("PeriodicBracketTax", {"disable_taxes": True})], n_planners=0).group_names == ("a",)


def test_groups_run_vmapped_and_jitted(pair):
    typed, _ = pair
    params = typed.default_params
    keys = jax.random.split(jax.random.key(0), 3)
    obs, state = jax.jit(jax.vmap(typed.reset, (0, None)))(keys, params)
    acts = jax.jit(jax.vmap(typed.sample_actions))(keys, obs)
    obs, state, rew, done, _ = jax.jit(jax.vmap(typed.step, (0, 0, 0, None)))(keys, state, acts, params)
    assert rew["builders"].shape == (3, 2) and rew["traders"].shape == (3, 3) and rew["p"].shape == (3,)
    assert obs["traders"]["action_mask"].shape == (3, 3, typed.group_actions["traders"].n_actions)


def test_the_fronts_key_agents_by_group(pair):
    typed, _ = pair
    marl = MultiAgentEnv(typed, planner_policy=None)
    assert marl.agents == ["0", "1", "2", "3", "4", "p"]
    assert marl.agent_classes == {"builders": ["0", "1"], "traders": ["2", "3", "4"], "planner": ["p"]}
    assert marl.action_space("0").n == typed.action_space("builders").n
    assert marl.action_space("4").n == typed.action_space("traders").n
    obs, state = jax.jit(marl.reset)(jax.random.key(0))
    assert obs["0"].shape == marl.observation_space("0").shape != marl.observation_space("2").shape
    avail = jax.jit(marl.get_avail_actions)(state)
    acts = {a: jnp.argmax(avail[a], -1).astype(jnp.int32) for a in marl.agents}
    obs, state, rewards, dones, _ = jax.jit(marl.step)(jax.random.key(1), state, acts)
    assert set(rewards) == set(marl.agents)

    with pytest.raises(ValueError, match="group must name"):
        GymnaxEnv(typed)
    gym = GymnaxEnv(typed, group="traders")
    assert gym.num_agents == 3 and gym.action_space().n == typed.action_space("traders").n
    o, s = jax.jit(gym.reset)(jax.random.key(0))
    o, s, r, term, trunc, info = jax.jit(gym.step)(jax.random.key(1), s, jnp.zeros(3, jnp.int32))
    assert o.shape == (3, gym.observation_space().shape[0]) and r.shape == (3,)

    none = make([("Build", {}), ("Gather", {})], n_planners=0)
    # the default ("noop") and None both mean no planner; a policy for a planner that is not there is an error
    assert MultiAgentEnv(none).agents == MultiAgentEnv(none, planner_policy=None).agents == ["0", "1", "2", "3", "4"]
    with pytest.raises(ValueError, match=r'planner_policy must be "noop" \(the default\) or None: .*no planner'):
        MultiAgentEnv(none, planner_policy="random")
    gym_none = GymnaxEnv(none)
    o, s, r, *_, info = jax.jit(gym_none.step)(jax.random.key(1), jax.jit(gym_none.reset)(jax.random.key(0))[1],
                                               jnp.zeros(5, jnp.int32))
    assert "planner_reward" not in info


def test_the_trainer_trains_one_policy_per_group():
    from jaxecon.training.env_adapters import JaxeconAdapter

    adapter = JaxeconAdapter(make(mobile_agent_groups=TYPES), num_envs=2)
    assert [(g.name, g.n, g.role) for g in adapter.groups] == [
        ("builders", 2, "agents"), ("traders", 3, "agents"), ("p", 1, "planner")]
    obs, state = jax.jit(adapter.reset)(jax.random.key(0))
    acts = {g.name: jnp.zeros((2, g.n, len(g.heads)), jnp.int32) for g in adapter.groups}
    obs, state, rew, done, info = jax.jit(adapter.step)(jax.random.key(1), state, acts)
    assert {k: v.shape for k, v in rew.items()} == {"builders": (2, 2), "traders": (2, 3), "p": (2, 1)}
    none = JaxeconAdapter(make([("Build", {}), ("Gather", {})], n_planners=0), num_envs=2)
    assert [g.name for g in none.groups] == ["a"]


def test_the_trainers_policy_groups_are_not_the_economys_agent_groups():
    """The trainer's view of a group is ``PolicyGroup``; its former name
    ``AgentGroup`` still imports, with a DeprecationWarning, and is not the
    economy's ``jaxecon.core.groups.AgentGroup``."""
    from jaxecon.training import env_adapters

    assert "AgentGroup" not in env_adapters.__all__ and "PolicyGroup" in env_adapters.__all__
    with pytest.warns(DeprecationWarning, match="renamed PolicyGroup"):
        from jaxecon.training.env_adapters import AgentGroup as Old
    assert Old is env_adapters.PolicyGroup and Old is not AgentGroup
    with pytest.raises(AttributeError):
        env_adapters.NoSuchName


def test_mobile_agent_types_weigh_their_rewards_their_own_way():
    """Builders pay more for labor, traders' utility bends more: each agent's
    utility (the scenario's ``curr_metric``) is Foundation's isoelastic
    utility with its type's parameters, computed here agent by agent."""
    from jaxecon.rewards import isoelastic_coin_minus_labor

    types = [{**TYPES[0], "reward": {"energy_cost": 0.5}},
             {**TYPES[1], "reward": {"isoelastic_eta": 0.6, "energy_cost": 0.05}}]
    env = make(mobile_agent_groups=types)
    params = env.default_params
    eta = np.array([0.23, 0.23, 0.6, 0.6, 0.6], np.float32)
    cost = np.array([0.5, 0.5, 0.05, 0.05, 0.05], np.float32)
    np.testing.assert_array_equal(params.scenario.isoelastic_eta, eta)
    np.testing.assert_array_equal(params.scenario.energy_cost, cost)
    step, sample = jax.jit(env.step), jax.jit(env.sample_actions)
    obs, state = jax.jit(env.reset)(jax.random.key(3), params)
    for t in range(12):
        prev = np.asarray(state.scenario.curr_metric[:-1])
        acts = sample(jax.random.key(50 + t), obs)
        obs, state, reward, _, _ = step(jax.random.key(60 + t), state, acts, params)
        coin = np.asarray(state.inventory["Coin"] + state.escrow["Coin"])
        labor = np.asarray(state.endogenous["Labor"])
        util = np.array([isoelastic_coin_minus_labor(coin[i], labor[i], eta[i], cost[i]) for i in range(5)])
        np.testing.assert_allclose(state.scenario.curr_metric[:-1], util, rtol=1e-6)
        np.testing.assert_allclose(jnp.concatenate([reward["builders"], reward["traders"]]), util - prev,
                                   rtol=1e-5, atol=1e-6)
    assert labor[:2].min() > 0 and labor[2:].min() > 0  # the labor cost weighed on both types


@pytest.mark.parametrize("groups, match", [
    ([{"name": "x", "n_agents": 2}], "sum to 2"),
    ([{"name": "p", "n_agents": 5}], "unique identifier"),
    ([{"name": "x", "n_agents": 0}], "n_agents"),
    ([{"name": "x", "n_agents": 5, "components": ["Tax"]}], "allowed"),
    ([{"name": "x", "n_agents": 5, "skill_dist": {"ContinuousDoubleAuction": "pareto"}}], "skill_dist"),
    ([{"name": "x", "n_agents": 5, "skill_dist": {"Build": "zipf"}}], "one of"),
    ([{"name": "x", "n_agents": 5, "colour": 1}], "unknown keys"),
    ("builders", "non-empty list"),
    ([{"name": "x", "n_agents": 5, "reward": {"labor_cost": 1.0}}], r"names \['labor_cost'\]; allowed: \['energy_cost'"),
    ([{"name": "x", "n_agents": 5, "reward": {"isoelastic_eta": 1.5}}], r"reward'\]\['isoelastic_eta'\]"),
    ([{"name": "x", "n_agents": 5, "reward": 0.5}], "must be a dict"),
])
def test_bad_group_declarations_are_named(groups, match):
    with pytest.raises((ValueError, TypeError), match=match):
        parse_groups(5, groups, 1, {"Build": True, "Gather": True, "ContinuousDoubleAuction": False},
                     {f: bound_of(WoodAndStoneParams, f) for f in ("isoelastic_eta", "energy_cost")})


def test_a_scenario_without_per_agent_reward_parameters_refuses_a_group_reward():
    with pytest.raises(ValueError, match="no per-agent reward parameters"):
        jaxecon.make("one-step-economy", n_agents=4, world_size=[1, 1], episode_length=2,
                     components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2})],
                     mobile_agent_groups=[{"name": "x", "n_agents": 4, "reward": {"labor_cost": 2.0}}])


def test_bad_n_planners_and_the_shim_refuses_declared_groups():
    with pytest.raises(ValueError, match="several planners need planner_groups"):
        make(n_planners=2)
    from jaxecon.foundation import make_env_instance

    with pytest.raises(ValueError, match="the Foundation shim runs Foundation's agents"):
        make_env_instance("uniform/simple_wood_and_stone", components=GTB, mobile_agent_groups=TYPES, **KW)


def test_a_state_of_the_same_leaves_and_shapes_is_taken_as_the_readme_says():
    """README: "another economy" is told by leaves and shapes, so the ungrouped twin's state
    steps an economy with agent types (its skills come from the twin's draws)."""
    import pathlib

    from jaxecon.configs import builders_and_traders_config

    readme = " ".join((pathlib.Path(__file__).resolve().parent.parent / "README.md").read_text().split())
    assert ("a state of the same leaves and shapes, such as that of an economy with agent types (below) and of its "
            "twin without them, cannot be told apart and is stepped as it is") in readme
    grouped_cfg = builders_and_traders_config()
    twin_cfg = {k: v for k, v in grouped_cfg.items() if k != "mobile_agent_groups"}
    grouped, twin = jaxecon.make_from_config(grouped_cfg), jaxecon.make_from_config(twin_cfg)
    _, twin_state = jax.eval_shape(twin.reset, jax.random.key(0), twin.default_params)
    grouped.check_state(twin_state)  # accepted: the documented limit
