"""User-written numpy components and scenarios in the shim, against ai-economist 1.7.1.

The user code is written once, against Foundation's API (``user_classes``
takes the framework's ``BaseComponent`` / ``BaseEnvironment`` / scenario
registry), and instantiated on both: ai-economist's classes and
``jaxecon.foundation``'s. Components: the advanced tutorial's
``BuyWidgetFromVirtualStore`` (verbatim, with its ``Widget`` resource), a
``Lottery`` (random, with a state field, observations, masks and metrics)
and a deterministic ``Allowance`` (reads and writes Wood and Coin, with a
dense log), mixed with jaxecon's jitted Build and Gather. Scenarios: one
written from scratch in numpy, and a subclass of a jaxecon scenario that
overrides ``compute_reward`` and ``scenario_metrics`` (calling ``super()``).

After reset the shim env is loaded with the reference's state; both then
get the same mask-valid actions (no two agents moving onto one tile), and
``np.random`` / ``random`` are seeded the same before every step. The random
user components come first in the component list, so both consume the same
draws (the reference's Build and Gather draw from ``np.random`` too, the
shim's from JAX keys). Coin, every observation, rewards, agent states,
metrics and dense logs are compared step by step. Runs under
``jax.enable_x64`` (float64 on both sides).
"""

from __future__ import annotations

import copy
import random

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon import foundation
from jaxecon.foundation.base.base_component import BaseComponent as JaxBaseComponent
from jaxecon.foundation.base.base_env import BaseEnvironment as JaxBaseEnvironment
from jaxecon.interop import load_foundation_state

from reference import GATHER_BUILD_CONFIG, make_reference_env, random_valid_actions, require_foundation

T = 30


