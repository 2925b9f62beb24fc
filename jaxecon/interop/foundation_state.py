"""Copy the complete state of a live Foundation environment into an ``EnvState``.

Reads the reference's objects as ``ai_economist/foundation/base/{world,base_agent,
base_env}.py`` define them: ``world.maps`` (House as ``{owner, health}``),
agents' ``state`` dicts (loc, inventory, escrow, endogenous), ``world.timestep``
and ``env._completions``. Each component's internals are read by that
component's own ``load_foundation_state(ref_component, ref_env, state)``
(declared on ``jaxecon.interop.foundation_hooks.FoundationComponentHooks``),
in list order, and the scenario's by the scenario's
``load_foundation_state(ref_env, state)`` (``FoundationScenarioHooks``), last. The reference
environment must have been built with the same configuration as the jaxecon one.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.state import EnvState, float_dtype
from jaxecon.interop.foundation_hooks import load_component_state, load_scenario_state


def _copy(x, dtype):
    """A JAX array holding a copy of ``x`` (``jnp.asarray`` may alias a numpy
    buffer on CPU, and the reference mutates its maps in place)."""
    return jnp.array(np.array(x, copy=True), dtype=dtype)


def _per_agent(agents, getter) -> jax.Array:
    """float [n]: ``getter(agent)`` of each reference mobile agent, in index order."""
    return jnp.asarray(np.array([getter(a) for a in agents], dtype=np.float64), float_dtype())


def state_from_foundation(env, ref_env, params=None, key=None) -> EnvState:
    """An ``EnvState`` of the functional ``env`` equal to ``ref_env``'s current state.

    Args:
        env: a jaxecon functional environment (``jaxecon.make(...)``).
        ref_env: a live ``ai_economist`` environment built with the same config.
        params: ``EnvParams`` (default ``env.default_params``).
        key: PRNG key for building the state template (irrelevant to values).
    Raises:
        ValueError: if the two environments' sizes or components differ.
        NotImplementedError: if a component or the scenario keeps a sub-state
            but defines no ``load_foundation_state``.
    """
    params = env.default_params if params is None else params
    key = jax.random.key(0) if key is None else key
    if ref_env.n_agents != env.n_agents or list(ref_env.world_size) != list(env.world_size):
        raise ValueError(
            f"ref_env has n_agents={ref_env.n_agents}, world_size={list(ref_env.world_size)}; "
            f"env has n_agents={env.n_agents}, world_size={list(env.world_size)}"
        )
    ref_names = [c.name for c in ref_env.components]
    if ref_names != [c.name for c in env.components]:
        raise ValueError(f"ref_env components {ref_names} differ from env's {[c.name for c in env.components]}")
    f = float_dtype()
    state = env.init_state(key, params)
    maps, owner = {}, {}
    for k in env.map_keys:
        maps[k] = _copy(ref_env.world.maps.get(k), f)
        if k in env.private_landmarks:
            owner[k] = _copy(ref_env.world.maps.get(k, owner=True), state.owner[k].dtype)
    agents = list(ref_env.world.agents)
    planner = ref_env.world.planner
    state = state.replace(
        timestep=jnp.asarray(ref_env.world.timestep, jnp.int32),
        completions=jnp.asarray(ref_env._completions, jnp.int32),
        maps=maps,
        owner=owner,
        loc=jnp.asarray(np.array([a.loc for a in agents], np.int64), jnp.int32),
        inventory={r: _per_agent(agents, lambda a, r=r: a.state["inventory"][r]) for r in env.resources},
        escrow={r: _per_agent(agents, lambda a, r=r: a.state["escrow"][r]) for r in env.resources},
        endogenous={e: _per_agent(agents, lambda a, e=e: a.state["endogenous"][e]) for e in env.endogenous},
        planner_inventory={r: jnp.asarray(float(planner.state["inventory"][r]), f) for r in env.resources},
        planner_escrow={r: jnp.asarray(float(planner.state["escrow"][r]), f) for r in env.resources},
    )
    for comp, ref_comp in zip(env.components, ref_env.components):
        state = load_component_state(comp, ref_comp, ref_env, state)
    return load_scenario_state(env.scenario, ref_env, state)


def load_foundation_state(env, ref_env) -> None:
    """Copy ``ref_env``'s complete state into the stateful shim env ``env``.

    Args:
        env: a ``jaxecon.foundation`` environment (from ``make_env_instance``)
            with the same config as ``ref_env``.
        ref_env: a live ``ai_economist`` environment.
    After this call both continue from one identical state.
    """
    env.state = state_from_foundation(env.core, ref_env, env.params)
