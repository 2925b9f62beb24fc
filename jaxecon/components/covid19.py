"""COVID-19 policy components: state stringency, federal subsidies, vaccine deliveries.

Follows ``ai_economist/foundation/components/covid19_components.py`` (Trott et
al., "Building a Foundation for Data-Driven, Interpretable, and Robust Policy
Design using the AI Economist", arXiv:2108.02904). These components only work
inside the ``CovidAndEconomySimulation`` scenario
(``jaxecon/scenarios/covid19``), which gives them, as Foundation's ``world``
does, its static facts as ``spec.scenario`` (``n_stringency_levels``,
``start_date``, ``use_real_world_policies``, ``real_world_stringency_policy``,
``real_world_subsidy``, ``initial_stringency_level``, ``float32_rounding``) and
two per-episode world attributes in its state, which the components read by
name: ``state.scenario.us_state_population`` (float [n] people) and
``state.scenario.us_population`` (float [] people), copied from the
scenario's params at reset.

What Foundation's components write into the world's global state lives in
their own sub-states, and the scenario reads it through their accessors:
``ControlUSStateOpenCloseStatus.stringency_level`` (Foundation's
``global_state["Stringency Level"][t]``) and
``FederalGovernmentSubsidy.subsidy`` (``global_state["Subsidy"][t]``); the
scenario uses up the delivered vaccines through
``VaccinationCampaign.with_vaccines_administered``.

There are n = 51 mobile agents (the US states and DC) and the planner (the
federal government). No randomness anywhere.

Numerics: Foundation keeps its world arrays in float32 and mixes float32 and
float64 arithmetic. Under ``jax_enable_x64`` jaxecon computes in float64 and
rounds with ``as_float32`` exactly where Foundation's float32 arrays round, so
the dynamics agree to the last float32 bit; without x64 everything is float32.
The scenario's static ``float32_rounding=False`` (``spec.scenario``) switches
that rounding (and the integer truncation of the subsidy level) off, so that
under x64 the model is a smooth float64 function: the one whose derivative
``jax.grad`` returns in both modes (the rounding passes gradients through
unchanged), and the one finite differences can check.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE, PLANNER
from jaxecon.core.numerics import as_float32, straight_through_trunc
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

__all__ = [
    "ControlUSStateOpenCloseStatus",
    "ControlUSStateOpenCloseStatusState",
    "FederalGovernmentSubsidy",
    "FederalGovernmentSubsidyParams",
    "FederalGovernmentSubsidyState",
    "VaccinationCampaign",
    "VaccinationCampaignParams",
    "VaccinationCampaignState",
]

@runtime_checkable
class CovidWorld(Protocol):
    """The static facts of a scenario (its ``spec.scenario``) that the COVID-19
    components read: the contract between them and their scenario
    (``CovidAndEconomySimulation`` provides it)."""

    n_stringency_levels: int
    start_date: Any
    use_real_world_policies: bool
    real_world_stringency_policy: Any
    real_world_subsidy: Any
    initial_stringency_level: int
    float32_rounding: bool


def _require_covid_world(spec, who):
    """The scenario's static facts (``spec.scenario``), checked to be a ``CovidWorld``.

    Raises:
        ValueError: the scenario does not provide ``CovidWorld``.
    """
    world = spec.scenario
    if not isinstance(world, CovidWorld):
        raise ValueError(
            f"{who} only works inside the CovidAndEconomySimulation scenario (it needs the world "
            f"attributes of jaxecon.components.covid19.CovidWorld); got scenario {spec.scenario_name!r}"
        )
    return world


# --------------------------------------------------------------------------
# ControlUSStateOpenCloseStatus
# --------------------------------------------------------------------------


@struct.dataclass
class ControlUSStateOpenCloseStatusState:
    """Sub-state of ControlUSStateOpenCloseStatus (``state.components["ControlUSStateOpenCloseStatus"]``).

    Attributes:
        action_in_cooldown_until: int32 [n] timestep until which each state's
            actions are masked (Foundation's ``action_in_cooldown_until``).
        stringency_level: float [n] open/close level of each state at the
            current timestep, whole levels (Foundation's
            ``global_state["Stringency Level"][t]``); at reset the level
            recorded on the start date.
        carried_level: float [n] the level at the last step of the last
            episode that took one (what Foundation's ``agent.state`` shows at
            timestep 0 of a later episode, see ``carry_over``); 0 before any.
        carried: bool [] whether an earlier episode took a step (so
            ``carried_level`` is shown at timestep 0).
    """

    action_in_cooldown_until: jax.Array
    stringency_level: jax.Array
    carried_level: jax.Array
    carried: jax.Array


@component_registry.add
class ControlUSStateOpenCloseStatus(Component, FoundationComponentHooks):
    """Each US state sets its open/close stringency level (1 = open .. n_levels = closed).

    Args (Foundation's, with defaults):
        n_stringency_levels: int >= 2 (10); must equal the data's
            ``NUM_STRINGENCY_LEVELS`` (Foundation checks at the first step;
            jaxecon at construction).
        action_cooldown_period: int >= 0 (28) days during which a state that
            changed its level cannot change it again.
    Raises:
        ValueError: bad values, or used outside ``CovidAndEconomySimulation``.

    Action (mobile agents): subspace ``ControlUSStateOpenCloseStatus`` with
    ``n_stringency_levels`` actions; local action k >= 1 sets the level to k,
    NO-OP (0) keeps it. With ``use_real_world_policies`` the actions are ignored
    and the level at step t is the recorded policy of day ``start + t - 1``.

    Step t (``component_step``): level[t] = level[t-1] if action == 0 else
    action; if t == cooldown_until + 1 the cooldown moves on by 1 (NO-OP) or by
    ``action_cooldown_period`` (a change). Masks are advisory (an action in
    cooldown is applied, but moves no cooldown), as in Foundation.

    Masks (mobile, bool [n, n_levels]): all True with real-world policies; else
    False while ``timestep < cooldown_until``.

    Observations: mobile agents: ``agent_policy_indicators`` float [n] = level /
    n_levels (each state its own); the planner: the same float [n] vector.

    State: ``ControlUSStateOpenCloseStatusState``; the scenario reads the
    level through ``stringency_level(state)``.
    """

    name = "ControlUSStateOpenCloseStatus"
    component_type = None
    required_entities = ()
    agent_subclasses = (MOBILE,)

    def __init__(self, spec, n_stringency_levels=10, action_cooldown_period=28):
        super().__init__(spec)
        world = _require_covid_world(spec, self.name)
        self.n_stringency_levels = cfg.check_int(
            "ControlUSStateOpenCloseStatus.n_stringency_levels", n_stringency_levels, minimum=2
        )
        if self.n_stringency_levels != int(world.n_stringency_levels):
            raise ValueError(
                "ControlUSStateOpenCloseStatus.n_stringency_levels must equal the data's "
                f"NUM_STRINGENCY_LEVELS={world.n_stringency_levels} (the model was fitted with it), "
                f"got {n_stringency_levels!r}"
            )
        self.action_cooldown_period = cfg.check_int(
            "ControlUSStateOpenCloseStatus.action_cooldown_period", action_cooldown_period, minimum=0
        )
        self.use_real_world_policies = bool(world.use_real_world_policies)
        if self.use_real_world_policies:
            #: int32 [episode_length, n]: the recorded level applied at step t is row t-1.
            self.real_world_policy = np.asarray(world.real_world_stringency_policy, np.int32)
        #: float64 [n]: the level recorded on the start date (the level at reset).
        self.initial_stringency_level = np.asarray(world.initial_stringency_level, np.float64)
        #: bool: round to float32 where Foundation does (the scenario's ``float32_rounding``).
        self.float32_rounding = bool(world.float32_rounding)

    def get_n_actions(self, agent_cls_name):
        return self.n_stringency_levels if agent_cls_name == MOBILE else None

    def stringency_level(self, state: EnvState) -> jax.Array:
        """float [n]: each state's open/close level at ``state.timestep``
        (Foundation's ``global_state["Stringency Level"][t]``)."""
        return self.sub_state(state).stringency_level

    def init(self, key, params):
        return ControlUSStateOpenCloseStatusState(
            action_in_cooldown_until=jnp.zeros(self.n_agents, jnp.int32),
            stringency_level=jnp.zeros(self.n_agents, float_dtype()),
            carried_level=jnp.zeros(self.n_agents, float_dtype()),
            carried=jnp.zeros((), bool),
        )

    def reset(self, key, state: EnvState, params):
        sub = ControlUSStateOpenCloseStatusState(
            action_in_cooldown_until=jnp.full(self.n_agents, state.timestep, jnp.int32),
            stringency_level=jnp.asarray(self.initial_stringency_level, float_dtype()),
            carried_level=jnp.zeros(self.n_agents, float_dtype()),
            carried=jnp.zeros((), bool),
        )
        return self.with_sub_state(state, sub)

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """Keep the last stepped level for ``agent.state`` at timestep 0.

        Foundation writes ``agent.state["Current Open Close Stringency Level"]``
        only in ``component_step``, and its reset leaves it: timestep 0 of a
        later episode shows the level of the last step of the last episode
        that took one (``prev_state``'s level, or what ``prev_state`` itself
        carried if it took no step). The dynamics never read it.
        """
        prev = self.sub_state(prev_state)
        stepped = prev_state.timestep > 0
        sub = self.sub_state(state).replace(
            carried_level=jnp.where(stepped, prev.stringency_level, prev.carried_level),
            carried=stepped | prev.carried,
        )
        return self.with_sub_state(state, sub)

    def step(self, key, state: EnvState, actions, params):
        t = state.timestep
        sub = self.sub_state(state)
        until = sub.action_in_cooldown_until
        if self.use_real_world_policies:
            row = jnp.clip(t - 1, 0, self.real_world_policy.shape[0] - 1)
            action = jnp.asarray(self.real_world_policy)[row]
        else:
            action = actions.mobile[self.name]
        prev = sub.stringency_level
        level = jnp.where(action == 0, prev, action.astype(prev.dtype))
        at_end = t == until + 1
        until = jnp.where(
            at_end, until + jnp.where(action == 0, 1, self.action_cooldown_period), until
        ).astype(jnp.int32)
        sub = sub.replace(action_in_cooldown_until=until, stringency_level=level)
        return self.with_sub_state(state, sub)

    def observe(self, state: EnvState, params):
        ind = as_float32(self.stringency_level(state) / self.n_stringency_levels, self.float32_rounding)
        return Observed(mobile={"agent_policy_indicators": ind}, planner={"agent_policy_indicators": ind})

    def observation_spaces(self):
        """``agent_policy_indicators`` float in [0, 1] (level / n_stringency_levels,
        levels 1..n_stringency_levels; widened by ``ROUNDING_SLACK`` for the
        division): [] per mobile agent, [n] for the planner."""
        f = float_dtype()
        return Observed(mobile={"agent_policy_indicators": Box(0.0, 1.0, (), f).widen()},
                        planner={"agent_policy_indicators": Box(0.0, 1.0, (self.n_agents,), f).widen()})

    def masks(self, state: EnvState, params):
        shape = (self.n_agents, self.n_stringency_levels)
        if self.use_real_world_policies:
            return PerKind(mobile={self.name: jnp.ones(shape, bool)})
        free = state.timestep >= self.sub_state(state).action_in_cooldown_until
        return PerKind(mobile={self.name: jnp.broadcast_to(free[:, None], shape)})

    def agent_state_fields(self, state):
        """Host-side: ``{"Current Open Close Stringency Level": float32 [n]}``:
        the current level after the first step; at timestep 0 the level an
        earlier episode left (``carried_level``), or nothing in the first
        episode (Foundation sets the field in its first ``component_step`` and
        its reset keeps it, see ``carry_over``)."""
        sub = self.sub_state(state)
        if int(np.asarray(state.timestep)) > 0:
            level = self.stringency_level(state)
        elif bool(np.asarray(sub.carried)):
            level = sub.carried_level
        else:
            return {}
        return {"Current Open Close Stringency Level": np.asarray(level, np.float32)}


# --------------------------------------------------------------------------
# FederalGovernmentSubsidy
# --------------------------------------------------------------------------


@struct.dataclass
class FederalGovernmentSubsidyParams:
    """Numeric parameters of FederalGovernmentSubsidy.

    Attributes:
        max_annual_subsidy_per_person: float [] US$ per person per year paid at
            the highest subsidy level.
    """

    max_annual_subsidy_per_person: float = bounded(20000.0, minimum=0)


@struct.dataclass
class FederalGovernmentSubsidyState:
    """Sub-state of FederalGovernmentSubsidy (``state.components["FederalGovernmentSubsidy"]``).

    Attributes:
        current_subsidy_level: int32 [] the level being paid out (the
            planner's ``Current Subsidy Level``).
        total_subsidy: float [] US$ paid to all states this episode (``Total Subsidy``).
        subsidy: float [n] US$ per day each state receives at the current
            timestep (Foundation's ``global_state["Subsidy"][t]``, float32
            values); 0 at reset.
    """

    current_subsidy_level: jax.Array
    total_subsidy: jax.Array
    subsidy: jax.Array


@component_registry.add
class FederalGovernmentSubsidy(Component, FoundationComponentHooks):
    """The federal government (planner) sets a direct-payment level every ``subsidy_interval`` days.

    Args (Foundation's, with defaults):
        subsidy_interval: int >= 1 (90) days between decisions; a level is paid
            out evenly over the interval.
        num_subsidy_levels: int >= 1 (20).
        max_annual_subsidy_per_person: float >= 0 (20000) US$/person/year at the
            top level (a traced ``Params`` leaf).
        reference_subsidy_accumulation_bug: bool (False), jaxecon only. With
            real-world policies Foundation builds its table of replayed subsidy
            levels once per environment object and adds to it again in every
            episode, so episode k pays (k + 1) times the recorded subsidies (and
            eventually trips its own range assert). jaxecon rebuilds the levels
            every episode; True reproduces the accumulation.
    Raises:
        ValueError: bad values, or used outside ``CovidAndEconomySimulation``.

    Action (planner): subspace ``FederalGovernmentSubsidy`` with
    ``num_subsidy_levels`` actions, local action k = level k, NO-OP = level 0.
    It is read only at steps t with ``(t - 1) % subsidy_interval == 0``;
    otherwise the current level is kept. With ``use_real_world_policies`` the
    level at step t is the sum over recorded payments of the last
    ``subsidy_interval`` days (including day start + t - 1) of
    ``round(payment / amount_per_level)``, amount_per_level = US population x
    max_annual / levels x interval / 365.

    Step t: subsidy[t] = level / levels x max_daily_subsidy_per_state, with
    max_daily_subsidy_per_state = state population x max_annual / 365 (US$/day).

    Masks (planner, bool [levels]): all True at ``t % subsidy_interval == 0``
    or with real-world policies, else all False.

    Observations: mobile agents: ``t_until_next_subsidy`` = (interval - t % interval)
    / interval and ``current_subsidy_level`` = level / levels, float [n] (the
    same for every state); the planner: the same two as float [].

    State: ``FederalGovernmentSubsidyState``; the scenario reads the
    payments through ``subsidy(state)``.
    """

    name = "FederalGovernmentSubsidy"
    component_type = None
    required_entities = ()
    agent_subclasses = (PLANNER,)
    Params = FederalGovernmentSubsidyParams

    def __init__(
        self,
        spec,
        subsidy_interval=90,
        num_subsidy_levels=20,
        max_annual_subsidy_per_person=20000,
        reference_subsidy_accumulation_bug=False,
    ):
        super().__init__(spec)
        world = _require_covid_world(spec, self.name)
        self.subsidy_interval = cfg.check_int(
            "FederalGovernmentSubsidy.subsidy_interval", subsidy_interval, minimum=1
        )
        self.num_subsidy_levels = cfg.check_int(
            "FederalGovernmentSubsidy.num_subsidy_levels", num_subsidy_levels, minimum=1
        )
        self.max_annual_subsidy_per_person = bound_of(FederalGovernmentSubsidyParams, "max_annual_subsidy_per_person").check_float(
            "FederalGovernmentSubsidy.max_annual_subsidy_per_person", max_annual_subsidy_per_person
        )
        self.reference_subsidy_accumulation_bug = cfg.check_bool(
            "FederalGovernmentSubsidy.reference_subsidy_accumulation_bug", reference_subsidy_accumulation_bug
        )
        self.use_real_world_policies = bool(world.use_real_world_policies)
        if self.use_real_world_policies:
            #: float64 [episode_length]: recorded US$ enacted on day start + t - 1 (row t - 1).
            self.real_world_subsidy = np.asarray(world.real_world_subsidy, np.float64).reshape(-1)
        #: bool: round to float32 where Foundation does (the scenario's ``float32_rounding``).
        self.float32_rounding = bool(world.float32_rounding)

    def default_params(self):
        return FederalGovernmentSubsidyParams(max_annual_subsidy_per_person=self.max_annual_subsidy_per_person)

    def get_n_actions(self, agent_cls_name):
        return self.num_subsidy_levels if agent_cls_name == PLANNER else None

    def subsidy(self, state: EnvState) -> jax.Array:
        """float [n]: US$ per day each state receives at ``state.timestep``
        (Foundation's ``global_state["Subsidy"][t]``)."""
        return self.sub_state(state).subsidy

    def init(self, key, params):
        f = float_dtype()
        return FederalGovernmentSubsidyState(
            current_subsidy_level=jnp.zeros((), jnp.int32),
            total_subsidy=jnp.zeros((), f),
            subsidy=jnp.zeros(self.n_agents, f),
        )

    def reset(self, key, state: EnvState, params):
        return self.with_sub_state(state, self.init(key, params))

    def _real_world_level(self, state: EnvState, params):
        f = float_dtype()
        amounts = jnp.asarray(self.real_world_subsidy, f)
        per_level = (
            state.scenario.us_population * params.max_annual_subsidy_per_person
            / self.num_subsidy_levels * self.subsidy_interval / 365
        )
        day_levels = jnp.where(amounts > 0, jnp.round(amounts / per_level), 0.0)
        days = jnp.arange(amounts.shape[0])
        now = state.timestep - 1
        window = (days <= now) & (days > now - self.subsidy_interval)
        level = jnp.sum(jnp.where(window, day_levels, 0.0))
        if self.reference_subsidy_accumulation_bug:
            level = level * (1 + state.completions).astype(f)
        return level

    def step(self, key, state: EnvState, actions, params):
        f = float_dtype()
        sub = self.sub_state(state)
        t = state.timestep
        if self.use_real_world_policies:
            level = self._real_world_level(state, params)
        else:
            decide = (t - 1) % self.subsidy_interval == 0
            level = jnp.where(decide, actions.planner[self.name], sub.current_subsidy_level).astype(f)
        max_daily = state.scenario.us_state_population * params.max_annual_subsidy_per_person / 365
        daily = level / self.num_subsidy_levels * max_daily
        sub = FederalGovernmentSubsidyState(
            current_subsidy_level=straight_through_trunc(level, self.float32_rounding).astype(jnp.int32),
            total_subsidy=sub.total_subsidy + jnp.sum(daily),
            subsidy=as_float32(daily, self.float32_rounding),
        )
        return self.with_sub_state(state, sub)

    def observe(self, state: EnvState, params):
        f = float_dtype()
        t = state.timestep
        until = (self.subsidy_interval - t % self.subsidy_interval).astype(f) / self.subsidy_interval
        lvl = self.sub_state(state).current_subsidy_level.astype(f) / self.num_subsidy_levels
        ones = jnp.ones(self.n_agents, f)
        return Observed(mobile={"t_until_next_subsidy": until * ones, "current_subsidy_level": lvl * ones},
                        planner={"t_until_next_subsidy": until, "current_subsidy_level": lvl})

    def observation_spaces(self):
        """``t_until_next_subsidy`` float [] in [0, 1] ((interval - t mod interval) /
        interval); ``current_subsidy_level`` float [] in [0, 1] (the planner's
        level / num_subsidy_levels), unbounded above with
        ``use_real_world_policies`` (recorded amounts summed over the
        interval, and multiplied by the episode count under
        ``reference_subsidy_accumulation_bug``). The same for mobile agents and
        the planner. Both widened by ``ROUNDING_SLACK`` (divisions)."""
        f = float_dtype()
        level_hi = np.inf if self.use_real_world_policies else 1.0
        obs = {"t_until_next_subsidy": Box(0.0, 1.0, (), f).widen(),
               "current_subsidy_level": Box(0.0, level_hi, (), f).widen()}
        return Observed(mobile=dict(obs), planner=dict(obs))

    def masks(self, state: EnvState, params):
        if self.use_real_world_policies:
            on = jnp.ones((), bool)
        else:
            on = state.timestep % self.subsidy_interval == 0
        return PerKind(planner={self.name: jnp.broadcast_to(on, (self.num_subsidy_levels,))})

    def planner_state_fields(self, state):
        sub = self.sub_state(state)
        return {
            "Total Subsidy": np.float64(sub.total_subsidy),
            "Current Subsidy Level": np.int32(sub.current_subsidy_level),
        }


# --------------------------------------------------------------------------
# VaccinationCampaign
# --------------------------------------------------------------------------


@struct.dataclass
class VaccinationCampaignParams:
    """Numeric parameters of VaccinationCampaign.

    Attributes:
        daily_vaccines_per_million_people: float [] vaccines per million residents
            per day (deliveries are floored to whole vaccines, so its gradient is 0).
    """

    daily_vaccines_per_million_people: float = bounded(4500.0, minimum=0, maximum=1_000_000)


@struct.dataclass
class VaccinationCampaignState:
    """Sub-state of VaccinationCampaign (``state.components["VaccinationCampaign"]``).

    Attributes:
        vaccines_available: int32 [n] vaccines delivered to each state but not
            yet administered (Foundation's ``Vaccines Available``).
    """

    vaccines_available: jax.Array


@component_registry.add
class VaccinationCampaign(Component, FoundationComponentHooks):
    """Passive: every ``delivery_interval`` days from a start date, each state receives vaccines.

    Args (Foundation's, with defaults):
        daily_vaccines_per_million_people: int in [0, 1e6] (4500).
        delivery_interval: int in [1, 5000] (1) days between deliveries.
        vaccine_delivery_start_date: "YYYY-MM-DD" ("2020-12-22"). (Foundation
            only prints a message for a malformed date and fails later; jaxecon
            raises ValueError.)
        observe_rate: bool (False) also observe ``next_vaccination_rate``.
    Raises:
        ValueError: bad values, or used outside ``CovidAndEconomySimulation``.

    No actions, no masks. Deliveries: at step t with t >= begin (days from the
    scenario's start date to the delivery start date) and t % interval == 0,
    ``vaccines_available[i] += floor(interval x pop_i / 1e6 x daily_per_million)``.
    The scenario's SIR step then vaccinates with all of them
    (``with_vaccines_administered``).

    Observations (first delivery t0 = begin rounded up to a multiple of the
    interval, next_t = t + 1): if next_t <= t0, t_until = min(1, (t0 - next_t)
    / interval) and rate 0; else t_until = interval - next_t % interval and rate
    = daily_per_million / 1e6. mobile agents: ``t_until_next_vaccines`` = t_until /
    interval, float [n]; the planner: float []; with ``observe_rate`` also
    ``next_vaccination_rate`` (float [n] / float []).

    State: ``VaccinationCampaignState``.
    """

    name = "VaccinationCampaign"
    component_type = None
    required_entities = ()
    agent_subclasses = (MOBILE,)
    Params = VaccinationCampaignParams

    def __init__(
        self,
        spec,
        daily_vaccines_per_million_people=4500,
        delivery_interval=1,
        vaccine_delivery_start_date="2020-12-22",
        observe_rate=False,
    ):
        super().__init__(spec)
        world = _require_covid_world(spec, self.name)
        self.daily_vaccines_per_million_people = bound_of(
            VaccinationCampaignParams, "daily_vaccines_per_million_people"
        ).check_int(
            "VaccinationCampaign.daily_vaccines_per_million_people",
            int(daily_vaccines_per_million_people)
            if isinstance(daily_vaccines_per_million_people, float) else daily_vaccines_per_million_people,
        )
        self.delivery_interval = cfg.check_int(
            "VaccinationCampaign.delivery_interval", delivery_interval, minimum=1, maximum=5000
        )
        try:
            self.vaccine_delivery_start_date = datetime.strptime(str(vaccine_delivery_start_date), "%Y-%m-%d")
        except ValueError:
            raise ValueError(
                "VaccinationCampaign.vaccine_delivery_start_date must be a date 'YYYY-MM-DD', "
                f"got {vaccine_delivery_start_date!r}"
            ) from None
        self.observe_rate = cfg.check_bool("VaccinationCampaign.observe_rate", observe_rate)
        #: int: step from which deliveries happen (days after the scenario's start date).
        self.time_when_vaccine_delivery_begins = (self.vaccine_delivery_start_date - world.start_date).days
        t0 = int(self.time_when_vaccine_delivery_begins)
        while t0 % self.delivery_interval != 0:  # Python modulo, as Foundation
            t0 += 1
        #: int: the first delivery step.
        self.t_first_delivery = t0

    def default_params(self):
        return VaccinationCampaignParams(
            daily_vaccines_per_million_people=float(self.daily_vaccines_per_million_people)
        )

    def num_vaccines_per_delivery(self, state: EnvState, params) -> jax.Array:
        """int32 [n] vaccines each state receives per delivery."""
        pop = state.scenario.us_state_population
        daily = pop / 1e6 * params.daily_vaccines_per_million_people
        return jnp.floor(self.delivery_interval * daily).astype(jnp.int32)

    def vaccines_available(self, state: EnvState) -> jax.Array:
        """int32 [n]: vaccines delivered to each state and not yet administered."""
        return self.sub_state(state).vaccines_available

    def with_vaccines_administered(self, state: EnvState) -> EnvState:
        """``state`` with every available vaccine administered (none left).

        Foundation's scenario sets ``agent.state["Vaccines Available"] = 0`` in
        its SIR step; the COVID-19 scenario calls this there.
        """
        sub = VaccinationCampaignState(vaccines_available=jnp.zeros_like(self.vaccines_available(state)))
        return self.with_sub_state(state, sub)

    def init(self, key, params):
        return VaccinationCampaignState(vaccines_available=jnp.zeros(self.n_agents, jnp.int32))

    def reset(self, key, state: EnvState, params):
        return self.with_sub_state(state, self.init(key, params))

    def step(self, key, state: EnvState, actions, params):
        t = state.timestep
        deliver = (t >= self.time_when_vaccine_delivery_begins) & (t % self.delivery_interval == 0)
        avail = self.vaccines_available(state)
        avail = jnp.where(deliver, avail + self.num_vaccines_per_delivery(state, params), avail)
        return self.with_sub_state(state, VaccinationCampaignState(vaccines_available=avail))

    def observe(self, state: EnvState, params):
        f = float_dtype()
        interval = self.delivery_interval
        next_t = state.timestep + 1
        before = next_t <= self.t_first_delivery
        t_until = jnp.where(
            before,
            jnp.minimum(1.0, (self.t_first_delivery - next_t).astype(f) / interval),
            (interval - next_t % interval).astype(f),
        )
        rate = jnp.where(before, 0.0, params.daily_vaccines_per_million_people / 1e6).astype(f)
        ones = jnp.ones(self.n_agents, f)
        mobile = {"t_until_next_vaccines": t_until / interval * ones}
        planner = {"t_until_next_vaccines": t_until / interval}
        if self.observe_rate:
            mobile["next_vaccination_rate"] = rate * ones
            planner["next_vaccination_rate"] = rate
        return Observed(mobile=mobile, planner=planner)

    def observation_spaces(self):
        """``t_until_next_vaccines`` float [] in [0, 1] (a fraction of
        delivery_interval); with ``observe_rate``, ``next_vaccination_rate``
        float [] in [0, 1] (vaccines per person per day; the constructor allows
        at most 1e6 per million). The same for mobile agents and the planner;
        widened by ``ROUNDING_SLACK`` (divisions)."""
        f = float_dtype()
        obs = {"t_until_next_vaccines": Box(0.0, 1.0, (), f).widen()}
        if self.observe_rate:
            obs["next_vaccination_rate"] = Box(0.0, 1.0, (), f).widen()
        return Observed(mobile=dict(obs), planner=dict(obs))

    def agent_state_fields(self, state):
        return {"Vaccines Available": np.asarray(self.vaccines_available(state))}