def user_classes(BaseComponent, BaseEnvironment, scenarios) -> dict:
    """The user's code, written once against Foundation's API."""

    class BuyWidgetFromVirtualStore(BaseComponent):
        # Verbatim from Foundation's tutorial economic_simulation_advanced.ipynb.
        name = "BuyWidgetFromVirtualStore"
        required_entities = ["Coin", "Widget"]  # <--- We can now look up "Widget" in the resource registry
        agent_subclasses = ["BasicMobileAgent"]

        def __init__(
            self,
            *base_component_args,
            widget_refresh_rate=0.1,
            **base_component_kwargs
        ):
            super().__init__(*base_component_args, **base_component_kwargs)
            self.widget_refresh_rate = widget_refresh_rate
            self.available_widget_units = 0
            self.widget_price = 5

        def get_additional_state_fields(self, agent_cls_name):
            return {}

        def additional_reset_steps(self):
            self.available_wood_units = 0

        def get_n_actions(self, agent_cls_name):
            if agent_cls_name == "BasicMobileAgent":
                return 1
            return None

        def generate_masks(self, completions=0):
            masks = {}
            for agent in self.world.agents:
                masks[agent.idx] = np.array([
                    agent.state["inventory"]["Coin"] >= self.widget_price and self.available_widget_units > 0
                ])

            return masks

        def component_step(self):
            if random.random() < self.widget_refresh_rate:
                self.available_widget_units += 1

            for agent in self.world.get_random_order_agents():

                action = agent.get_component_action(self.name)

                if action == 0:  # NO-OP. Agent is not interacting with this component.
                    continue

                if action == 1:  # Agent wants to buy. Execute a purchase if possible.
                    if self.available_widget_units > 0 and agent.state["inventory"]["Coin"] >= self.widget_price:
                        agent.state["inventory"]["Coin"] -= self.widget_price
                        agent.state["inventory"]["Widget"] += 1
                        self.available_widget_units -= 1

                else:  # We only declared 1 action for this agent type, so action > 1 is an error.
                    raise ValueError

        def generate_observations(self):
            obs_dict = dict()
            for agent in self.world.agents:
                obs_dict[agent.idx] = {
                    "widget_refresh_rate": self.widget_refresh_rate,
                    "available_widget_units": self.available_widget_units,
                    "widget_price": self.widget_price
                }

            return obs_dict

    class Lottery(BaseComponent):
        """Action 1 pays ``price`` coin for a 50% chance of 3 coin."""

        name = "Lottery"
        required_entities = ["Coin"]
        agent_subclasses = ["BasicMobileAgent"]

        def __init__(self, *args, price=1.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.price = price
            self.n_plays = 0

        def get_n_actions(self, agent_cls_name):
            return 1 if agent_cls_name == "BasicMobileAgent" else None

        def get_additional_state_fields(self, agent_cls_name):
            return {"lottery_wins": 0} if agent_cls_name == "BasicMobileAgent" else {}

        def additional_reset_steps(self):
            self.n_plays = 0

        def component_step(self):
            for agent in self.world.get_random_order_agents():
                if agent.get_component_action(self.name) == 1 and agent.state["inventory"]["Coin"] >= self.price:
                    agent.state["inventory"]["Coin"] -= self.price
                    self.n_plays += 1
                    if np.random.rand() < 0.5:
                        agent.state["inventory"]["Coin"] += 3
                        agent.state["lottery_wins"] += 1

        def generate_observations(self):
            obs = {a.idx: {"n_plays": self.n_plays, "wins": a.state["lottery_wins"]} for a in self.world.agents}
            obs["p"] = {"n_plays": self.n_plays}
            return obs

        def generate_masks(self, completions=0):
            return {a.idx: np.array([a.state["inventory"]["Coin"] >= self.price]) for a in self.world.agents}

        def get_metrics(self):
            return {"n_plays": self.n_plays}

    class Allowance(BaseComponent):
        """Action 1 sells 1 Wood to the state for 2 Coin (deterministic); logs each sale."""

        name = "Allowance"
        component_type = "Allow"
        required_entities = ["Coin", "Wood"]
        agent_subclasses = ["BasicMobileAgent"]

        def get_n_actions(self, agent_cls_name):
            return 1 if agent_cls_name == "BasicMobileAgent" else None

        def get_additional_state_fields(self, agent_cls_name):
            return {}

        def additional_reset_steps(self):
            self.sales = []

        def component_step(self):
            sales = []
            for agent in self.world.agents:
                if agent.get_component_action(self.name) == 1 and agent.inventory["Wood"] >= 1:
                    agent.inventory["Wood"] -= 1
                    agent.inventory["Coin"] += 2
                    sales.append(agent.idx)
            self.sales.append(sales)

        def generate_observations(self):
            return {}

        def generate_masks(self, completions=0):
            return {a.idx: np.array([a.inventory["Wood"] >= 1]) for a in self.world.agents}

        def get_metrics(self):
            return {"n_sales": sum(len(s) for s in self.sales)}

        def get_dense_log(self):
            return self.sales

    class Diary(BaseComponent):
        """No actions; keeps a non-numeric state field and writes a key it never declared."""

        name = "Diary"
        required_entities = ["Coin"]
        agent_subclasses = ["BasicMobileAgent"]

        def get_n_actions(self, agent_cls_name):
            return None

        def get_additional_state_fields(self, agent_cls_name):
            return {"coin_diary": []} if agent_cls_name == "BasicMobileAgent" else {}

        def additional_reset_steps(self):
            pass

        def component_step(self):
            for agent in self.world.agents:
                agent.state["coin_diary"].append(float(agent.inventory["Coin"]))
                agent.state["last_entry_day"] = int(self.world.timestep)  # a new key
            self.world.planner.state["diary_days"] = int(self.world.timestep)

        def generate_observations(self):
            return {}

        def generate_masks(self, completions=0):
            return {}

    class CoinIslands(BaseEnvironment):
        """A scenario from scratch: coin endowments, a coin drip, coin-change rewards."""

        name = "CoinIslands"
        agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
        required_entities = ["Wood"]

        def __init__(self, *args, drip=1.0, **kwargs):
            super().__init__(*args, **kwargs)
            self.drip = drip
            self.last_coin = {}

        def reset_starting_layout(self):
            wood = np.zeros(self.world_size)
            wood[0, :] = 1
            self.world.maps.set("Wood", wood)

        def reset_agent_states(self):
            for agent in self.world.agents:
                agent.state["inventory"] = {k: 0.0 for k in agent.inventory.keys()}
                agent.state["inventory"]["Coin"] = 10.0 + agent.idx
                agent.state["inventory"]["Wood"] = float(agent.idx)
                agent.state["loc"] = [1, agent.idx]

        def additional_reset_steps(self):
            self.last_coin = {a.idx: a.inventory["Coin"] for a in self.world.agents}

        def scenario_step(self):
            if self.world.timestep % 3 == 0:
                for agent in self.world.agents:
                    agent.state["inventory"]["Coin"] += self.drip

        def generate_observations(self):
            obs = {a.idx: {"coin": a.inventory["Coin"], "wood": a.inventory["Wood"]} for a in self.world.agents}
            obs["p"] = {"total_coin": sum(a.inventory["Coin"] for a in self.world.agents)}
            return obs

        def compute_reward(self):
            rew = {}
            for a in self.world.agents:
                rew[a.idx] = a.inventory["Coin"] - self.last_coin[a.idx]
                self.last_coin[a.idx] = a.inventory["Coin"]
            rew["p"] = float(sum(rew.values()))
            return rew

        def scenario_metrics(self):
            return {"total_coin": float(sum(a.inventory["Coin"] for a in self.world.agents))}

    class CoinBonusLayout(scenarios.get("layout_from_file/simple_wood_and_stone")):
        """The canonical scenario with a coin bonus on top of its rewards."""

        name = "CoinBonusLayout"

        def compute_reward(self):
            rew = super().compute_reward()
            for a in self.world.agents:
                rew[a.idx] = rew[a.idx] + 0.01 * a.inventory["Coin"]
            return rew

        def scenario_metrics(self):
            m = dict(super().scenario_metrics())
            m["bonus/total_coin"] = float(sum(a.inventory["Coin"] for a in self.world.agents))
            return m

    return {c.__name__: c for c in (BuyWidgetFromVirtualStore, Lottery, Allowance, Diary, CoinIslands,
                                    CoinBonusLayout)}


@pytest.fixture(scope="module")
def ref():
    return require_foundation()


@pytest.fixture(scope="module")
def both(ref):
    """The user classes registered in both frameworks: ``{"ref": ..., "jax": ...}``."""
    from ai_economist.foundation.base.base_component import BaseComponent as RefBaseComponent
    from ai_economist.foundation.base.base_env import BaseEnvironment as RefBaseEnvironment
    from ai_economist.foundation.entities.resources import Resource as RefResource

    class RefWidget(RefResource):
        name = "Widget"
        color = [1, 1, 1]
        collectible = False

    class JaxWidget(jaxecon.entities.Resource):
        name = "Widget"
        color = [1, 1, 1]
        collectible = False

    ref.resources.add(RefWidget)
    foundation.resources.add(JaxWidget)
    out = {}
    for key, (bc, be, scen, comps) in {
        "ref": (RefBaseComponent, RefBaseEnvironment, ref.scenarios, ref.components),
        "jax": (JaxBaseComponent, JaxBaseEnvironment, foundation.scenarios, foundation.components),
    }.items():
        classes = user_classes(bc, be, scen)
        for name in ("BuyWidgetFromVirtualStore", "Lottery", "Allowance", "Diary"):
            comps.add(classes[name])
        for name in ("CoinIslands", "CoinBonusLayout"):
            scen.add(classes[name])
        out[key] = classes
    return out


def _config(components, **overrides) -> dict:
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["components"] = components
    cfg.update(resource_regen_prob=0.0, episode_length=T, starting_agent_coin=10)
    cfg.update(overrides)
    return cfg


BUILD = {"Build": {"payment": 10, "payment_max_skill_multiplier": 3, "skill_dist": "pareto", "build_labor": 10}}
GATHER = {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "none"}}


