"""``CovidAndEconomySimulation``: COVID-19 and the economy of the 50 US states and DC.

Follows ``ai_economist/foundation/scenarios/covid19/covid19_env.py`` (class
``CovidAndEconomyEnvironment``, CPU path; Trott et al., arXiv:2108.02904),
without its activation-code gate. 51 mobile agents (the US states and DC, in
the order of the data's ``US_STATE_IDX_TO_STATE_NAME``) choose open/close
stringency levels; the planner (the federal government) chooses direct
payments. Day 0 of an episode is ``start_date``; a step is one day.

Intended components (``default_covid_config()`` in ``config.py``), in this order:
``ControlUSStateOpenCloseStatus``, ``FederalGovernmentSubsidy``,
``VaccinationCampaign`` (``jaxecon/components/covid19.py``).

Dynamics of step t (after the components; all per state, float [n]):

1. SIR with vaccination (fitted model; with ``use_real_world_data`` the
   recorded series of day start + t are copied instead). Lagged stringency
   s = level[t - BETA_DELAY] (recorded policy before day start, 1 before the
   data); beta = beta_intercept x m_i + beta_slope x m_s x s; all delivered
   vaccines v are used: vacc = min(v, S), frac = min(1, v / S);
   dS = -beta S I / N (1 - frac) - vacc, dR = gamma I + vacc, dI = -dS - dR,
   dV = vacc; S, I, R, V clipped at 0; deaths D = mortality x (R - V).
2. Unemployment (fitted model; recorded with ``use_real_world_data``): the
   last FILTER_LEN changes of the level, delta[tau], through k exponential
   filters: x = m_u sum_k w[i, k] r_k, r_k = sum_tau delta[tau] exp(-(FILTER_LEN
   - 1 - tau) / lambda_k); rate (%) = softplus(x) + bias; unemployed = rate x N
   / 100. Foundation sums the whole window every day; jaxecon sums it once at
   reset and then updates r_k recursively, r_k <- rho_k (r_k - delta_oldest
   rho_k^(FILTER_LEN - 1)) + delta_newest with rho_k = exp(-1 / lambda_k): the
   same quantity in O(k) instead of O(FILTER_LEN k) work per state and day
   (Foundation rounds its filters to float32, jaxecon uses rho_k^lag exactly,
   so unemployment can differ by a float32 ulp; without x64 the recursion's
   float32 rounding stays within 2e-5 of the float64 result over 540 days).
3. Economy: can't work = (too_sick_rate x I + D) x p18 + unemployed;
   productivity = max(0, N p18 - can't work) x daily production per worker
   (US$/day, calibrated so that the pre-pandemic economy produces
   GDP_PER_CAPITA per resident and year); postsubsidy productivity =
   productivity + subsidy.

Rewards (step t): marginal deaths dD = D[t] - D[t-1]; agent health index
h = -dD x VALUE_OF_LIFE / (365 x max productivity), economic index
e = crra(postsubsidy / (365 x max productivity)), crra(x) = (1 + ((clip(365 x,
0.1, 3))^(1 - eta) - 1) / (1 - eta)) / 365 (log for eta = 1); both min-max
normalised with the fitted bounds; reward = (a h + (1 - a) e) / reward
normalisation, with a = the fitted health weight scaled by
``health_priority_scaling_agents`` (z = a / (1 - a) -> s z, a' = s z / (1 +
s z)). The planner: the same on US totals with the subsidy's cost (1 +
risk_free_interest_rate) x subsidy subtracted from productivity.

Observations (``flatten_observations=False`` shapes; Foundation stacks the
agents along the LAST axis of ``"a"`` entries, jaxecon along the first):
``"a"``: ``world-agent_index`` int32 [n, n] (one-hot), ``world-agent_state``
float [n, 6] = (S, I, R, D, V, unemployed) / N, ``world-agent_postsubsidy_productivity``
float [n] = postsubsidy / max productivity, ``world-lagged_stringency_level``
float [n] = level[t - BETA_DELAY + 1] / levels, ``time``, the components'.
``"p"``: the same without agent_index, ``world-agent_state`` float [6, n] as in
Foundation. Masks: the components'.

Metrics (Foundation's keys): per state ``<State>/infected (millions)``,
``/recovered (millions)``, ``/deaths (millions)``, ``/mean_unemployment_rate (%)``,
``/mean_open_close_stringency_level``, ``/total_productivity (billion $)``,
``/health_index_at_end_of_episode``, ``/economic_index_at_end_of_episode``;
``usa/vaccinated (% of population)``, ``usa/deaths (thousands)``,
``usa/mean_unemployment_rate (%)``, ``usa/total_amount_subsidized (trillion $)``,
``usa/total_productivity (trillion $)``, ``usa/health_index_at_end_of_episode``,
``usa/economic_index_at_end_of_episode`` (these two the planner's: not
without a planner). Means are over the episode
(divided by episode_length, as Foundation's means over its zero-initialised
arrays).

``info`` per step: Foundation's global-state rows at t, float [n] each:
``Susceptible``, ``Infected``, ``Recovered``, ``Deaths``, ``Vaccinated``,
``Unemployed``, ``Stringency Level``, ``Subsidy``, ``Postsubsidy Productivity``
(stack them with ``lax.scan`` for plots, see ``plots.py``).

Scenario state: ``CovidState`` (``state.scenario``). The stringency levels
and subsidies are the components' (``ControlUSStateOpenCloseStatus.stringency_level``,
``FederalGovernmentSubsidy.subsidy``); the scenario reads them through those
accessors (0 without the component; see ``stringency_level`` and ``subsidy``).

Parameters (``params.scenario``, ``CovidParams``): every kwarg, model constant
and fitted parameter as float leaves (differentiable), plus the modulations of
Foundation's ``set_parameter_modulations`` (``beta_intercepts_modulation``,
``beta_slopes_modulation``, ``unemployment_modulation``; jaxecon has no
mutable method: replace them in params).

Usage::

    import jax, jaxecon
    from jaxecon.scenarios.covid19 import default_covid_config
    env = jaxecon.make_from_config(default_covid_config())
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    actions = {"a": jnp.zeros(51, jnp.int32), "p": jnp.zeros((), jnp.int32)}
    obs, state, reward, done, info = env.step(jax.random.key(1), state, actions, params)
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of
from jaxecon.core.scenario import Scenario
from jaxecon.interop.foundation_hooks import FoundationScenarioHooks
from jaxecon.core.numerics import as_float32, straight_through_trunc
from jaxecon.core.registry import scenario_registry
from jaxecon.core.state import EnvState, as_float_tree, float_dtype
from jaxecon.spaces import Box
from jaxecon.scenarios.covid19.data import load_covid_data, replay_window
from jaxecon.scenarios.covid19.foundation_attributes import covid_attributes
from jaxecon.scenarios.covid19.rewards import (
    DAYS_PER_YEAR,
    crra_nonlinearity,
    min_max_normalization,
    scale_health_weight,
)
from jaxecon.scenarios.covid19.types import CarriedStateFields, CovidParams, CovidState, CovidStaticSpec


@scenario_registry.add
class CovidAndEconomySimulation(Scenario, FoundationScenarioHooks):
    """COVID-19 and the US economy (see the module docstring).

    Args (Foundation's, with defaults):
        use_real_world_data: bool (False) replay the recorded SIR, deaths,
            vaccination and unemployment series (needs use_real_world_policies);
            past a series' last recorded day it holds that day's values.
        use_real_world_policies: bool (False) replay the recorded stringency
            levels and subsidies (actions are ignored).
        path_to_data_and_fitted_params: str ("") data folder; "" = the copy
            shipped with jaxecon (``data_and_fitted_params/``, see its NOTICE).
        start_date: "YYYY-MM-DD" ("2020-03-22") day 0 of every episode.
        pop_between_age_18_65: float in [0, 1] (0.6) working-age share.
        infection_too_sick_to_work_rate: float in [0, 1] (0.1).
        risk_free_interest_rate: float >= 0 (0.03).
        economic_reward_crra_eta: float in [0, 20) (2).
        health_priority_scaling_agents: float >= 0 (1).
        health_priority_scaling_planner: float >= 0 (1).
        reward_normalization_factor: float > 0 (1).
        float32_rounding: bool (True), jaxecon only. Round to float32 where
            Foundation's float32 arrays do (and truncate the workforce to an
            integer), as the reference does. False computes the same model in
            the working precision without rounding: under ``jax_enable_x64`` a
            smooth float64 function, for finite-difference checks of
            gradients (``jax.grad`` gives the same derivative in both modes;
            see docs/differentiability.md). Without x64 both are float32.
            A static attribute: every method (``step``, ``compute_reward``,
            ``derived``, ...) and the components (``spec.scenario``) read it,
            however they are called.
        **base_env_kwargs: Foundation's ``BaseEnvironment``'s (``Scenario``'s); ``n_agents`` must be the
            number of states in the data (51). Foundation also demands
            ``collate_agent_step_and_reset_data=True``; jaxecon accepts both
            (it only changes the stateful shim's dict layout).
    Raises:
        FileNotFoundError / ValueError: a data file is missing or malformed
            (naming the file, key and expected shape).
        ValueError: bad values, a start date outside the data, an
            ``episode_length`` beyond the recorded policies (real-world
            policies) or the data file (real-world data), or ``n_agents`` !=
            number of states.
    Warns:
        RecordEndWarning: with ``use_real_world_data``, an episode that runs
            past a series' last recorded day (it holds that day's values, quirk
            Q33; the reference's own tutorial, 405 days from 2020-03-22, does).
    """

    name = "CovidAndEconomySimulation"
    required_entities = ()
    Params = CovidParams
    run_recorder = "covid19"
    foundation_class_name = "CovidAndEconomyEnvironment"

    def __init__(
        self,
        use_real_world_data=False,
        use_real_world_policies=False,
        path_to_data_and_fitted_params="",
        start_date="2020-03-22",
        pop_between_age_18_65=0.6,
        infection_too_sick_to_work_rate=0.1,
        risk_free_interest_rate=0.03,
        economic_reward_crra_eta=2,
        health_priority_scaling_agents=1,
        health_priority_scaling_planner=1,
        reward_normalization_factor=1,
        float32_rounding=True,
        **base_env_kwargs,
    ):
        super().__init__(**base_env_kwargs)
        self.float32_rounding = cfg.check_bool("float32_rounding", float32_rounding)
        self.use_real_world_data = cfg.check_bool("use_real_world_data", use_real_world_data)
        self.use_real_world_policies = cfg.check_bool("use_real_world_policies", use_real_world_policies)
        if self.use_real_world_data and not self.use_real_world_policies:
            raise ValueError(
                "use_real_world_data=True requires use_real_world_policies=True "
                "(replaying the recorded data means replaying the recorded policies)"
            )
        if not isinstance(path_to_data_and_fitted_params, (str, os.PathLike)):
            raise ValueError(
                f"path_to_data_and_fitted_params must be a folder path or '', got {path_to_data_and_fitted_params!r}"
            )
        self.data = load_covid_data(path_to_data_and_fitted_params)
        self.path_to_data_and_fitted_params = self.data.path
        data, consts, fitted = self.data, self.data.constants, self.data.fitted

        self.date_format = data.date_format
        try:
            self.start_date = datetime.strptime(str(start_date), self.date_format)
        except ValueError:
            raise ValueError(
                f"start_date must be a date in the format {self.date_format!r}, got {start_date!r}"
            ) from None
        self.policy_start_date = data.policy_start_date
        self.start_date_index = (self.start_date - self.policy_start_date).days
        last = self.policy_start_date + timedelta(days=data.n_days - 1)
        real = data.real
        if not 0 <= self.start_date_index < data.n_days:
            raise ValueError(
                f"start_date must lie within the data, {self.policy_start_date:%Y-%m-%d} .. "
                f"{last:%Y-%m-%d}, got {start_date!r}"
            )
        init_keys = ("susceptible", "infected", "recovered", "vaccinated", "unemployed")
        ok_days = np.all(np.stack([np.isfinite(real[k]).all(axis=1) for k in init_keys]), axis=0)
        if not ok_days[self.start_date_index]:
            valid = np.flatnonzero(ok_days)
            rng = (
                f"{self.policy_start_date + timedelta(days=int(valid[0])):%Y-%m-%d} .. "
                f"{self.policy_start_date + timedelta(days=int(valid[-1])):%Y-%m-%d}"
                if valid.size else "none"
            )
            raise ValueError(
                f"start_date {start_date!r}: the data has no SIR/unemployment values on that day "
                f"(days with complete data: {rng})"
            )

        self.num_us_states = data.n_states
        self.us_state_idx_to_state_name = {str(i): s for i, s in enumerate(data.state_names)}
        self.beta_delay = int(fitted["BETA_DELAY"])
        self.filter_len = int(fitted["FILTER_LEN"])
        self.num_filters = data.n_filters
        self.num_stringency_levels = int(consts["NUM_STRINGENCY_LEVELS"])
        # The level history is most of the state (FILTER_LEN + 1 days x n states):
        # whole levels, so stored compactly and exactly.
        self.level_dtype = jnp.int8 if self.num_stringency_levels <= 127 else jnp.int32

        if self.n_agents != self.num_us_states:
            raise ValueError(
                f"n_agents must be the number of US states in the data, {self.num_us_states}, got {self.n_agents!r}"
            )
        remaining = data.n_days - self.start_date_index
        if self.use_real_world_data:
            #: float64 [T + 1, n] recorded series of days start .. start + T (row t),
            #: each held at its last recorded day after that (quirk Q33).
            self.real_episode = replay_window(data, self.start_date_index, self.episode_length)
        elif self.use_real_world_policies:
            if self.episode_length > remaining:
                raise ValueError(
                    f"episode_length must be <= {remaining} with use_real_world_policies=True and "
                    f"start_date {start_date!r} (the recorded policies end then), got {self.episode_length!r}"
                )

        # World attributes the covid components read (Foundation's world.* entries).
        self.n_stringency_levels = self.num_stringency_levels
        if self.use_real_world_policies:
            self.real_world_stringency_policy = np.asarray(real["policy"][self.start_date_index:], np.int32)
            self.real_world_subsidy = np.asarray(real["subsidy"][self.start_date_index:, 0], np.float64)

        for name, value in (
            ("pop_between_age_18_65", pop_between_age_18_65),
            ("infection_too_sick_to_work_rate", infection_too_sick_to_work_rate),
            ("risk_free_interest_rate", risk_free_interest_rate),
            ("economic_reward_crra_eta", economic_reward_crra_eta),
            ("health_priority_scaling_agents", health_priority_scaling_agents),
            ("health_priority_scaling_planner", health_priority_scaling_planner),
            ("reward_normalization_factor", reward_normalization_factor),
        ):
            setattr(self, name, bound_of(CovidParams, name).check_float(name, value))

        self.T = self.episode_length
        self.has_control = self.has_component("ControlUSStateOpenCloseStatus")
        self.has_subsidy = self.has_component("FederalGovernmentSubsidy")
        self.has_vaccination = self.has_component("VaccinationCampaign")

        # Static per-episode data (host numpy, embedded as constants).
        s = self.start_date_index
        F = self.filter_len
        pol = np.asarray(real["policy"][: s + 1], np.float64)
        #: float64 [F + 1, n] recorded levels of days start - F .. start (1 before the data).
        self.initial_stringency_history = np.pad(pol, [(F, 0), (0, 0)], constant_values=1)[-(F + 1):]
        self.initial_values = {k: np.asarray(real[k][s], np.float64) for k in init_keys}
        prev = max(0, s - 1)
        self.initial_prev = {k: np.asarray(real[k][prev], np.float64) for k in ("infected", "recovered")}

    # ------------------------------------------------------------ parameters
    def static_spec(self) -> CovidStaticSpec:
        """The world facts the COVID-19 components read (Foundation's ``world.*`` entries)."""
        real = self.use_real_world_policies
        return CovidStaticSpec(
            n_stringency_levels=self.n_stringency_levels,
            start_date=self.start_date,
            use_real_world_policies=real,
            real_world_stringency_policy=self.real_world_stringency_policy if real else None,
            real_world_subsidy=self.real_world_subsidy if real else None,
            initial_stringency_level=self.initial_stringency_history[-1],
            float32_rounding=self.float32_rounding,
        )

    def default_scenario_params(self) -> CovidParams:
        c, fp = self.data.constants, self.data.fitted
        n, k = self.num_us_states, self.num_filters

        def arr(x, shape=None):
            a = np.array(x, dtype=np.float64)
            return a.reshape(shape) if shape is not None else a

        return CovidParams(
            pop_between_age_18_65=self.pop_between_age_18_65,
            infection_too_sick_to_work_rate=self.infection_too_sick_to_work_rate,
            risk_free_interest_rate=self.risk_free_interest_rate,
            economic_reward_crra_eta=self.economic_reward_crra_eta,
            health_priority_scaling_agents=self.health_priority_scaling_agents,
            health_priority_scaling_planner=self.health_priority_scaling_planner,
            reward_normalization_factor=self.reward_normalization_factor,
            beta_intercepts_modulation=1.0,
            beta_slopes_modulation=1.0,
            unemployment_modulation=1.0,
            sir_mortality=float(c["SIR_MORTALITY"]),
            sir_gamma=float(c["SIR_GAMMA"]),
            gdp_per_capita=float(c["GDP_PER_CAPITA"]),
            us_state_population=arr(c["US_STATE_POPULATION"]),
            us_population=float(c["US_POPULATION"]),
            value_of_life=float(fp["VALUE_OF_LIFE"]),
            beta_slopes=arr(fp["BETA_SLOPES"]),
            beta_intercepts=arr(fp["BETA_INTERCEPTS"]),
            conv_lambdas=arr(fp["CONV_LAMBDAS"]),
            unemployment_bias=arr(fp["UNEMPLOYMENT_BIAS"]),
            grouped_convolutional_filter_weights=arr(fp["GROUPED_CONVOLUTIONAL_FILTER_WEIGHTS"], (n, k)),
            inferred_weightage_on_agent_health_index=arr(fp["INFERRED_WEIGHTAGE_ON_AGENT_HEALTH_INDEX"]),
            inferred_weightage_on_planner_health_index=float(fp["INFERRED_WEIGHTAGE_ON_PLANNER_HEALTH_INDEX"]),
            min_marginal_agent_health_index=arr(fp["MIN_MARGINAL_AGENT_HEALTH_INDEX"]),
            max_marginal_agent_health_index=arr(fp["MAX_MARGINAL_AGENT_HEALTH_INDEX"]),
            min_marginal_agent_economic_index=arr(fp["MIN_MARGINAL_AGENT_ECONOMIC_INDEX"]),
            max_marginal_agent_economic_index=arr(fp["MAX_MARGINAL_AGENT_ECONOMIC_INDEX"]),
            min_marginal_planner_health_index=float(fp["MIN_MARGINAL_PLANNER_HEALTH_INDEX"]),
            max_marginal_planner_health_index=float(fp["MAX_MARGINAL_PLANNER_HEALTH_INDEX"]),
            min_marginal_planner_economic_index=float(fp["MIN_MARGINAL_PLANNER_ECONOMIC_INDEX"]),
            max_marginal_planner_economic_index=float(fp["MAX_MARGINAL_PLANNER_ECONOMIC_INDEX"]),
        )

    # ------------------------------------------------------------ model pieces
    def _filter_decay(self, p: CovidParams):
        """rho_k = exp(-1 / lambda_k), float [k, 1] (per day)."""
        return jnp.exp(-1.0 / jnp.asarray(p.conv_lambdas, float_dtype()))[:, None]

    def filter_response(self, history, p: CovidParams):
        """r_k of a level history: float [k, n] from [FILTER_LEN + 1, n] levels (any dtype).

        The exponentially discounted sum of the history's FILTER_LEN changes
        (Foundation's ``unemployment_step`` before the state weights), summed
        directly; used at reset, then updated by ``step_filter_response``.
        """
        f = float_dtype()
        history = history.astype(f)
        delta = history[1:] - history[:-1]  # [F, n], oldest first
        lags = jnp.arange(self.filter_len - 1, -1, -1, dtype=f)
        filters = self._filter_decay(p) ** lags[None, :]  # [k, F]
        return filters @ delta

    def step_filter_response(self, response, oldest, newest, p: CovidParams):
        """r_k one day later: the change ``newest`` float [n] enters the window with
        lag 0, its ``oldest`` change float [n] leaves it. ``response``: float [k, n]."""
        rho = self._filter_decay(p)
        return rho * (response - oldest[None] * rho ** (self.filter_len - 1)) + newest[None]

    def _ring_row(self, tau):
        """Row of day ``tau`` in the level ring buffer (see the state docs)."""
        return jnp.mod(tau + self.filter_len, self.filter_len + 1)

    def _level_of_day(self, ring, tau):
        """float [n]: the level of day ``tau`` from the ring (which holds days t - FILTER_LEN .. t)."""
        return jax.lax.dynamic_index_in_dim(ring, self._ring_row(tau), axis=0, keepdims=False).astype(
            float_dtype())

    def unemployment(self, response, p: CovidParams):
        """Unemployed people per state, float [n], from the filter response r float [k, n]."""
        w = jnp.asarray(p.grouped_convolutional_filter_weights, float_dtype())  # [n, k]
        # the sum over the k filters written out: vmapped over envs, jnp.sum(w.T * response,
        # axis=0) reduces the middle axis of [B, k, n], which XLA:CPU runs far slower
        # (benchmarks/RESULTS.md, "XLA:CPU code generation")
        x = p.unemployment_modulation * sum(w[:, j] * response[j] for j in range(self.num_filters))
        return self._rate_to_people(x, p)

    def _rate_to_people(self, x, p):
        soft = jnp.where(x <= 20.0, jnp.log(1 + jnp.exp(jnp.minimum(x, 20.0))), x)
        rate = soft + self._f32(p.unemployment_bias)
        return rate * p.us_state_population / 100

    def _f32(self, x):
        """``as_float32(x, self.float32_rounding)``: ``x`` rounded as Foundation's float32 arrays round."""
        return as_float32(x, self.float32_rounding)

    def economy(self, infected, deaths, unemployed, p: CovidParams, dppw, float32_inputs: bool):
        """Productivity per state (US$/day), float [n]; Foundation's ``economy_step``.

        ``float32_inputs``: infected/deaths come from float32 arrays (simulated
        SIR), so Foundation's first products round to float32.
        """
        f32 = self._f32
        rate = f32(p.infection_too_sick_to_work_rate)
        p18 = f32(p.pop_between_age_18_65)
        if float32_inputs:
            incap = f32(f32(rate * infected) + deaths)
            cant = f32(incap * p18) + unemployed
        else:
            incap = rate * infected + deaths
            cant = incap * p18 + unemployed
        workers = p.us_state_population * p18
        return f32(jnp.maximum(0.0, workers - cant) * dppw)

    def derived(self, p: CovidParams) -> dict:
        """Quantities Foundation computes at construction, as functions of the params.

        Returns a dict: ``daily_production_per_worker`` [] (US$/day),
        ``maximum_productivity`` [n] (US$/day), ``agents_norm`` [n] and
        ``planner_norm`` [] (US$/year), ``agent_health_weight`` [n],
        ``planner_health_weight`` [].
        """
        f = float_dtype()
        f32 = self._f32
        p = as_float_tree(p)
        baseline = self._rate_to_people(jnp.zeros(self.num_us_states, f), p)  # all levels 1 forever
        workforce = straight_through_trunc(
            p.us_population * p.pop_between_age_18_65 - jnp.sum(baseline), self.float32_rounding)
        per_capita = f32(workforce / p.us_population)
        gdp_per_worker = f32(f32(p.gdp_per_capita) / per_capita)
        dppw = f32(gdp_per_worker / DAYS_PER_YEAR)
        zeros = jnp.zeros(self.num_us_states, f)
        max_prod = self.economy(zeros, zeros, baseline, p, dppw, float32_inputs=False)
        agents_norm = f32(max_prod * DAYS_PER_YEAR)
        return {
            "daily_production_per_worker": dppw,
            "maximum_productivity": max_prod,
            "agents_norm": agents_norm,
            "planner_norm": f32(jnp.sum(agents_norm)),
            "agent_health_weight": scale_health_weight(
                p.health_priority_scaling_agents, f32(p.inferred_weightage_on_agent_health_index),
                self.float32_rounding,
            ),
            "planner_health_weight": scale_health_weight(
                p.health_priority_scaling_planner, f32(p.inferred_weightage_on_planner_health_index),
                self.float32_rounding,
            ),
        }

    # ------------------------------------------------------------ the components' world rows
    def stringency_level(self, state: EnvState) -> jax.Array:
        """float [n]: each state's open/close level at ``state.timestep``
        (Foundation's ``global_state["Stringency Level"][t]``, whole levels).

        Read from the level history: ``ControlUSStateOpenCloseStatus``'s level
        (at reset the level recorded on the start date); without that component
        the recorded level at reset and 0 after (Foundation's zero-initialised rows).
        """
        return self._level_of_day(state.scenario.stringency_level_history, state.timestep)

    def subsidy(self, state: EnvState) -> jax.Array:
        """float [n]: US$ per day each state receives at ``state.timestep``
        (Foundation's ``global_state["Subsidy"][t]``): ``FederalGovernmentSubsidy``'s
        payments, 0 without that component."""
        if self.has_subsidy:
            return self.get_component("FederalGovernmentSubsidy").subsidy(state)
        return jnp.zeros(self.n_agents, float_dtype())

    # ------------------------------------------------------------ state
    def init_scenario_state(self, params) -> CovidState:
        f = float_dtype()
        n = self.num_us_states
        z = jnp.zeros(n, f)
        return CovidState(
            susceptible=z, infected=z, recovered=z, deaths=z, vaccinated=z, unemployed=z,
            postsubsidy_productivity=z, deaths_prev=z, infected_prev=z,
            stringency_level_history=jnp.zeros((self.filter_len + 1, n), self.level_dtype),
            unemployment_filter_response=jnp.zeros((self.num_filters, n), f),
            r0=z, health_index=z, economic_index=z,
            planner_health_index=jnp.zeros((), f), planner_economic_index=jnp.zeros((), f),
            unemployed_sum=z, stringency_level_sum=z, postsubsidy_productivity_sum=z, subsidy_sum=z,
            us_state_population=z, us_population=jnp.zeros((), f),
            carried_fields=CarriedStateFields(
                stepped=jnp.zeros((), bool), r0=z, unemployed=z, vaccinated=z, subsidy=z,
                postsubsidy_productivity=z,
            ),
        )

    def reset_agent_states(self, key, state: EnvState, params) -> EnvState:
        """Agents have no location (``clear_agent_locs``)."""
        return state.replace(loc=jnp.full((self.n_agents, 2), -1, jnp.int32))

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        """Day-0 values from the recorded data (float32 as Foundation's world arrays)."""
        f = float_dtype()
        f32 = self._f32
        p = params.scenario
        v = {k: jnp.asarray(a, f) for k, a in self.initial_values.items()}
        mortality = f32(jnp.asarray(p.sir_mortality, f))
        sc = self.init_scenario_state(params).replace(
            susceptible=f32(v["susceptible"]),
            infected=f32(v["infected"]),
            recovered=f32(v["recovered"]),
            deaths=f32(v["recovered"] * mortality),
            vaccinated=f32(v["vaccinated"]),
            unemployed=f32(v["unemployed"]),
            infected_prev=jnp.asarray(self.initial_prev["infected"], f),
            deaths_prev=jnp.asarray(self.initial_prev["recovered"], f) * mortality,
            stringency_level_history=jnp.asarray(self.initial_stringency_history, self.level_dtype),
            unemployment_filter_response=self.filter_response(
                jnp.asarray(self.initial_stringency_history, f), as_float_tree(p)),
            us_state_population=jnp.asarray(p.us_state_population, f),
            us_population=jnp.asarray(p.us_population, f),
        )
        return state.replace(scenario=sc)

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """Remember the state fields Foundation writes only in steps (``R0``,
        ``Total Unemployed``, ``New Subsidy Received``/``Provided``, ``Postsubsidy
        Productivity``, ``Total Vaccinated``): its reset leaves them in
        ``agent.state``/``planner.state``, so timestep 0 shows the values of the
        last step of the last episode that took one (``prev_state``'s, or what
        ``prev_state`` itself carried if it took none). The dynamics never read them."""
        prev = prev_state.scenario
        last = CarriedStateFields(
            stepped=jnp.ones((), bool), r0=prev.r0, unemployed=prev.unemployed,
            vaccinated=prev.vaccinated, subsidy=self.subsidy(prev_state),
            postsubsidy_productivity=prev.postsubsidy_productivity,
        )
        stepped = prev_state.timestep > 0
        carried = jax.tree.map(lambda a, b: jnp.where(stepped, a, b).astype(b.dtype), last, prev.carried_fields)
        return state.replace(scenario=state.scenario.replace(carried_fields=carried))

    # ------------------------------------------------------------ step
    def scenario_step(self, key, state: EnvState, params) -> EnvState:
        f = float_dtype()
        f32 = self._f32
        p = as_float_tree(params.scenario)
        sc = state.scenario
        t = state.timestep
        d = self.derived(p)
        if self.has_control:
            level = self.get_component("ControlUSStateOpenCloseStatus").stringency_level(state)
        else:  # Foundation's zero-initialised row
            level = jnp.zeros(self.n_agents, f)
        ring = sc.stringency_level_history
        day = lambda tau: self._level_of_day(ring, tau)  # noqa: E731
        oldest = day(t - self.filter_len) - day(t - self.filter_len - 1)  # leaves the window
        newest = level - day(t - 1)  # enters it
        response = self.step_filter_response(sc.unemployment_filter_response, oldest, newest, p)
        ring = jax.lax.dynamic_update_index_in_dim(  # day t overwrites day t - FILTER_LEN - 1
            ring, level.astype(self.level_dtype), self._ring_row(t), axis=0)

        if self.use_real_world_data:
            row = jnp.minimum(t, self.T)
            rw = {k: jnp.asarray(a, f)[row] for k, a in self.real_episode.items()}
            S, I, R, V, D = (jnp.maximum(rw[k], 0.0) for k in
                             ("susceptible", "infected", "recovered", "vaccinated", "deaths"))
            unemployed = rw["unemployed"]
            productivity = self.economy(I, D, unemployed, p, d["daily_production_per_worker"], False)
            r0 = sc.r0
        else:
            lagged = self._level_of_day(ring, t - self.beta_delay)
            S0, I0, R0, V0 = sc.susceptible, sc.infected, sc.recovered, sc.vaccinated
            if self.has_vaccination:
                campaign = self.get_component("VaccinationCampaign")
                avail = campaign.vaccines_available(state).astype(f)
                state = campaign.with_vaccines_administered(state)
            else:
                avail = jnp.zeros_like(S0)
            beta = f32(f32(p.beta_intercepts) * f32(p.beta_intercepts_modulation)
                       + f32(f32(p.beta_slopes) * f32(p.beta_slopes_modulation)) * lagged)
            gamma = f32(p.sir_gamma)
            frac = f32(jnp.minimum(1.0, avail / f32(S0 + 1e-10)))
            vacc = jnp.minimum(avail, S0)
            r0 = f32(beta / gamma)
            si_over_n = (S0 / p.us_state_population) * I0
            dS = f32(-beta * si_over_n * f32(1 - frac) - vacc)
            dR = f32(f32(gamma * I0) + vacc)
            dI = f32(-dS - dR)
            dV = f32(vacc)
            S = jnp.maximum(f32(S0 + dS), 0.0)
            I = jnp.maximum(f32(I0 + dI), 0.0)
            R = jnp.maximum(f32(R0 + dR), 0.0)
            V = jnp.maximum(f32(V0 + dV), 0.0)
            D = f32(f32(p.sir_mortality) * f32(R - V))
            unemployed = self.unemployment(response, p)
            productivity = self.economy(I, D, unemployed, p, d["daily_production_per_worker"], True)

        subsidy = self.subsidy(state)
        post = f32(productivity + subsidy)
        U = f32(unemployed)
        sc = sc.replace(
            susceptible=f32(S), infected=f32(I), recovered=f32(R), deaths=f32(D), vaccinated=f32(V),
            unemployed=U, postsubsidy_productivity=post,
            infected_prev=sc.infected, deaths_prev=sc.deaths,
            stringency_level_history=ring, unemployment_filter_response=response, r0=r0,
            unemployed_sum=sc.unemployed_sum + U,
            stringency_level_sum=sc.stringency_level_sum + level,
            postsubsidy_productivity_sum=sc.postsubsidy_productivity_sum + post,
            subsidy_sum=sc.subsidy_sum + subsidy,
        )
        return state.replace(scenario=sc)

    # ------------------------------------------------------------ observations
    def generate_observations(self, state: EnvState, params) -> Observed:
        f = float_dtype()
        f32 = self._f32
        p = params.scenario
        sc = state.scenario
        pop = jnp.asarray(p.us_state_population, f)
        series = jnp.stack([sc.susceptible, sc.infected, sc.recovered, sc.deaths, sc.vaccinated,
                            sc.unemployed])  # [6, n]
        agent_state = series / pop[None]
        max_prod = self.derived(p)["maximum_productivity"]
        post = f32(sc.postsubsidy_productivity / max_prod)
        lag = self.beta_delay - 1
        raw = self._level_of_day(sc.stringency_level_history, state.timestep - lag) / self.num_stringency_levels
        recorded = state.timestep - lag < 0  # Foundation reads the int64 policy there (float64 result)
        lagged = jnp.where(recorded, raw, f32(raw))
        return Observed(
            mobile={
                "agent_index": jnp.eye(self.n_agents, dtype=jnp.int32),
                "agent_state": agent_state.T,
                "agent_postsubsidy_productivity": post,
                "lagged_stringency_level": lagged,
            },
            planner={
                "agent_state": agent_state,
                "agent_postsubsidy_productivity": post,
                "lagged_stringency_level": lagged,
            },
        )

    def generate_observation_spaces(self) -> Observed:
        """Spaces of ``generate_observations`` (one agent's entry each):

        - ``agent_index`` int32 [n] one-hot, in [0, 1] (mobile agents only).
        - ``agent_state`` float [6] per agent ([6, n] for the planner):
          (S, I, R, D, V, unemployed) / N. S, I, R and V are clipped at 0, so
          in [0, inf); deaths (mortality x (R - V)) and unemployment (a
          fitted filter) are left unbounded.
        - ``agent_postsubsidy_productivity`` float [] ([n] for the planner):
          (productivity + subsidy) / max productivity in [0, inf).
        - ``lagged_stringency_level`` float [] ([n]): level / levels in [0, 1]
          (widened by ``ROUNDING_SLACK`` for the division).
        """
        n = self.n_agents
        f = float_dtype()
        low = np.array([0.0, 0.0, 0.0, -np.inf, 0.0, -np.inf])
        return Observed(
            mobile={
                "agent_index": Box(0, 1, (n,), np.int32),
                "agent_state": Box(low, np.inf, (6,), f),
                "agent_postsubsidy_productivity": Box(0.0, np.inf, (), f),
                "lagged_stringency_level": Box(0.0, 1.0, (), f).widen(),
            },
            planner={
                "agent_state": Box(low[:, None], np.inf, (6, n), f),
                "agent_postsubsidy_productivity": Box(0.0, np.inf, (n,), f),
                "lagged_stringency_level": Box(0.0, 1.0, (n,), f).widen(),
            },
        )

    # ------------------------------------------------------------ rewards
    def compute_reward(self, state: EnvState, params):
        f32 = self._f32
        p = as_float_tree(params.scenario)
        sc = state.scenario
        d = self.derived(p)
        eta = f32(p.economic_reward_crra_eta)
        vol = p.value_of_life
        md = f32(sc.deaths - sc.deaths_prev)
        post, subsidy = sc.postsubsidy_productivity, self.subsidy(state)
        rounding = self.float32_rounding

        # Agents (float32 arithmetic in Foundation).
        h = f32(-md * vol / d["agents_norm"])
        e = crra_nonlinearity(f32(post / d["agents_norm"]), eta, rounding)
        h = f32(min_max_normalization(h, f32(p.min_marginal_agent_health_index), f32(p.max_marginal_agent_health_index),
                         rounding))
        e = f32(min_max_normalization(e, f32(p.min_marginal_agent_economic_index), f32(p.max_marginal_agent_economic_index),
                         rounding))
        wh = d["agent_health_weight"]
        we = f32(1 - wh)
        rew_a = f32(f32(f32(wh * h) + f32(we * e)) / f32(wh + we))
        rew_a = f32(rew_a / p.reward_normalization_factor)

        # Planner (health in float64, economy in float32 in Foundation).
        hp = -f32(jnp.sum(md)) * vol / d["planner_norm"]
        cost = f32(f32(1 + f32(p.risk_free_interest_rate)) * f32(jnp.sum(subsidy)))
        ep = crra_nonlinearity(f32(f32(f32(jnp.sum(post)) - cost) / d["planner_norm"]), eta, rounding)
        hp = min_max_normalization(hp, f32(p.min_marginal_planner_health_index), f32(p.max_marginal_planner_health_index),
                      rounding, float32_x=False)
        ep = f32(min_max_normalization(ep, f32(p.min_marginal_planner_economic_index),
                          f32(p.max_marginal_planner_economic_index), rounding))
        whp = d["planner_health_weight"]
        wep = f32(1 - whp)
        rew_p = (whp * hp + f32(wep * ep)) / f32(whp + wep) / p.reward_normalization_factor

        sc = sc.replace(
            health_index=f32(sc.health_index + h),
            economic_index=f32(sc.economic_index + e),
            planner_health_index=f32(sc.planner_health_index + hp),
            planner_economic_index=f32(sc.planner_economic_index + ep),
        )
        return PerKind(mobile=rew_a, planner=rew_p), state.replace(scenario=sc)

    # ------------------------------------------------------------ metrics
    def scenario_metrics(self, state: EnvState, params) -> dict:
        """Foundation's metrics (``covid19_env.py``, ``scenario_metrics``): each
        US state's, then the nation's (``usa/...``).

        ``usa/health_index_at_end_of_episode`` and
        ``usa/economic_index_at_end_of_episode`` are the planner's (Foundation
        reads them from the planner's state): an economy without a planner
        (``n_planners=0``) reports neither; several planners share the
        planner's reward and so these indices, reported once under Foundation's
        ``usa/`` keys.
        """
        f = float_dtype()
        f32 = self._f32
        sc = state.scenario
        pop = jnp.asarray(params.scenario.us_state_population, f)
        us_pop = jnp.asarray(params.scenario.us_population, f)
        T = float(self.episode_length)
        trunc = jnp.trunc  # Foundation's "Total ..." fields are int32
        per_state = {
            "infected (millions)": trunc(sc.infected) / 1e6,
            "recovered (millions)": trunc(sc.recovered) / 1e6,
            "deaths (millions)": trunc(sc.deaths) / 1e6,
            "mean_unemployment_rate (%)": sc.unemployed_sum / T / pop * 100,
            "mean_open_close_stringency_level": sc.stringency_level_sum / T,
            "total_productivity (billion $)": sc.postsubsidy_productivity_sum / 1e9,
            "health_index_at_end_of_episode": sc.health_index,
            "economic_index_at_end_of_episode": sc.economic_index,
        }
        m = {}
        for i, state_name in enumerate(self.data.state_names):
            for key, v in per_state.items():
                m[f"{state_name}/{key}"] = v[i]
        m["usa/vaccinated (% of population)"] = f32(jnp.sum(sc.vaccinated)) / us_pop * 100
        m["usa/deaths (thousands)"] = f32(jnp.sum(sc.deaths)) / 1e3
        m["usa/mean_unemployment_rate (%)"] = jnp.sum(sc.unemployed_sum) / T / us_pop * 100
        m["usa/total_amount_subsidized (trillion $)"] = jnp.sum(sc.subsidy_sum) / 1e12
        m["usa/total_productivity (trillion $)"] = jnp.sum(sc.postsubsidy_productivity_sum) / 1e12
        if self.planner_group_names:
            m["usa/health_index_at_end_of_episode"] = sc.planner_health_index
            m["usa/economic_index_at_end_of_episode"] = sc.planner_economic_index
        return m

    def step_info(self, state: EnvState, params) -> dict:
        """Foundation's ``global_state`` rows at ``state.timestep``: ``{key: float [n]}``
        (keys in the module docstring's ``info``)."""
        sc = state.scenario
        return {
            "Susceptible": sc.susceptible,
            "Infected": sc.infected,
            "Recovered": sc.recovered,
            "Deaths": sc.deaths,
            "Vaccinated": sc.vaccinated,
            "Unemployed": sc.unemployed,
            "Stringency Level": self.stringency_level(state),
            "Subsidy": self.subsidy(state),
            "Postsubsidy Productivity": sc.postsubsidy_productivity,
        }

    # ------------------------------------------------------------ host-side views
    def foundation_attributes(self) -> dict:
        """Foundation's ``current_date``, ``np_float_dtype``, ``np_int_dtype`` and WarpDrive
        hooks (``foundation_attributes.covid_attributes``)."""
        return {**super().foundation_attributes(), **covid_attributes(self)}

    def current_date(self, state) -> str:
        """Host-side: the simulated date at ``state.timestep`` ("YYYY-MM-DD")."""
        t = int(np.asarray(state.timestep))
        return datetime.strftime(self.start_date + timedelta(days=t), self.date_format)

    def _step_only_fields(self, state) -> CarriedStateFields | None:
        """Host-side: the values behind the state fields Foundation writes only in
        steps: the current ones after the first step, at timestep 0 those the
        previous episodes left (``carried_fields``), or None before any step."""
        sc = jax.tree.map(np.asarray, state.scenario)
        if int(np.asarray(state.timestep)) > 0:
            return CarriedStateFields(
                stepped=np.bool_(True), r0=sc.r0, unemployed=sc.unemployed, vaccinated=sc.vaccinated,
                subsidy=np.asarray(self.subsidy(state)), postsubsidy_productivity=sc.postsubsidy_productivity,
            )
        return sc.carried_fields if bool(sc.carried_fields.stepped) else None

    def agent_state_fields(self, state) -> dict:
        """Host-side: Foundation's per-state ``agent.state`` fields, ``{field: np.ndarray [n]}``.

        ``Total Susceptible``, ``New Infections``, ``Total Infected``, ``Total
        Recovered``, ``Total Deaths``, ``Total Vaccinated`` (people, int32), ``New
        Deaths`` (people, float64), ``Health Index``, ``Economic Index`` (float32
        [n, 1]: one-element arrays per state, as Foundation's),
        ``Date`` (str); after the first step also ``R0`` (float32; not with
        ``use_real_world_data``, whose steps skip the SIR model, as in Foundation),
        ``Total Unemployed`` (int32), ``New Subsidy Received`` and ``Postsubsidy
        Productivity`` (float32, US$/day). Foundation's reset leaves those
        step-only fields in place, so at timestep 0 of a later episode they show
        the last step's values (``carried_fields``); ``Total Vaccinated`` is 0
        at timestep 0 (VaccinationCampaign's reset), or without that component
        carried too (absent before the first step). The shim
        (``jaxecon.foundation``) adds them to ``agent.state`` after the
        components' fields.
        """
        sc = jax.tree.map(np.asarray, state.scenario)
        t = int(np.asarray(state.timestep))
        i32 = lambda x: np.asarray(x).astype(np.int32)  # noqa: E731
        if t == 0:
            new_inf = i32(sc.infected - sc.infected_prev)
            new_deaths = i32(sc.deaths - sc.deaths_prev).astype(np.float64)
        else:
            new_inf = i32(sc.infected - i32(sc.infected_prev))
            new_deaths = sc.deaths - i32(sc.deaths_prev)
        last = self._step_only_fields(state)
        if t == 0 and self.has_vaccination:
            vaccinated = np.zeros(self.n_agents, np.int32)
        else:
            vaccinated = None if last is None else i32(last.vaccinated)
        out = {
            "Total Susceptible": i32(sc.susceptible),
            "New Infections": new_inf,
            "Total Infected": i32(sc.infected),
            "Total Recovered": i32(sc.recovered),
            "New Deaths": new_deaths,
            "Total Deaths": i32(sc.deaths),
            "Total Vaccinated": vaccinated,
            "Health Index": sc.health_index.astype(np.float32)[:, None],
            "Economic Index": sc.economic_index.astype(np.float32)[:, None],
            "Date": np.array([self.current_date(state)] * self.n_agents),
        }
        if vaccinated is None:
            del out["Total Vaccinated"]
        if last is not None:
            if not self.use_real_world_data:  # Foundation sets it in its SIR step only
                out["R0"] = np.asarray(last.r0).astype(np.float32)
            out.update({
                "Total Unemployed": i32(last.unemployed),
                "New Subsidy Received": np.asarray(last.subsidy).astype(np.float32),
                "Postsubsidy Productivity": np.asarray(last.postsubsidy_productivity).astype(np.float32),
            })
        return out

    def _planner_sum(self, key: str, values, t: int):
        """Foundation's US total of ``key`` at timestep ``t > 0`` before its int32 cast.

        The float64 sum of the record (clipped at 0) with ``use_real_world_data``,
        else the float32 sum of the simulated per-state ``values`` [n].
        """
        if self.use_real_world_data:
            return np.sum(np.maximum(self.real_episode[key][min(t, self.T)], 0))
        return np.sum(np.asarray(values).astype(np.float32))

    def _planner_total(self, key: str, values, t: int):
        """Foundation's int32 planner ``"Total <Key>"`` at timestep ``t`` from the per-state ``values`` [n]
        (at t = 0 the sum of the agents' int32 fields)."""
        if t == 0:
            return np.int32(np.sum(np.asarray(values).astype(np.int32)))
        return np.int32(self._planner_sum(key, values, t))

    def planner_state_fields(self, state) -> dict:
        """Host-side: Foundation's planner ``state`` fields (US totals), ``{field: scalar}``.

        In Foundation's order: ``Total Susceptible``, ``New Infections``, ``Total
        Infected``, ``Total Recovered``, ``New Deaths``, ``Total Deaths``, ``Total
        Vaccinated`` (people, int32), ``Health Index``, ``Economic Index``
        (float32 [1], as Foundation's), ``Date`` (str); after the first step also ``Total
        Unemployed`` (int32), ``New Subsidy Provided`` and ``Postsubsidy
        Productivity`` (float32, US$/day), which at timestep 0 of a later
        episode show the last step's values (as ``agent_state_fields``). ``New ...`` at t > 0 is
        int32(US total at t - the int32 planner total at t - 1), as Foundation
        subtracts its previous field; at t = 0 the sum of the agents' fields.
        """
        sc = jax.tree.map(np.asarray, state.scenario)
        t = int(np.asarray(state.timestep))
        total = {
            "susceptible": self._planner_total("susceptible", sc.susceptible, t),
            "infected": self._planner_total("infected", sc.infected, t),
            "recovered": self._planner_total("recovered", sc.recovered, t),
            "deaths": self._planner_total("deaths", sc.deaths, t),
        }
        if t == 0:
            a = self.agent_state_fields(state)
            new = {k: np.int32(np.sum(a[f"New {k.capitalize()}"])) for k in ("infections", "deaths")}
        else:
            new = {
                "infections": np.int32(self._planner_sum("infected", sc.infected, t)
                                       - self._planner_total("infected", sc.infected_prev, t - 1)),
                "deaths": np.int32(self._planner_sum("deaths", sc.deaths, t)
                                   - self._planner_total("deaths", sc.deaths_prev, t - 1)),
            }
        out = {
            "Total Susceptible": total["susceptible"],
            "New Infections": new["infections"],
            "Total Infected": total["infected"],
            "Total Recovered": total["recovered"],
            "New Deaths": new["deaths"],
            "Total Deaths": total["deaths"],
            "Total Vaccinated": np.int32(np.sum(sc.vaccinated)),
            "Health Index": np.asarray([sc.planner_health_index], np.float32),
            "Economic Index": np.asarray([sc.planner_economic_index], np.float32),
            "Date": self.current_date(state),
        }
        last = self._step_only_fields(state)
        if last is not None:
            out["Total Unemployed"] = np.int32(np.sum(last.unemployed))
            out["New Subsidy Provided"] = np.float32(np.sum(last.subsidy))
            out["Postsubsidy Productivity"] = np.float32(np.sum(last.postsubsidy_productivity))
        return out
