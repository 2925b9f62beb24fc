"""The TF-Agents and RLHive interfaces and the native observation adapters on
economies with declared agent groups.

Three small economies (10x10 random map, 3-step episodes, Build and Gather):

- ``types``: two mobile-agent types, ``builders`` (Build and Gather, 2 agents)
  and ``foragers`` (Gather only, 2 agents), and the planner ``p`` setting tax
  brackets; multi-action agents, so the types' actions have different shapes
  (two heads and one);
- ``no_planner``: Foundation's mobile group ``a`` (3 agents), ``n_planners=0``;
- ``two_planners``: the mobile group ``a`` (3 agents) and two planners, ``p``
  (tax brackets) and ``treasury`` (``InterfaceGrant``, a planner component
  defined here).

Each interface is checked against the economy's own groups: one spec (or
per-player space) per group, reset and step outputs that match them, a few
random valid steps (``env.sample_actions`` on the masks), and the errors,
which name the group and the count. The economies with Foundation's groups
are the other interface tests' (``test_interface_tf_agents.py``,
``test_interface_rlhive.py``, ``test_observation_adapters.py``). Each env object
is shared by the module's tests, so the host driver compiles once per economy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.component import Component
from jaxecon.core.groups import PLANNER
from jaxecon.core.registry import component_registry
from jaxecon.interfaces import rlhive, specs
from jaxecon.interfaces import tf_agents as tfa
from jaxecon.wrappers.native import NativeObjectObservationWrapper, NativeRGBObservationWrapper

from common import tree_equal


@component_registry.add
class InterfaceGrant(Component):
    """A planner component for these tests: the planner's action k (0: NO-OP, 1, 2)
    adds k coin to every mobile agent's inventory."""

    name = "InterfaceGrant"
    agent_subclasses = (PLANNER,)

    def get_n_actions(self, agent_cls_name):
        return 2 if agent_cls_name == PLANNER else None

    def step(self, key, state, actions, params):
        coin = state.inventory["Coin"]
        grant = actions.planner.get(self.name, jnp.zeros((), jnp.int32))
        return state.replace(inventory={**state.inventory, "Coin": coin + grant.astype(coin.dtype)})


BASE = [("Build", {}), ("Gather", {})]
TAX = ("PeriodicBracketTax", {"period": 2})
KW = dict(world_size=[10, 10], episode_length=3)
TYPES = [{"name": "builders", "n_agents": 2, "components": ["Build", "Gather"]},
         {"name": "foragers", "n_agents": 2, "components": ["Gather"]}]
ECONOMIES = {
    "types": dict(components=BASE + [TAX], n_agents=4, mobile_agent_groups=TYPES, multi_action_mode_agents=True),
    "no_planner": dict(components=BASE, n_agents=3, n_planners=0),
    "two_planners": dict(components=BASE + [TAX, ("InterfaceGrant", {})], n_agents=3,
                         planner_groups=[{"name": "p", "components": ["PeriodicBracketTax"]},
                                         {"name": "treasury", "components": ["InterfaceGrant"]}]),
}
GROUPS = {"types": ("builders", "foragers", "p"), "no_planner": ("a",), "two_planners": ("a", "p", "treasury")}


def make(name: str):
    return jaxecon.make("uniform/simple_wood_and_stone", **KW, **ECONOMIES[name])


@pytest.fixture(scope="module")
def economies():
    """``{name: (env, jitted sample_actions)}``, built once for the module."""
    out = {}
    for name in ECONOMIES:
        env = make(name)
        out[name] = (env, jax.jit(env.sample_actions))
    return out


@pytest.fixture(params=list(ECONOMIES))
def econ(request, economies):
    """``(name, env, jitted sample_actions)`` of each economy in turn."""
    return (request.param,) + economies[request.param]


def valid_actions(sample, obs, seed: int, batch_size=None) -> dict:
    """Random valid actions (the masks of ``obs``), numpy int32, keyed by group."""
    if batch_size is None:
        acts = sample(jax.random.key(seed), obs)
    else:
        acts = jax.vmap(sample)(jax.random.split(jax.random.key(seed), batch_size), obs)
    return {g: np.asarray(a, np.int32) for g, a in jax.device_get(acts).items()}