def _deconflict(actions: dict, ref_env) -> dict:
    """Later moves onto an already-targeted tile become NO-OP (the order is random in both)."""
    moves = {1: (0, -1), 2: (0, 1), 3: (-1, 0), 4: (1, 0)}
    taken, out = set(), dict(actions)
    for i, agent in enumerate(ref_env.world.agents):
        a = actions[str(i)]
        sub = agent.single_action_map.get(a) if isinstance(a, (int, np.integer)) and a > 0 else None
        if sub and sub[0] == "Gather":
            dr, dc = moves[sub[1]]
            target = (agent.loc[0] + dr, agent.loc[1] + dc)
            if target in taken:
                out[str(i)] = 0
            taken.add(target)
    return out


def _assert_close(a, b, what, rtol=1e-9):
    """Same keys and values (float64; ``rtol`` 1e-6 for observations, which the
    core computes in float32, e.g. ``time``)."""
    if isinstance(b, dict):
        assert set(a) == set(b), f"{what}: keys {sorted(a)} vs reference {sorted(b)}"
        for k in b:
            _assert_close(a[k], b[k], f"{what}/{k}", rtol)
    elif isinstance(b, (list, tuple)) and b and isinstance(b[0], (dict, list, tuple)):
        assert len(a) == len(b), what
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_close(x, y, f"{what}[{i}]", rtol)
    else:
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                                   rtol=rtol, atol=rtol, err_msg=what)


