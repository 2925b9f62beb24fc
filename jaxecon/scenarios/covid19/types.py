"""The COVID-19 scenario's typed pytrees: parameters, state and static facts.

``CovidParams`` (every numeric knob, traced), ``CovidState`` (the scenario's
sub-state of ``EnvState``) and ``CovidStaticSpec`` (what its components read,
``EnvSpec.scenario``). Follows ai-economist 1.7.1
``scenarios/covid19/covid19_env.py`` (``CovidAndEconomyEnvironment``).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime

import jax
import numpy as np
from flax import struct

from jaxecon.core.bounds import bounded


@struct.dataclass
class CovidParams:
    """Numeric parameters of CovidAndEconomySimulation (all float leaves).

    Keyword arguments: pop_between_age_18_65 [], infection_too_sick_to_work_rate [],
    risk_free_interest_rate [], economic_reward_crra_eta [],
    health_priority_scaling_agents [], health_priority_scaling_planner [],
    reward_normalization_factor [].
    Modulations (``set_parameter_modulations``; 1 = the fitted model):
    beta_intercepts_modulation [], beta_slopes_modulation [], unemployment_modulation [].
    Model constants (``model_constants.json``): sir_mortality [], sir_gamma [] (1/day),
    gdp_per_capita [] (US$/year), us_state_population [n], us_population [] (people).
    Fitted (``fitted_params.json``): value_of_life [] (US$), beta_slopes [n],
    beta_intercepts [n] (1/day), conv_lambdas [k] (days), unemployment_bias [n] (%),
    grouped_convolutional_filter_weights [n, k],
    inferred_weightage_on_agent_health_index [n],
    inferred_weightage_on_planner_health_index [],
    {min,max}_marginal_agent_{health,economic}_index [n],
    {min,max}_marginal_planner_{health,economic}_index [].
    Values are stored as given (float64 numpy); the step rounds to float32
    where Foundation does.
    """

    pop_between_age_18_65: float = bounded(minimum=0, maximum=1)
    infection_too_sick_to_work_rate: float = bounded(minimum=0, maximum=1)
    risk_free_interest_rate: float = bounded(minimum=0)
    economic_reward_crra_eta: float = bounded(minimum=0, maximum=20, maximum_open=True)
    health_priority_scaling_agents: float = bounded(minimum=0)
    health_priority_scaling_planner: float = bounded(minimum=0)
    reward_normalization_factor: float = bounded(minimum=0, minimum_open=True)
    beta_intercepts_modulation: float
    beta_slopes_modulation: float
    unemployment_modulation: float
    sir_mortality: float
    sir_gamma: float
    gdp_per_capita: float
    us_state_population: np.ndarray
    us_population: float
    value_of_life: float
    beta_slopes: np.ndarray
    beta_intercepts: np.ndarray
    conv_lambdas: np.ndarray
    unemployment_bias: np.ndarray
    grouped_convolutional_filter_weights: np.ndarray
    inferred_weightage_on_agent_health_index: np.ndarray
    inferred_weightage_on_planner_health_index: float
    min_marginal_agent_health_index: np.ndarray
    max_marginal_agent_health_index: np.ndarray
    min_marginal_agent_economic_index: np.ndarray
    max_marginal_agent_economic_index: np.ndarray
    min_marginal_planner_health_index: float
    max_marginal_planner_health_index: float
    min_marginal_planner_economic_index: float
    max_marginal_planner_economic_index: float


@struct.dataclass
class CarriedStateFields:
    """What Foundation's ``agent.state`` / ``planner.state`` still show at the next
    reset: the fields its scenario writes only in steps, as the previous
    episode's last step left them (float [n] per state, float = as ``CovidState``).

    Attributes:
        stepped: bool [] whether an earlier episode took a step (False: the
            fields are absent at timestep 0, as in Foundation's first episode).
        r0: float [n] ``R0``. unemployed: float [n] people (``Total Unemployed``).
        vaccinated: float [n] people (``Total Vaccinated``; shown only without
            ``VaccinationCampaign``, whose reset sets the field to 0).
        subsidy: float [n] US$/day (``New Subsidy Received``).
        postsubsidy_productivity: float [n] US$/day (``Postsubsidy Productivity``).
    """

    stepped: jax.Array
    r0: jax.Array
    unemployed: jax.Array
    vaccinated: jax.Array
    subsidy: jax.Array
    postsubsidy_productivity: jax.Array


@struct.dataclass
class CovidState:
    """The scenario's state (``state.scenario``) of ``CovidAndEconomySimulation``.

    float = float32, or float64 under x64 holding float32-rounded values as
    Foundation's float32 arrays (unless ``float32_rounding=False``); n = 51
    states, k = the unemployment filters. Values at timestep t.

    Attributes:
        susceptible, infected, recovered, deaths, vaccinated, unemployed: float [n]
            people (Foundation's ``global_state`` rows).
        postsubsidy_productivity: float [n] US$ per day, productivity plus subsidy.
        deaths_prev, infected_prev: float [n] people at t - 1 (rewards, host fields).
        stringency_level_history: int8 [FILTER_LEN + 1, n] the levels of days
            t - FILTER_LEN .. t as a ring buffer: row (tau + FILTER_LEN) mod
            (FILTER_LEN + 1) holds day tau's (so each day writes one row instead
            of shifting them all; whole levels; int32 if the data has more than
            127 levels). Day 0 and before: the recorded levels (1 before the data).
        unemployment_filter_response: float [k, n] r_k of the history (dynamics 2).
        r0: float [n] (dimensionless) beta / gamma of the last SIR step (0
            before the first; with ``use_real_world_data`` always 0).
        health_index, economic_index: float [n] sums over steps 1..t of each
            state's normalised marginal health / economic index.
        planner_health_index, planner_economic_index: float [] the same for the planner.
        unemployed_sum: float [n] people, stringency_level_sum: float [n] levels,
            postsubsidy_productivity_sum, subsidy_sum: float [n] US$: sums over
            steps 1..t (metrics).
        us_state_population: float [n], us_population: float [] people: the
            world attributes the components read (copied from the params at reset).
        carried_fields: ``CarriedStateFields``, the previous episodes' last
            step-only state fields (set by ``carry_over``; host-side views only).
    """

    susceptible: jax.Array
    infected: jax.Array
    recovered: jax.Array
    deaths: jax.Array
    vaccinated: jax.Array
    unemployed: jax.Array
    postsubsidy_productivity: jax.Array
    deaths_prev: jax.Array
    infected_prev: jax.Array
    stringency_level_history: jax.Array
    unemployment_filter_response: jax.Array
    r0: jax.Array
    health_index: jax.Array
    economic_index: jax.Array
    planner_health_index: jax.Array
    planner_economic_index: jax.Array
    unemployed_sum: jax.Array
    stringency_level_sum: jax.Array
    postsubsidy_productivity_sum: jax.Array
    subsidy_sum: jax.Array
    us_state_population: jax.Array
    us_population: jax.Array
    carried_fields: CarriedStateFields


@dataclasses.dataclass(frozen=True)
class CovidStaticSpec:
    """What the COVID-19 components read of the scenario (``EnvSpec.scenario``).

    Attributes:
        n_stringency_levels: int, stringency levels of the fitted model (10).
        start_date: ``datetime`` of timestep 0.
        use_real_world_policies: bool, replay the recorded policies.
        real_world_stringency_policy: int32 [days, 51] recorded levels from the
            start date (None without ``use_real_world_policies``).
        real_world_subsidy: float64 [days] recorded federal payments (US$/day)
            from the start date (None without ``use_real_world_policies``).
        initial_stringency_level: float64 [51] the levels recorded on the start
            date (each state's level at reset).
        float32_rounding: bool, round to float32 where Foundation does (the
            scenario's kwarg).
    """

    n_stringency_levels: int
    start_date: datetime
    use_real_world_policies: bool
    real_world_stringency_policy: np.ndarray | None
    real_world_subsidy: np.ndarray | None
    initial_stringency_level: np.ndarray
    float32_rounding: bool
