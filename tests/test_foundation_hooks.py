"""The Foundation-facing hooks live outside the engine (``jaxecon.interop.foundation_hooks``).

The engine's base classes declare none of them; a component or scenario that
has a Foundation side declares it with the mixins, and the readers give every
other class the defaults: no extra ``agent.state`` fields, no computed
attributes, and an interop loader that accepts only a class keeping no
sub-state.
"""

import jax
import jax.numpy as jnp
import pytest
from flax import struct

import jaxecon
from jaxecon.core.component import Component
from jaxecon.core.scenario import Scenario
from jaxecon.core.state import NoState
from jaxecon.interop import foundation_hooks as hooks

KWARGS = dict(n_agents=2, world_size=[5, 5], episode_length=3,
              components=[("Gather", {}), ("Build", {})])
HOST_HOOKS = ("agent_state_fields", "planner_state_fields", "load_foundation_state", "foundation_attributes")


def test_the_engine_declares_no_foundation_facing_hook():
    for cls in (Component, Scenario):
        assert [h for h in HOST_HOOKS if hasattr(cls, h)] == [], cls
    assert not hasattr(Scenario, "foundation_class_name")


def test_each_hook_tuple_is_defined_once_and_names_its_own_hooks():
    from jaxecon.core.scenario import FOUNDATION_SCENARIO_HOOKS, SCENARIO_HOOKS

    assert all(callable(getattr(Scenario, h)) for h in SCENARIO_HOOKS)  # the engine's scenario hooks
    assert set(FOUNDATION_SCENARIO_HOOKS) <= set(SCENARIO_HOOKS)  # those under Foundation's names: host-able
    assert not set(hooks.SCENARIO_MIXIN_HOOKS) & set(SCENARIO_HOOKS)  # the mixins' are not the engine's
    assert set(hooks.COMPONENT_MIXIN_HOOKS) <= set(hooks.SCENARIO_MIXIN_HOOKS)


@struct.dataclass
class _Counter:
    n: jax.Array


class _Plain(Component):
    """A component without the mixin that keeps a sub-state."""

    name = "PlainCounter"
    agent_subclasses = ("BasicMobileAgent",)

    def init(self, key, params):
        return _Counter(n=jnp.zeros((), jnp.int32))


def test_a_class_without_the_mixin_gets_the_defaults():
    env = jaxecon.make("uniform/simple_wood_and_stone", **KWARGS)
    state = env.reset(jax.random.key(0), env.default_params)[1]
    gather = env.get_component("Gather")
    assert isinstance(gather, hooks.FoundationComponentHooks)
    assert set(hooks.agent_state_fields(gather, state)) == {"bonus_gather_prob"}
    assert set(hooks.foundation_attributes(env.scenario)) >= {"energy_weight", "curr_optimization_metric"}

    plain = _Plain(env.spec)
    assert hooks.agent_state_fields(plain, state) == {} and hooks.planner_state_fields(plain, state) == {}
    with_sub = state.replace(components={**state.components, plain.name: plain.init(None, None)})
    with pytest.raises(NotImplementedError, match="component 'PlainCounter' keeps a sub-state"):
        hooks.load_component_state(plain, None, None, with_sub)
    stateless = state.replace(components={**state.components, plain.name: NoState()})
    assert hooks.load_component_state(plain, None, None, stateless) is stateless


def test_a_foundation_facing_hook_without_its_mixin_is_refused_at_registration():
    """The registries' extra checks (installed from above the core by
    ``jaxecon.registries``) refuse it; the class is not registered."""
    from jaxecon import registries
    from jaxecon.core.registry import component_registry, scenario_registry
    from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneScenario

    class Shows(Component):
        name = "Shows"

        def agent_state_fields(self, state):
            return {}

    with pytest.raises(TypeError, match=r"'Shows' defines \['agent_state_fields'\].*FoundationComponentHooks"):
        component_registry.add(Shows)
    assert not component_registry.has("Shows")
    registries.check_component(type("ShowsDeclared", (Shows, hooks.FoundationComponentHooks), {}))
    registries.check_component(_Plain)  # no Foundation side: nothing to declare

    class Attributes(Scenario):
        name = "AttributesUndeclared"

        def foundation_attributes(self):
            return {}

    with pytest.raises(TypeError, match=r"'Attributes' defines \['foundation_attributes'\].*FoundationScenarioHooks"):
        scenario_registry.add(Attributes)
    assert not scenario_registry.has("AttributesUndeclared")
    registries.check_scenario(WoodAndStoneScenario)
    assert registries.check_component in component_registry.checks
    assert registries.check_scenario in scenario_registry.checks