def _run_both(ref_env, env, n_steps, deconflict=True, seed=0):
    """Same actions and same np.random/random draws each step; compare everything."""
    rng = np.random.default_rng(seed)
    ref_obs = ref_env.reset()
    env.reset()
    load_foundation_state(env, ref_env)
    for t in range(n_steps):
        actions = random_valid_actions(ref_obs, ref_env, rng)
        if deconflict:
            actions = _deconflict(actions, ref_env)
        np.random.seed(1000 + t)
        random.seed(1000 + t)
        ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
        np.random.seed(1000 + t)
        random.seed(1000 + t)
        obs, rew, done, _ = env.step(copy.deepcopy(actions))
        _assert_close(obs, ref_obs, f"step {t} obs", rtol=1e-6)
        _assert_close(rew, ref_rew, f"step {t} rewards")
        assert done == ref_done
        for agent in ref_env.all_agents:
            _assert_close(env.get_agent(agent.idx).state, agent.state, f"step {t} agent {agent.idx} state")
    return ref_obs


@pytest.mark.reference
def test_tutorial_and_user_components_match_reference(ref, both):
    """BuyWidgetFromVirtualStore (the tutorial's), Lottery and Allowance among Build and Gather."""
    comps = [{"Lottery": {"price": 1.0}}, {"BuyWidgetFromVirtualStore": {"widget_refresh_rate": 0.5}},
             BUILD, {"Allowance": {}}, GATHER]
    cfg = _config(comps)
    with jax.enable_x64(True):
        ref_env = make_reference_env(cfg, seed=3)
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        assert isinstance(env.get_component("Lottery"), both["jax"]["Lottery"])
        assert env.get_agent(0).action_dim == ref_env.get_agent(0).action_dim
        _run_both(ref_env, env, T)
        # the episode ended: metrics and the component dense logs, Foundation's keys
        _assert_close(env.previous_episode_metrics, ref_env.previous_episode_metrics, "metrics")
        # every user component acted (same seeds and actions: the counts are the reference's too)
        assert env.previous_episode_metrics["Lottery/n_plays"] > 0
        assert env.previous_episode_metrics["Allow/n_sales"] > 0
        assert sum(env.get_agent(i).inventory["Widget"] for i in range(env.n_agents)) > 0


@pytest.mark.reference
def test_user_component_dense_log_matches_reference(ref, both):
    comps = [{"Lottery": {}}, BUILD, {"Allowance": {}}, GATHER]
    cfg = _config(comps, dense_log_frequency=1)
    with jax.enable_x64(True):
        ref_env = make_reference_env(cfg, seed=4)
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        _run_both(ref_env, env, T, seed=1)
        ref_log, log = ref_env.previous_episode_dense_log, env.previous_episode_dense_log
        assert list(log) == list(ref_log)
        assert log["Allow"] == ref_log["Allow"]
        _assert_close(log["states"], ref_log["states"], "dense log states")