def lead_of(group) -> tuple:
    return () if group.is_planner else (group.count,)


# --------------------------------------------------------------------- TF-Agents
def test_tf_agents_has_one_spec_per_group_and_steps_match_them(econ):
    name, env, sample = econ
    pyenv = tfa.PyEnvironment(env)
    names = list(GROUPS[name])
    assert list(env.group_names) == names
    for nest in (pyenv.observation_spec(), pyenv.action_spec(), pyenv.reward_spec(), pyenv.discount_spec()):
        assert list(nest) == names
    for g in env.agent_groups:
        lead = lead_of(g)
        space = env.observation_space(g.name)
        assert set(pyenv.observation_spec()[g.name]) == set(space.spaces)
        for k, s in pyenv.observation_spec()[g.name].items():
            assert s.shape == lead + space[k].shape and s.dtype == space[k].dtype, (g.name, k)
        act = pyenv.action_spec()[g.name]
        assert act.shape == lead + env.action_space(g.name).shape and act.name == f"action/{g.name}"
        assert pyenv.reward_spec()[g.name].shape == pyenv.discount_spec()[g.name].shape == lead
    spec = pyenv.time_step_spec()
    ts = pyenv.reset()
    types = []
    for t in range(env.episode_length + 2):  # crosses LAST, then a new episode's FIRST
        assert specs.check_arrays_nest(ts, spec), t
        types.append(int(ts.step_type))
        action = valid_actions(sample, ts.observation, t)
        assert specs.check_arrays_nest(action, pyenv.action_spec())
        ts = pyenv.step(action)
        if not ts.is_first():
            assert tree_equal(ts.reward, pyenv._economy.outputs.reward)
    assert types == [0, 1, 1, 2, 0]


def test_tf_agents_batched_groups(economies):
    env, sample = economies["types"]
    pyenv = tfa.PyEnvironment(env, batch_size=2, handle_auto_reset=True)
    spec = specs.add_outer_dims_nest(pyenv.time_step_spec(), (2,))
    ts = pyenv.reset()
    for t in range(env.episode_length + 1):
        assert specs.check_arrays_nest(ts, spec), t
        ts = pyenv.step(valid_actions(sample, ts.observation, 10 + t, batch_size=2))
    assert np.all(ts.is_first())
    assert ts.observation["builders"]["action_mask"].shape[:2] == (2, 2)
    assert ts.reward["p"].shape == (2,) and ts.reward["foragers"].shape == (2, 2)


# ------------------------------------------------------------------------ RLHive
def test_rlhive_players_are_every_agent_of_every_group(econ):
    _, env, sample = econ
    hive = rlhive.BaseEnv(env)
    players = [(g.name if g.is_planner else str(i), g.name) for g in env.agent_groups
               for i in range(g.start, g.start + g.count)]
    info = hive.env_spec.env_info
    assert hive.num_players == env.num_agents == len(players) == info["num_players"]
    assert list(zip(info["players"], info["player_groups"])) == players
    assert hive.env_spec.observation_space == [env.observation_space(g) for _, g in players]
    assert hive.env_spec.action_space == [env.action_space(g) for _, g in players]
    parallel = rlhive.ParallelEnv(env)
    hive.seed(3)
    parallel.seed(3)
    observation, turn = hive.reset()
    first, _ = parallel.reset()
    assert turn == 0 and len(observation) == hive.num_players and tree_equal(first, observation[0])
    for t in range(env.episode_length):
        raw = hive._economy.outputs.obs
        action = _per_player(env, valid_actions(sample, raw, 20 + t))
        observation, reward, done, turn, step_info = hive.step(action)
        for player, obs in enumerate(observation):
            assert bool(hive.env_spec.observation_space[player].contains(obs)), (t, player)
        out = hive._economy.outputs
        expected = np.concatenate([np.reshape(out.reward[g.name], -1) for g in env.agent_groups])
        assert reward.dtype == np.float32 and np.array_equal(reward, expected)
        # ParallelEnv: one player at a time, the last player's action steps the economy
        for player, a in enumerate(action):
            p_obs, p_reward, p_done, p_turn, p_info = parallel.step(a)
            if player < len(action) - 1:
                assert p_turn == player + 1 and not p_done and not p_reward.any()
        assert p_turn == 0 and tree_equal((p_obs, p_reward, p_done, p_info), (observation[0], reward, done, step_info))
    assert done


