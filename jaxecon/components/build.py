"""Build: mobile agents turn 1 Wood + 1 Stone into a House and earn coin.

Follows ``ai_economist/foundation/components/build.py``.

Action (mobile agents): one subspace ``Build`` with 1 action (1 = build on
the agent's tile). An agent can build iff it holds >= 1 Wood and >= 1 Stone
and its tile holds nothing (no resource, no landmark, no source block).
Building: Wood -1, Stone -1, a House owned by the agent appears on its tile,
Coin += build_payment, Labor += build_labor. Builders touch only their own
tile, so the reference's random processing order cannot change the outcome
and jaxecon builds all at once.

Skills (at reset, per agent): ``skill_dist`` "none" -> skill 1, pay rate 1;
"pareto" -> skill ~ Lomax(4) (numpy's ``pareto(4)``); "lognormal" -> skill ~
LogNormal(-1, 0.5); pay rate = min(PMSM, (PMSM - 1) * skill + 1) with PMSM =
payment_max_skill_multiplier; build_payment = pay rate * payment (coin).

State: ``state.components["Build"]`` is a ``BuildState`` (payments, skills,
build counts). A scenario that assigns payments (``fixed_four_skill_and_loc``,
``split_layout``) writes them through ``Build.with_payments``.
Observations (mobile): ``build_payment`` = build_payment / payment (0 when
payment is 0, where Foundation divides by zero, quirk Q14), ``build_skill``.
Mask (mobile): ``[can_build]``. Metrics: ``<i>/n_builds``, ``total_builds``
(tiles with a House).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE, SKILL_DISTS, sample_skills
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box



@struct.dataclass
class BuildState:
    """Build's sub-state, ``state.components["Build"]`` (``n`` = n_agents).

    Attributes:
        build_payment: float [n] coin earned per house built (pay rate x payment).
        build_skill: float [n] the sampled skill (what the agent observes; 1
            with ``skill_dist="none"``).
        n_builds: int32 [n] houses built this episode.
        built: bool [n] whether the agent built on the last step (dense log).
    """

    build_payment: jax.Array
    build_skill: jax.Array
    n_builds: jax.Array
    built: jax.Array


@struct.dataclass
class BuildParams:
    """Numeric parameters of Build.

    Attributes:
        payment: float [] coin per house at pay rate 1 (Foundation casts to int).
        payment_max_skill_multiplier: float [] the largest pay rate (>= 1).
        build_labor: float [] labor per house.
    """

    payment: float = bounded(10.0, minimum=0)
    payment_max_skill_multiplier: float = bounded(1.0, minimum=1)
    build_labor: float = bounded(10.0, minimum=0)


def sample_skill(key, skill_dist: str, shape, pmsm):
    """(skill, pay_rate) float arrays of ``shape`` for a Build/Gather-style skill draw."""
    f = float_dtype()
    if skill_dist == "none":
        return jnp.ones(shape, f), jnp.ones(shape, f)
    if skill_dist == "pareto":
        skill = jax.random.pareto(key, 4.0, shape, dtype=f) - 1.0  # Lomax(4), numpy's pareto(4)
    else:
        skill = jnp.exp(-1.0 + 0.5 * jax.random.normal(key, shape, dtype=f))
    return skill, jnp.minimum(pmsm, (pmsm - 1) * skill + 1)


@component_registry.add
class Build(Component, FoundationComponentHooks):
    """Build houses from wood and stone for coin (see module docstring).

    Args (Foundation's, with defaults):
        payment: int >= 0 (10) coin per house at pay rate 1.
        payment_max_skill_multiplier: int >= 1 (1).
        skill_dist: "none" | "pareto" | "lognormal" ("none").
        build_labor: float >= 0 (10.0).
    Raises:
        ValueError: for values outside those ranges.
    """

    name = "Build"
    component_type = "Build"
    required_entities = ("Wood", "Stone", "Coin", "House", "Labor")
    agent_subclasses = (MOBILE,)
    draws_skills = True
    Params = BuildParams

    def __init__(self, spec, payment=10, payment_max_skill_multiplier=1, skill_dist="none", build_labor=10.0):
        super().__init__(spec)
        self.payment = bound_of(BuildParams, "payment").check_int("Build.payment", payment)
        self.payment_max_skill_multiplier = bound_of(BuildParams, "payment_max_skill_multiplier").check_int(
            "Build.payment_max_skill_multiplier", payment_max_skill_multiplier
        )
        self.skill_dist = cfg.check_choice("Build.skill_dist", skill_dist, SKILL_DISTS)
        self.build_labor = bound_of(BuildParams, "build_labor").check_float("Build.build_labor", build_labor)

    def default_params(self):
        return BuildParams(
            payment=float(self.payment),
            payment_max_skill_multiplier=float(self.payment_max_skill_multiplier),
            build_labor=self.build_labor,
        )

    def get_n_actions(self, agent_cls_name):
        return 1 if agent_cls_name == MOBILE else None

    def init(self, key, params) -> BuildState:
        n, f = self.n_agents, float_dtype()
        return BuildState(
            build_payment=jnp.zeros(n, f),
            build_skill=jnp.ones(n, f),
            n_builds=jnp.zeros(n, jnp.int32),
            built=jnp.zeros(n, bool),
        )

    def reset(self, key, state: EnvState, params: BuildParams):
        skill, pay_rate = sample_skills(
            key, self.spec.agent_groups, self.name, self.skill_dist,
            lambda k, dist, n: sample_skill(k, dist, (n,), params.payment_max_skill_multiplier),
        )
        sub = self.init(key, params).replace(build_payment=pay_rate * params.payment, build_skill=skill)
        return self.with_sub_state(state, sub)

    def with_payments(self, state: EnvState, build_payment: jax.Array) -> EnvState:
        """``state`` with every agent's coin per house set to ``build_payment``
        (float [n], coin; cast to ``BuildState.build_payment``'s dtype).

        The owner's writer for scenarios that assign payments by skill rank
        (Foundation's ``fixed_four_skill_and_loc`` and ``split_layout`` set
        ``agent.state["build_payment"]`` in their ``additional_reset_steps``).
        """
        sub = self.sub_state(state)
        sub = sub.replace(build_payment=jnp.asarray(build_payment, sub.build_payment.dtype))
        return self.with_sub_state(state, sub)

    def can_build(self, state: EnvState) -> jax.Array:
        """bool [n]: holds Wood and Stone and stands on an empty tile."""
        h, w = self.world_size
        r, c = state.loc[:, 0], state.loc[:, 1]
        placed = (r >= 0) & (c >= 0)
        rr, cc = jnp.clip(r, 0, h - 1), jnp.clip(c, 0, w - 1)
        occupied = jnp.zeros(r.shape, bool)
        for k in self.spec.map_keys:
            occupied = occupied | (state.maps[k][rr, cc] > 0)
        has = (state.inventory["Wood"] >= 1) & (state.inventory["Stone"] >= 1)
        return has & placed & ~occupied

    def step(self, key, state: EnvState, actions, params: BuildParams):
        h, w = self.world_size
        sub: BuildState = self.sub_state(state)
        build = (actions.mobile["Build"] == 1) & self.can_build(state)
        rows = jnp.where(build, state.loc[:, 0], h)  # h = out of bounds -> dropped
        cols = state.loc[:, 1]
        idx = jnp.arange(self.n_agents, dtype=jnp.int32)
        maps = {**state.maps, "House": state.maps["House"].at[rows, cols].set(1.0, mode="drop")}
        own = state.owner["House"]
        owner = {**state.owner, "House": own.at[rows, cols].set(idx.astype(own.dtype), mode="drop")}
        b = build.astype(float_dtype())
        inventory = {
            **state.inventory,
            "Wood": state.inventory["Wood"] - b,
            "Stone": state.inventory["Stone"] - b,
            "Coin": state.inventory["Coin"] + b * sub.build_payment,
        }
        endogenous = {**state.endogenous, "Labor": state.endogenous["Labor"] + b * params.build_labor}
        sub = sub.replace(n_builds=sub.n_builds + build.astype(jnp.int32), built=build)
        return self.with_sub_state(
            state,
            sub,
            maps=maps,
            owner=owner,
            inventory=inventory,
            endogenous=endogenous,
        )

    def observe(self, state: EnvState, params: BuildParams):
        sub: BuildState = self.sub_state(state)
        pay = jnp.where(params.payment > 0, sub.build_payment / jnp.where(params.payment > 0, params.payment, 1.0), 0.0)
        return Observed(mobile={"build_payment": pay, "build_skill": sub.build_skill})

    def observation_spaces(self):
        """``build_payment`` float [] in [0, payment_max_skill_multiplier]
        (the pay rate, clipped to PMSM at reset; 0 when payment is 0; PMSM as
        given at construction; widened by ``ROUNDING_SLACK`` for the
        division); ``build_skill`` float [] in [0, inf) with
        "pareto" (Lomax) or "lognormal" skills, exactly 1 with "none"."""
        f = float_dtype()
        skill = Box(1.0, 1.0, (), f) if self.skill_dist == "none" else Box(0.0, np.inf, (), f)
        pay = Box(0.0, float(self.payment_max_skill_multiplier), (), f).widen()
        return Observed(mobile={"build_payment": pay, "build_skill": skill})

    def masks(self, state: EnvState, params):
        return PerKind(mobile={"Build": self.can_build(state)[:, None]})

    def metrics(self, state: EnvState, params):
        sub: BuildState = self.sub_state(state)
        out = {"{i}/n_builds": sub.n_builds}  # Foundation's "<i>/n_builds", per agent (metric_keys)
        out["total_builds"] = jnp.sum(state.maps["House"] > 0)
        return out

    def dense_log_entry(self, prev_state, state):
        sub: BuildState = self.sub_state(state)
        built = np.asarray(sub.built)
        loc = np.asarray(state.loc)
        pay = np.asarray(sub.build_payment)
        return [
            {"builder": int(i), "loc": [int(loc[i, 0]), int(loc[i, 1])], "income": float(pay[i])}
            for i in np.flatnonzero(built)
        ]

    def agent_state_fields(self, state):
        sub: BuildState = self.sub_state(state)
        return {"build_payment": np.asarray(sub.build_payment), "build_skill": np.asarray(sub.build_skill)}

    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with ``BuildState`` read from a live Foundation ``Build``:
        payments and skills from the agents' ``state`` (``build_payment``,
        ``build_skill``; the component's ``sampled_skills`` where it has them),
        ``n_builds`` counted from its ``builds`` log; ``built`` all False."""
        agents = list(ref_env.world.agents)
        n_builds = np.zeros(self.n_agents, np.int32)
        for step_builds in ref_component.builds:
            for b in step_builds:
                n_builds[int(b["builder"])] += 1
        sampled = ref_component.sampled_skills
        f = float_dtype()
        sub = BuildState(
            build_payment=jnp.asarray(np.array([a.state["build_payment"] for a in agents], np.float64), f),
            build_skill=jnp.asarray(
                np.array([sampled.get(a.idx, a.state["build_skill"]) for a in agents], np.float64), f
            ),
            n_builds=jnp.asarray(n_builds),
            built=jnp.zeros(self.n_agents, bool),
        )
        return self.with_sub_state(state, sub)