@pytest.mark.reference
def test_dense_log_states_hold_every_agent_state_key(ref, both):
    """Foundation's dense log deep-copies all of agent.state: also a numpy
    component's non-numeric field and keys user code added by writing them."""
    cfg = _config([{"Diary": {}}, BUILD, GATHER], dense_log_frequency=1, episode_length=6)
    with jax.enable_x64(True):
        ref_env = make_reference_env(cfg, seed=7)
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        _run_both(ref_env, env, 6, seed=3)
        ref_states, states = ref_env.previous_episode_dense_log["states"], env.previous_episode_dense_log["states"]
        assert len(states) == len(ref_states) == 7
        for t, (got, want) in enumerate(zip(states, ref_states)):
            for key in want:
                assert list(got[key]) == list(want[key]), f"t={t} agent {key}: key order {list(got[key])} vs {list(want[key])}"
        _assert_close(states, ref_states, "dense log states")
        # the logged objects are snapshots: the diary at t=2 holds 2 entries, the last one all 6
        assert len(states[2]["0"]["coin_diary"]) == 2 and len(states[-1]["0"]["coin_diary"]) == 6
        assert states[-1]["0"]["last_entry_day"] == 6 and states[-1]["p"]["diary_days"] == 6


@pytest.mark.reference
def test_numpy_scenario_from_scratch_matches_reference(ref, both):
    cfg = dict(scenario_name="CoinIslands", components=[{"Lottery": {}}, {"Allowance": {}}],
               n_agents=3, world_size=[5, 6], episode_length=12, drip=0.5,
               flatten_observations=False)
    with jax.enable_x64(True):
        ref_env = ref.make_env_instance(**copy.deepcopy(cfg))
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        assert isinstance(env, both["jax"]["CoinIslands"]) and isinstance(env, JaxBaseEnvironment)
        rng = np.random.default_rng(5)
        for episode in range(2):
            ref_obs, obs = ref_env.reset(), env.reset()
            _assert_close(obs, ref_obs, f"episode {episode} reset obs", rtol=1e-6)
            _assert_close(env.world.maps.get("Wood"), ref_env.world.maps.get("Wood"), "Wood map")
            for t in range(12):
                actions = random_valid_actions(ref_obs, ref_env, rng)
                np.random.seed(t)
                ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
                np.random.seed(t)
                obs, rew, done, _ = env.step(copy.deepcopy(actions))
                _assert_close(obs, ref_obs, f"step {t} obs", rtol=1e-6)
                _assert_close(rew, ref_rew, f"step {t} rew")
                assert done == ref_done
            _assert_close(env.previous_episode_metrics, ref_env.previous_episode_metrics, "metrics")
        assert env.previous_episode_metrics["total_coin"] > 0


@pytest.mark.reference
def test_subclass_of_a_jaxecon_scenario_overrides_hooks(ref, both):
    """compute_reward / scenario_metrics overridden in numpy, the rest jitted; super() runs jaxecon's."""
    cfg = _config([BUILD, GATHER], scenario_name="CoinBonusLayout")
    with jax.enable_x64(True):
        ref_env = make_reference_env(cfg, seed=6)
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        assert isinstance(env, foundation.scenarios.get("layout_from_file/simple_wood_and_stone"))
        assert env._engine.hooks.keys() == {"compute_reward", "scenario_metrics"}
        _run_both(ref_env, env, T, seed=2)
        _assert_close(env.previous_episode_metrics, ref_env.previous_episode_metrics, "metrics")
        assert "bonus/total_coin" in env.previous_episode_metrics


