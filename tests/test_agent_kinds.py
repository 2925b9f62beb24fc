"""What hooks take and return (``jaxecon.core.agent_kinds``).

- a component whose hooks use the records runs, and one written against the
  dicts of earlier releases (``{"a": ..., "p": ...}``, ``actions["a"]``)
  gives the same observations, masks and state, warning each time;
- a hook that returns anything else is refused, naming the component;
- the records convert to and from Foundation's keys.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import jaxecon
from jaxecon.core.agent_kinds import Observed, PerKind, as_masks, as_observed, as_rewards
from jaxecon.core.component import Component
from jaxecon.core.groups import MOBILE
from jaxecon.core.registry import component_registry


@struct.dataclass
class _FlagState:
    flag: jax.Array


class _Flag(Component):
    """Action 1 sets a per-agent flag; observes it; masks action 1 once set."""

    agent_subclasses = (MOBILE,)

    def get_n_actions(self, agent_cls_name):
        return 1 if agent_cls_name == MOBILE else None

    def init(self, key, params):
        return _FlagState(flag=jnp.zeros(self.n_agents, jnp.float32))


@component_registry.add
class KindsNewStyle(_Flag):
    name = "KindsNewStyle"

    def step(self, key, state, actions, params):
        flag = jnp.maximum(state.components[self.name].flag, (actions.mobile[self.name] == 1).astype(jnp.float32))
        return state.replace(components={**state.components, self.name: _FlagState(flag=flag)})

    def observe(self, state, params):
        return Observed(mobile={"flag": state.components[self.name].flag},
                        planner={"n_flags": jnp.sum(state.components[self.name].flag)})

    def masks(self, state, params):
        return PerKind(mobile={self.name: (state.components[self.name].flag == 0)[:, None]})


@component_registry.add
class KindsOldStyle(_Flag):
    name = "KindsOldStyle"

    def step(self, key, state, actions, params):
        flag = jnp.maximum(state.components[self.name].flag, (actions["a"][self.name] == 1).astype(jnp.float32))
        return state.replace(components={**state.components, self.name: _FlagState(flag=flag)})

    def observe(self, state, params):
        return {"a": {"flag": state.components[self.name].flag},
                "p": {"n_flags": jnp.sum(state.components[self.name].flag)}}

    def masks(self, state, params):
        return {"a": {self.name: (state.components[self.name].flag == 0)[:, None]}}


def _run(component: str):
    env = jaxecon.make("uniform/simple_wood_and_stone", components=[(component, {}), ("Gather", {})], n_agents=3,
                       world_size=[6, 6], episode_length=4)
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    obs, state, *_ = env.step(jax.random.key(1), state, {"a": jnp.array([1, 0, 1], jnp.int32)}, params)
    return obs, state.components[component].flag


def test_old_style_hooks_run_as_the_records_and_warn():
    new_obs, new_flag = _run("KindsNewStyle")
    with pytest.warns(DeprecationWarning, match="mobile=, planner="):
        old_obs, old_flag = _run("KindsOldStyle")
    np.testing.assert_array_equal(new_flag, [1, 0, 1])
    np.testing.assert_array_equal(old_flag, new_flag)
    for group in ("a", "p"):
        assert set(old_obs[group]) == set(new_obs[group])
        for k in new_obs[group]:
            np.testing.assert_array_equal(old_obs[group][k], new_obs[group][k])


def test_a_hook_returning_something_else_is_refused_by_name():
    with pytest.raises(ValueError, match="component 'X'.*keys \\['b'\\]"):
        as_observed({"b": {}}, "component 'X'")
    with pytest.raises(ValueError, match="component 'X': masks must be"):
        as_masks([1], "component 'X'")
    with pytest.raises(ValueError, match="scenario 'S': compute_reward must return"):
        as_rewards((1, 2), "scenario 'S'")


def test_records_convert_to_and_from_foundation_keys():
    obs = Observed(mobile={"x": jnp.zeros(2)}, planner_view={"y": jnp.ones(2)})
    assert set(obs.keyed()) == {"a", "pa"}
    back = Observed.from_keyed(obs.keyed())
    assert back.planner == {} and set(back.mobile) == {"x"} and set(back.planner_view) == {"y"}
    with pytest.warns(DeprecationWarning):
        rewards, state = as_rewards((jnp.zeros(2), jnp.zeros(()), "state"), "scenario 'S'")
    assert isinstance(rewards, PerKind) and state == "state"
    with pytest.warns(DeprecationWarning):
        assert obs["pa"] is obs.planner_view
    with pytest.raises(KeyError):
        obs["q"]
