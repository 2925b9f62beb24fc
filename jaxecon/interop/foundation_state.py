"""Copy the complete state of a live Foundation environment into an ``EnvState``.

Reads the reference's objects as ``ai_economist/foundation/base/{world,base_agent,
base_env}.py`` define them: ``world.maps`` (House as ``{owner, health}``),
agents' ``state`` dicts (loc, inventory, escrow, endogenous, component
fields), ``world.timestep``, ``env._completions``, and each component's
internals through a loader in ``COMPONENT_LOADERS`` (one per component name;
``register_component_loader`` adds yours). The reference environment must
have been built with the same configuration as the jaxecon one.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.state import EnvState, float_dtype

#: component name -> loader(jax_component, ref_component, ref_env, state) -> sub-state.
COMPONENT_LOADERS: dict[str, Callable] = {}


def register_component_loader(name: str):
    """Decorator: register ``fn(component, ref_component, ref_env, state) -> sub-state``."""

    def deco(fn):
        COMPONENT_LOADERS[name] = fn
        return fn

    return deco


def _copy(x, dtype):
    """A JAX array holding a copy of ``x`` (``jnp.asarray`` may alias a numpy
    buffer on CPU, and the reference mutates its maps in place)."""
    return jnp.array(np.array(x, copy=True), dtype=dtype)


def _agents(ref_env):
    return list(ref_env.world.agents)


def _per_agent(ref_env, getter, dtype=None):
    return jnp.asarray(np.array([getter(a) for a in _agents(ref_env)], dtype=np.float64), dtype or float_dtype())


@register_component_loader("Build")
def _load_build(comp, ref_comp, ref_env, state):
    n_builds = np.zeros(comp.n_agents, np.int32)
    for step in getattr(ref_comp, "builds", []):
        for b in step:
            n_builds[int(b["builder"])] += 1
    sampled = getattr(ref_comp, "sampled_skills", {})
    return {
        "build_payment": _per_agent(ref_env, lambda a: a.state["build_payment"]),
        "build_skill": _per_agent(ref_env, lambda a: sampled.get(a.idx, a.state["build_skill"])),
        "n_builds": jnp.asarray(n_builds),
        "built": jnp.zeros(comp.n_agents, bool),
    }


@register_component_loader("Gather")
def _load_gather(comp, ref_comp, ref_env, state):
    sub = dict(state.components[comp.name])
    sub["bonus_gather_prob"] = _per_agent(ref_env, lambda a: a.state["bonus_gather_prob"])
    return sub


def _load_scenario(env, ref_env, state):
    sub = dict(state.scenario)
    # wood-and-stone: curr_optimization_metric; one-step-economy: curr_optimization_metrics
    # (keyed by str(idx) before its first reset, by idx after).
    m = getattr(ref_env, "curr_optimization_metric", getattr(ref_env, "curr_optimization_metrics", None))
    if "curr_metric" in sub and m is not None:
        vals = [m[k] if k in m else m[str(k)] for k in [a.idx for a in _agents(ref_env)] + [ref_env.world.planner.idx]]
        sub["curr_metric"] = jnp.asarray(np.array(vals, np.float64), float_dtype())
    if "auto_warmup_integrator" in sub and hasattr(ref_env, "_auto_warmup_integrator"):
        sub["auto_warmup_integrator"] = jnp.asarray(ref_env._auto_warmup_integrator, jnp.int32)
    return sub


def state_from_foundation(env, ref_env, params=None, key=None) -> EnvState:
    """An ``EnvState`` of the functional ``env`` equal to ``ref_env``'s current state.

    Args:
        env: a jaxecon functional environment (``jaxecon.make(...)``).
        ref_env: a live ``ai_economist`` environment built with the same config.
        params: ``EnvParams`` (default ``env.default_params``).
        key: PRNG key for building the state template (irrelevant to values).
    Raises:
        ValueError: if the two environments' sizes or components differ.
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
    agents = _agents(ref_env)
    planner = ref_env.world.planner
    state = state.replace(
        timestep=jnp.asarray(ref_env.world.timestep, jnp.int32),
        completions=jnp.asarray(ref_env._completions, jnp.int32),
        maps=maps,
        owner=owner,
        loc=jnp.asarray(np.array([a.loc for a in agents], np.int64), jnp.int32),
        inventory={r: _per_agent(ref_env, lambda a, r=r: a.state["inventory"][r]) for r in env.resources},
        escrow={r: _per_agent(ref_env, lambda a, r=r: a.state["escrow"][r]) for r in env.resources},
        endogenous={e: _per_agent(ref_env, lambda a, e=e: a.state["endogenous"][e]) for e in env.endogenous},
        planner_inventory={r: jnp.asarray(float(planner.state["inventory"][r]), f) for r in env.resources},
        planner_escrow={r: jnp.asarray(float(planner.state["escrow"][r]), f) for r in env.resources},
    )
    for comp, ref_comp in zip(env.components, ref_env.components):
        if comp.name in COMPONENT_LOADERS:
            sub = COMPONENT_LOADERS[comp.name](comp, ref_comp, ref_env, state)
            state = state.replace(components={**state.components, comp.name: sub})
        else:
            state = comp.load_foundation_state(ref_comp, ref_env, state)
    if isinstance(state.scenario, dict):
        return state.replace(scenario=_load_scenario(env, ref_env, state))
    return env.load_foundation_state(ref_env, state)


def load_foundation_state(env, ref_env) -> None:
    """Copy ``ref_env``'s complete state into the stateful shim env ``env``.

    Args:
        env: a ``jaxecon.foundation`` environment (from ``make_env_instance``)
            with the same config as ``ref_env``.
        ref_env: a live ``ai_economist`` environment.
    After this call both continue from one identical state.
    """
    env.state = state_from_foundation(env.core, ref_env, env.params)