def test_registration_rules():
    """Foundation's registration: a name registered again is replaced; other classes are refused."""

    class Twice(JaxBaseComponent):
        name = "TwiceTestComponent"
        agent_subclasses = ["BasicMobileAgent"]
        required_entities = []

        def get_n_actions(self, agent_cls_name):
            return None

        def get_additional_state_fields(self, agent_cls_name):
            return {}

        def component_step(self):
            pass

        def generate_observations(self):
            return {}

        def generate_masks(self, completions=0):
            return {}

    first = foundation.components.add(Twice)
    second = foundation.components.add(type("Twice", (Twice,), {}))
    assert foundation.components.get("TwiceTestComponent") is second is not first
    assert issubclass(second, foundation.BaseComponent)
    assert issubclass(foundation.components.get("Build"), foundation.BaseComponent)

    class Stranger:
        name = "StrangerTestComponent"

        def component_step(self):
            pass

    with pytest.raises(TypeError, match="lacks: get_n_actions, get_additional_state_fields, "
                                        "generate_observations, generate_masks, build_core_component"):
        foundation.components.add(Stranger)
    with pytest.raises(TypeError, match="neither a Foundation-style scenario"):
        foundation.scenarios.add(Stranger)
    with pytest.raises(TypeError, match="foundation.scenarios.add"):
        jaxecon.scenario_registry.add(type("S", (JaxBaseEnvironment,), {"name": "STest"}))
    # a numpy component is refused by the functional API, with the way out
    with pytest.raises(TypeError, match="Foundation-style numpy components"):
        jaxecon.make("uniform/simple_wood_and_stone", components=[("Build", {}), ("TwiceTestComponent", {})],
                     n_agents=2, world_size=[8, 8])


def test_pure_jax_component_added_through_the_shim_works_in_both_apis():
    from jaxecon.core.component import Component

    @foundation.components.add
    class CoinDrip(Component):
        name = "CoinDripTest"
        required_entities = ("Coin",)
        agent_subclasses = ("BasicMobileAgent",)

        def step(self, key, state, actions, params):
            return state.replace(inventory={**state.inventory, "Coin": state.inventory["Coin"] + 1})

    kwargs = dict(components=[("Build", {}), ("CoinDripTest", {})], n_agents=2, world_size=[8, 8],
                  episode_length=3)
    env = foundation.make_env_instance("uniform/simple_wood_and_stone", **kwargs)
    env.reset()
    env.step()
    assert env.get_agent(0).inventory["Coin"] == 1.0
    assert not env._engine.runs_on_host
    fn = jaxecon.make("uniform/simple_wood_and_stone", **kwargs)
    _, state = fn.reset(jax.random.key(0), fn.default_params)
    _, state, *_ = fn.step(jax.random.key(1), state, {}, fn.default_params)
    assert float(state.inventory["Coin"][0]) == 1.0


def test_writes_into_agent_state_change_the_economy():
    env = foundation.make_env_instance("uniform/simple_wood_and_stone", components=[("Build", {}), ("Gather", {})],
                                       n_agents=2, world_size=[8, 8], episode_length=5)
    env.reset()
    agent = env.get_agent(1)
    agent.state["inventory"]["Coin"] += 7
    agent.inventory["Wood"] = 2
    assert agent.inventory["Coin"] == 7.0 and agent.state["inventory"]["Wood"] == 2.0
    env.step()
    assert float(env.state.inventory["Coin"][1]) == 7.0
    with pytest.raises(TypeError, match="read-only"):
        agent.state["build_payment"] = 3.0


def test_pure_jax_scenario_added_through_the_shim_works_in_both_apis():
    from jaxecon.scenarios.simple_wood_and_stone.dynamic_layout import Uniform

    @foundation.scenarios.add
    class RichUniform(Uniform):
        name = "RichUniformTest"

    kwargs = dict(components=[("Build", {}), ("Gather", {})], n_agents=2, world_size=[8, 8],
                  episode_length=3, starting_agent_coin=5)
    assert jaxecon.scenario_registry.get("RichUniformTest") is RichUniform
    env = foundation.make_env_instance("RichUniformTest", **kwargs)
    assert isinstance(env, foundation.scenarios.get("RichUniformTest"))
    assert isinstance(env, foundation.scenarios.get("uniform/simple_wood_and_stone"))  # its base's shim class
    env.reset()
    assert env.get_agent(0).inventory["Coin"] == 5.0
    fn = jaxecon.make("RichUniformTest", **kwargs)
    _, state = fn.reset(jax.random.key(0), fn.default_params)
    assert float(state.inventory["Coin"][0]) == 5.0
