"""SimpleLabor: mobile agents choose how many hours to work and earn skill x hours.

Follows ``ai_economist/foundation/components/simple_labor.py``. Meant for the
``one-step-economy`` scenario together with ``PeriodicBracketTax`` (order
``[SimpleLabor, PeriodicBracketTax]``, period 2, episode length 2: the planner
sets taxes on step 1, agents work on step 2, taxes are collected on step 2).

Action (mobile agents): one subspace ``SimpleLabor`` with 100 actions; local
action k (1..100) = work k hours: Labor := k (assigned, not accumulated),
payoff = k * skill, production += payoff, inventory Coin += payoff. NO-OP
changes nothing (Labor keeps its value). The reference processes agents in a
random order, which cannot change the outcome; jaxecon updates all at once.

Skills are drawn once, when the environment is built, as Foundation does
(quirk Q16): ``x = pareto(shape, size=(1000, n))`` (Lomax), ``s = min(PMSM,
(PMSM - 1) * x + 1)`` with PMSM = payment_max_skill_multiplier, each row sorted,
averaged over rows, so agent 0 is the least skilled. jaxecon draws ``x`` from
``numpy.random.RandomState(seed)`` with the environment's ``seed`` kwarg (0 when
None), so an environment built with ``seed=s`` gets exactly the skills of
Foundation's env built with ``seed=s`` when SimpleLabor is the first component
that draws at construction (true for one-step-economy). The skills are the
traced ``Params.skills`` leaf: vmap or differentiate over them, or replace them.

Shape: Foundation samples with shape 4 whatever ``pareto_param`` says (Q16).
jaxecon uses ``pareto_param`` (the corrected behaviour) unless
``reference_pareto_shape_bug=True``; with the default ``pareto_param=4.0`` both
agree.

Masks (mobile): all 100 actions valid, except in the reset observation when
``mask_first_step`` (the default), where all are masked (only NO-OP is valid;
step 1 belongs to the planner). Foundation implements this with a flag that
its first ``generate_masks`` call after reset clears (Q32: an extra
observation call changes later masks); in jaxecon the flag is the state field
``is_first_step``, set by reset and cleared by the first step, so masks are a
pure function of the state.

Observation (mobile): ``skill`` = skill / payment_max_skill_multiplier.
No metrics, no dense log.

State: ``state.components["SimpleLabor"]`` is a ``SimpleLaborState`` (fields
below); the one-step economy's planner reads its ``production``.

Usage::

    env = jaxecon.make("one-step-economy", n_agents=4, world_size=[1, 1],
                       episode_length=2, seed=1,
                       components=[("SimpleLabor", {}),
                                   ("PeriodicBracketTax", {"period": 2})])
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core.numerics import unfused
from jaxecon.core import validators as cfg
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

NUM_LABOR_HOURS = 100
N_SKILL_SAMPLES = 1000


def sample_skills(rng: np.random.RandomState, n_agents: int, shape: float, pmsm: float) -> np.ndarray:
    """float64 [n] ranked skills, as ``SimpleLabor.__init__`` computes them."""
    x = rng.pareto(shape, size=(N_SKILL_SAMPLES, n_agents))
    clipped = np.minimum(pmsm, (pmsm - 1) * x + 1)
    return np.sort(clipped, axis=1).mean(axis=0)


def _f(x):
    """Numbers from Foundation as a float array of ``float_dtype()``."""
    return jnp.asarray(np.array(x, dtype=np.float64), float_dtype())


@struct.dataclass
class SimpleLaborParams:
    """Numeric parameters of SimpleLabor.

    Attributes:
        skills: float [n] coin per hour of each agent (drawn at construction).
        payment_max_skill_multiplier: float [] observation scale (and skill cap
            used when the skills were drawn).
    """

    skills: np.ndarray = struct.field(default_factory=lambda: np.ones(1))
    payment_max_skill_multiplier: float = 3.0


@struct.dataclass
class SimpleLaborState:
    """SimpleLabor's sub-state, ``state.components["SimpleLabor"]``.

    Attributes:
        skill: float [n] each agent's wage (coin per hour of labor);
            ``Params.skills`` at reset.
        production: float [n] pre-tax income earned this episode (coin).
        is_first_step: bool [] True from reset until the first step (masks
            all labor actions in the reset observation).
    """

    skill: jax.Array
    production: jax.Array
    is_first_step: jax.Array


@component_registry.add
class SimpleLabor(Component, FoundationComponentHooks):
    """Choose hours of labor for skill-proportional pay (see module docstring).

    Args (Foundation's, with defaults):
        mask_first_step: bool (True) mask all labor actions in the reset observation.
        payment_max_skill_multiplier: float (3) skill cap.
        pareto_param: float > 0 (4.0) Lomax shape of the skill draw.
        reference_pareto_shape_bug: bool (False), jaxecon only: sample with
            shape 4 regardless of ``pareto_param``, as Foundation does (Q16).
    Raises:
        ValueError: ``mask_first_step`` not a bool, ``pareto_param`` <= 0.
    """

    name = "SimpleLabor"
    component_type = None
    required_entities = ("Coin",)
    agent_subclasses = (MOBILE,)
    Params = SimpleLaborParams

    def __init__(
        self,
        spec,
        mask_first_step=True,
        payment_max_skill_multiplier=3,
        pareto_param=4.0,
        reference_pareto_shape_bug=False,
    ):
        super().__init__(spec)
        if not isinstance(mask_first_step, bool):
            raise ValueError(f"SimpleLabor.mask_first_step must be True or False, got {mask_first_step!r}")
        self.mask_first_step = mask_first_step
        self.payment_max_skill_multiplier = cfg.check_float(
            "SimpleLabor.payment_max_skill_multiplier", payment_max_skill_multiplier
        )
        self.pareto_param = cfg.check_float("SimpleLabor.pareto_param", pareto_param)
        if self.pareto_param <= 0:
            raise ValueError(f"SimpleLabor.pareto_param must be > 0, got {pareto_param!r}")
        self.reference_pareto_shape_bug = cfg.check_bool(
            "SimpleLabor.reference_pareto_shape_bug", reference_pareto_shape_bug
        )
        seed = spec.seed
        shape = 4.0 if self.reference_pareto_shape_bug else self.pareto_param
        #: float64 [n] the construction-time skills (agent 0 lowest).
        self.skills = sample_skills(
            np.random.RandomState(0 if seed is None else int(seed)),
            self.n_agents,
            shape,
            self.payment_max_skill_multiplier,
        )

    def default_params(self):
        return SimpleLaborParams(
            skills=np.array(self.skills, dtype=np.float64),
            payment_max_skill_multiplier=self.payment_max_skill_multiplier,
        )

    def get_n_actions(self, agent_cls_name):
        return NUM_LABOR_HOURS if agent_cls_name == MOBILE else None

    def init(self, key, params) -> SimpleLaborState:
        n, f = self.n_agents, float_dtype()
        return SimpleLaborState(
            skill=jnp.zeros(n, f),
            production=jnp.zeros(n, f),
            is_first_step=jnp.ones((), bool),
        )

    def reset(self, key, state: EnvState, params: SimpleLaborParams):
        sub = self.init(key, params).replace(
            skill=jnp.asarray(params.skills, float_dtype()) * jnp.ones(self.n_agents, float_dtype())
        )
        return self.with_sub_state(state, sub)

    def step(self, key, state: EnvState, actions, params):
        f = float_dtype()
        sub = self.sub_state(state)
        hours = actions.mobile[self.name]
        work = (hours >= 1) & (hours <= NUM_LABOR_HOURS)
        h = hours.astype(f)
        payoff = unfused(jnp.where(work, h * sub.skill, 0.0))  # rounded as numpy does
        labor = jnp.where(work, h, state.endogenous["Labor"])
        sub = sub.replace(
            production=jnp.where(work, sub.production + payoff, sub.production),
            is_first_step=jnp.zeros((), bool),
        )
        coin = jnp.where(work, state.inventory["Coin"] + payoff, state.inventory["Coin"])
        return self.with_sub_state(
            state,
            sub,
            inventory={**state.inventory, "Coin": coin},
            endogenous={**state.endogenous, "Labor": labor},
        )

    def production(self, state: EnvState) -> jax.Array:
        """float [n]: each mobile agent's pre-tax income this episode (coin), the
        contract the one-step economy reads for its planner's welfare weights."""
        return self.sub_state(state).production

    def observe(self, state: EnvState, params):
        sub = self.sub_state(state)
        return Observed(mobile={"skill": sub.skill / params.payment_max_skill_multiplier})

    def observation_spaces(self):
        """``skill`` float []: skill / payment_max_skill_multiplier in [0, 1]
        when PMSM >= 1 (the construction-time skills are averages of values
        clipped to PMSM; 0 before the first reset; widened by ``ROUNDING_SLACK``
        for the division), else unbounded. Skills
        replaced through ``Params.skills`` above PMSM leave the space."""
        f = float_dtype()
        if self.payment_max_skill_multiplier >= 1:
            return Observed(mobile={"skill": Box(0.0, 1.0, (), f).widen()})
        return Observed(mobile={"skill": Box(-np.inf, np.inf, (), f)})

    def masks(self, state: EnvState, params):
        off = self.mask_first_step & self.sub_state(state).is_first_step
        m = jnp.broadcast_to(~off, (self.n_agents, NUM_LABOR_HOURS))
        return PerKind(mobile={self.name: m})

    def agent_state_fields(self, state):
        sub = self.sub_state(state)
        return {"skill": np.asarray(sub.skill), "production": np.asarray(sub.production)}

    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with this sub-state copied from Foundation's live component
        and agents (``agent.state["skill"]``, ``["production"]``, the
        component's ``is_first_step``)."""
        agents = list(ref_env.world.agents)
        # jaxecon's flag means "this state's observation still shows the first-step
        # mask"; Foundation's means "the next generate_masks call is the first", and
        # the reset observation has already cleared it.
        first = bool(ref_component.is_first_step) or int(ref_env.world.timestep) == 0
        sub = SimpleLaborState(
            skill=_f([a.state["skill"] for a in agents]),
            production=_f([a.state["production"] for a in agents]),
            is_first_step=jnp.asarray(first),
        )
        return self.with_sub_state(state, sub)