def _per_player(env, by_group: dict) -> list:
    """The players' actions (player order) from actions keyed by group."""
    out = []
    for g in env.agent_groups:
        out += [by_group[g.name]] if g.is_planner else list(by_group[g.name])
    return out


def test_rlhive_save_load_mid_round_with_actions_of_several_shapes(economies, tmp_path):
    env, _ = economies["types"]
    parallel = rlhive.ParallelEnv(env)
    parallel.reset()
    rng = np.random.default_rng(4)
    steps = [rng.integers(0, space.nvec) for _ in range(3) for space in parallel.env_spec.action_space]
    cut = 3  # two builders' actions (two heads) and one forager's (one head) pending
    for a in steps[:cut]:
        parallel.step(a)
    assert [np.shape(a) for a in parallel._actions] == [(2,), (2,), (1,)]
    parallel.save(tmp_path / "env")
    first = [parallel.step(a) for a in steps[cut:]]
    restored = rlhive.ParallelEnv(env)
    restored.load(tmp_path / "env")
    assert restored._turn == cut and tree_equal(restored._actions, steps[:cut])
    again = [restored.step(a) for a in steps[cut:]]
    assert tree_equal(first, again)


# ----------------------------------------------------- native observation adapters
def test_object_adapter_gives_each_group_its_vector(econ):
    _, env, sample = econ
    params = env.default_params
    w = NativeObjectObservationWrapper(env)
    assert list(w.obs_size) == list(env.group_names)
    # the bare env and the adapter in one program (one compilation), from the same state
    reset = jax.jit(lambda key: (env.reset(key, params)[0], w.reset(key, params)))
    step = jax.jit(lambda key, state, acts: (env.step(key, state, acts, params), w.step(key, state, acts, params)))
    raw_obs, (obs, state) = reset(jax.random.key(0))
    for t in range(2):
        acts = sample(jax.random.key(30 + t), raw_obs)
        for g in env.agent_groups:
            got = np.asarray(obs[g.name]["obs"])
            assert got.shape == lead_of(g) + (w.obs_size[g.name],)
            space = w.observation_space(g.name)
            assert bool(space["obs"].contains(got if g.is_planner else got[0]))
            np.testing.assert_array_equal(obs[g.name]["action_mask"], raw_obs[g.name]["action_mask"])
        (raw_obs, _, raw_reward, _, _), (obs, state, reward, _, info) = step(jax.random.key(40 + t), state, acts)
        assert tree_equal(reward, raw_reward)
    ns = env.name
    # side channels: Foundation's mobile group "a" unprefixed, every other group by its name
    for g in env.agent_groups:
        key = f"{ns}.time" if g.name == "a" else f"{ns}.{g.name}.time"
        np.testing.assert_array_equal(info[key], np.asarray(raw_obs[g.name]["time"], np.float32))
    mobile = sum(float(np.sum(reward[g.name])) for g in env.mobile_groups)
    assert float(info[f"{ns}.collective_reward"]) == pytest.approx(mobile)
    for g in env.planner_groups:
        assert info[f"{ns}.{g.name}.agents"].shape[0] == env.n_agents


def test_rgb_adapter_gives_each_group_its_frames(economies):
    env, _ = economies["types"]
    params = env.default_params
    ego = NativeRGBObservationWrapper(env, fully_observable=False, rgb_preprocessing="native")
    full = NativeRGBObservationWrapper(env)
    assert ego.obs_shape == {"builders": (2, 88, 88, 3), "foragers": (2, 88, 88, 3), "p": (80, 80, 3)}
    assert full.obs_shape == {"builders": (2, 20, 20, 3), "foragers": (2, 20, 20, 3), "p": (20, 20, 3)}
    raw, state = jax.jit(env.reset)(jax.random.key(1), params)
    frames = jax.jit(ego.observation)(raw, state)
    views = ego.renderer.egocentric_frames(ego.renderer.world_frame(state), state.loc, ego.view_radius)
    views = np.asarray(views, np.float32) / 255.0
    for g in env.mobile_groups:  # each type's rows of every agent's window
        np.testing.assert_allclose(frames[g.name]["obs"], views[g.start:g.stop], rtol=1e-6)
        assert ego.observation_space(g.name)["obs"].shape == (88, 88, 3)
    shared = jax.jit(full.observation)(raw, state)
    for g in env.group_names:  # fully observable: everyone sees the one world frame
        np.testing.assert_array_equal(shared[g]["obs"], np.broadcast_to(shared["p"]["obs"], full.obs_shape[g]))
    # several planners, or none: a frame per planner, none without
    for name, expected in (("two_planners", {"a": (3, 20, 20, 3), "p": (20, 20, 3), "treasury": (20, 20, 3)}),
                           ("no_planner", {"a": (3, 20, 20, 3)})):
        other, _ = economies[name]
        wrapper = NativeRGBObservationWrapper(other)
        obs, _ = jax.eval_shape(wrapper.reset, jax.random.key(0), other.default_params)
        assert wrapper.obs_shape == expected == {g: o["obs"].shape for g, o in obs.items()}


# ---------------------------------------------------------------------- errors
def test_errors_name_the_group_and_the_count(economies):
    env, sample = economies["types"]
    pyenv = tfa.PyEnvironment(env)
    ts = pyenv.reset()
    good = valid_actions(sample, ts.observation, 0)
    with pytest.raises(ValueError, match=r'keys "builders", "foragers" and "p" .*missing \[\'p\'\]'):
        pyenv.step({k: v for k, v in good.items() if k != "p"})
    with pytest.raises(ValueError, match=r"unknown \['a'\]"):
        pyenv.step({**good, "a": good["builders"]})
    with pytest.raises(ValueError, match=r'action\["foragers"\] must have shape \(2, 1\)'):
        pyenv.step({**good, "foragers": good["builders"]})

    with pytest.raises(ValueError, match=r"^num_players must be 5: n_agents \(4\) plus 1 planner, one player per "
                                         r"agent of each group \(builders 2, foragers 2, p 1\); got 4$"):
        rlhive.BaseEnv(env, num_players=4)
    hive = rlhive.BaseEnv(env)
    hive.reset()
    action = _per_player(env, good)
    action[2] = np.array([7])
    with pytest.raises(ValueError, match=r"action of player 2 \(group 'foragers'\) is outside the action space"):
        hive.step(action)
    with pytest.raises(ValueError, match=r"num_players=5 actions \(agents 0..3, then the planners \['p'\]\)"):
        hive.step(action[:4])
    none, _ = economies["no_planner"]
    with pytest.raises(ValueError, match=r"^num_players must be 3: n_agents \(3\), no planner, .* \(a 3\); got 4$"):
        rlhive.ParallelEnv(none, num_players=4)

    for wrapper in (NativeObjectObservationWrapper(env), NativeRGBObservationWrapper(env)):
        with pytest.raises(ValueError, match=r"agent must be one of \['builders', 'foragers', 'p'\].*got 'a'"):
            wrapper.observation_space("a")


@pytest.mark.parametrize("groups, words", [
    ([{**TYPES[0]}, {**TYPES[1], "n_agents": 1}], "the mobile_agent_groups' n_agents sum to 3, but n_agents is 4"),
    ([{**TYPES[0]}, {**TYPES[1], "components": ["Trade"]}], "mobile_agent_groups[1]['components'] names ['Trade']"),
    ([{**TYPES[0]}, {**TYPES[1], "name": "builders"}], "mobile_agent_groups[1]['name'] must be a unique identifier"),
])
@pytest.mark.parametrize("interface", [tfa.PyEnvironment, rlhive.BaseEnv, rlhive.ParallelEnv])
def test_bad_declarations_in_a_config_are_one_line_errors(interface, groups, words):
    config = {"scenario_name": "uniform/simple_wood_and_stone", "components": [{"Build": {}}, {"Gather": {}}],
              "n_agents": 4, "mobile_agent_groups": groups, **KW}
    with pytest.raises(ValueError) as exc:
        interface(config)
    assert words in str(exc.value) and "\n" not in str(exc.value)
