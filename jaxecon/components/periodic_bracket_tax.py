"""PeriodicBracketTax (shorthand ``PeriodicTax``): bracketed income tax, equal lump-sum rebates.

Follows ``ai_economist/foundation/components/redistribution.py`` (and the
annealing helpers of ``components/utils.py``). The schedule maths live in
``jaxecon.components.tax_schedules``, the "saez" model's estimator in
``jaxecon.components.saez``.

Income is taxed once per tax period with a bracketed marginal schedule, and
the revenue is handed back to every mobile agent in equal lump sums.

Brackets (``bracket_spacing``): "us-federal" -> cutoffs
``[0, 9700, 39475, 84200, 160725, 204100, 510300] / usd_scaling`` (7
brackets; ``n_brackets`` and ``top_bracket_cutoff`` are ignored); "linear" ->
``linspace(0, top_bracket_cutoff, n_brackets)``; "log" -> ``[0] +
2 ** linspace(log2(top / 2**(n - 2)), log2(top), n - 1)``. Bracket b covers
incomes ``[cutoff_b, cutoff_{b+1})``, the last one is open-ended. Brackets are
labelled ``"{:03d}".format(int(cutoff))`` (``int`` truncates, so "log"
cutoffs ``[0, 12.5, 25, 50, 100]`` are labelled 000, 012, 024, 049, 099 -
quirk Q8); labels name the planner's action subspaces and the metrics.

Rates (``tax_model``):
    "model_wrapper": the planner picks, per bracket, an index into the
        discrete rate table ``arange(rate_min, rate_max + rate_disc,
        rate_disc)`` (entries <= rate_max; 21 rates 0, 0.05, ..., 1 by default).
    "us-federal-single-filer-2018-scaled": the 2018 rates
        ``[.10, .12, .22, .24, .32, .35, .37]`` capped at the current maximum.
    "fixed-bracket-rates": ``fixed_bracket_rates`` capped at the current maximum.
    "saez": rates from an adaptation of Saez's optimal-tax formula, estimated
        from a buffer of the last 500 (income, marginal rate) observations;
        uniformly random rates in ``[rate_min, max]`` until the buffer holds 500.
The current maximum is ``rate_max``, or with ``tax_annealing_schedule =
[warmup, slope]`` the annealed limit ``rate_max * clip(slope * (c - warmup),
0, 1)`` with c = completed episodes (the model_wrapper planner is restricted
through its masks instead, and the limit is not applied to its rates - quirk
Q7). As in Foundation, the limit is refreshed when the first observation of
an episode is made, so the reset observation still uses the limit of the
previous episode, ``c - 1`` (the rates used for taxes never do).

Tax cycle (per step, ``tax_cycle_pos`` starts at 1 at reset):
    1. pos == 1 (first day of a period): model_wrapper reads the planner's
       action of every bracket (local action k >= 1 sets the rate index to
       k - 1; k = 0 keeps the previous index - indices persist across periods
       and reset to 0 at episode start, quirk Q6); saez recomputes its rates.
       The rates are cached for the ``curr_rates`` observation.
    2. pos >= period (tax day): for every agent, income = total Coin endowment
       (inventory + escrow) - its endowment after the previous tax day (or at
       reset); tax = sum_b rate_b * min(size_b, max(0, income - cutoff_b));
       paid = min(inventory Coin, tax) (escrow is never taxed); inventory Coin
       -= paid. Then every agent receives lump_sum = sum(paid) / n_agents and
       its new endowment is remembered. pos := 0.
    3. pos += 1.
With period P, rates are chosen by the planner's action on steps 1, P + 1,
2P + 1, ... and taxes are collected on steps P, 2P, ...

The tax is an explicit differentiable function of the traced ``Params``
leaves ``bracket_cutoffs`` and ``disc_rates`` (and ``fixed_rates``):
``jax.grad`` of collected taxes or welfare with respect to the schedule works.
The ``bracket_temperature`` leaf (jaxecon only, default 0 = the reference's
exact brackets) switches taxes and marginal rates to a soft bracket
assignment, smooth in income and cutoffs (``soft_taxes_due``).

Actions (planner, model_wrapper with taxes enabled only): one subspace per
bracket, ``TaxIndexBracket_<label>``, with ``len(disc_rates)`` actions.
Masks (planner): on steps where pos == 1 (the reset observation and the one
after each tax day) all rates, or with annealing those with
``|rate| <= max|rate| * clip(slope * (c - warmup), 0, 1)``; otherwise none
(only the subspaces' NO-OPs stay valid). Masks are advisory (quirk Q7).

Observations:
    planner ``"p"``: ``is_tax_day`` (pos >= period), ``is_first_day`` (pos == 1),
        ``tax_phase`` (pos / period), ``last_incomes`` float [n] (last period's
        incomes / period, sorted ascending), ``curr_rates`` float [B].
    mobile ``"a"``: the same five, plus ``marginal_rate``: the current rate
        at the agent's income so far this period (0 when negative); with the
        jaxecon-only ``observed_incomes=K``, ``last_incomes`` float [K]: the
        sorted incomes at K evenly spaced ranks.
    planner per agent ``"pa"`` (``p<i>``): ``last_income`` (income_i / period),
        ``last_marginal_rate``, ``curr_marginal_rate``.

Metrics (``PeriodicTax/...``): ``avg_bracket_rate/<label>`` (mean rate over the
episode's tax days; NaN before the first, quirk Q25), ``bracket_occupancy/
<label>`` (share of incomes that fell in the bracket); with taxes enabled also
``avg_effective_tax_rate`` (mean of paid / max(1e-6, income); NaN before the
first tax day), ``total_collected_taxes``, ``avg_tax_rate/poorest`` and
``/richest`` (the agents with the least / most Coin now: total paid / max(0.001,
sum of positive incomes)), and for saez ``saez/estimated_elasticity``.

Dense log (``PeriodicTax``): ``[]`` except on tax days: ``{"schedule": rates,
"cutoffs": cutoffs, "<i>": {"income", "tax_paid", "marginal_rate",
"effective_rate", "lump_sum"}}``; no log at all when ``disable_taxes``.

State: ``state.components["PeriodicBracketTax"]`` is a ``PeriodicBracketTaxState``
(fields below); the "saez" model's memory is its ``saez`` field, a
``jaxecon.components.saez.SaezState`` (None for the other models).

Saez persistence: Foundation keeps the saez buffer, elasticity estimates and
running-average rates across episodes (a reset does not clear them). A
functional ``env.reset(key, params)`` builds a fresh state, so it starts them
empty; ``env.reset(key, params, prev_state=state)`` continues them through
``carry_over`` (the stateful shim always does). The random warm-up rates
are drawn from the step key. As in Foundation, the reset observation's ``curr_rates`` still shows the previous
episode's saez rates; the new episode's first period starts from
``running_avg_tax_rates``. Foundation's multi-replica "global" buffer
(``set_global_saez_buffer``) has no counterpart; ``load_foundation_state``
reads the buffer Foundation uses (``saez_buffer``).

Usage::

    env = jaxecon.make("layout_from_file/simple_wood_and_stone", ...,
                       components=[("Build", {}), ("Gather", {}),
                                   ("PeriodicBracketTax", {"period": 100})])
    params = env.default_params
    tax = params.components["PeriodicBracketTax"]
    params = params.replace(components={**params.components,
        "PeriodicBracketTax": tax.replace(disc_rates=tax.disc_rates * 0.5)})
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.components import saez as saez_model
from jaxecon.components.saez import PARETO_WEIGHT_TYPES, SAEZ_BUFFER_SIZE, SaezState
from jaxecon.components.tax_schedules import (
    BRACKET_SPACINGS,
    US_FEDERAL_CUTOFFS_USD,
    US_FEDERAL_RATES,
    annealed_tax_limit,
    bracket_cutoffs,
    bracket_index,
    marginal_rate,
    taxes_due,
)
from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.backend import sort_floats
from jaxecon.core.bounds import bound_of, bounded
from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.groups import MOBILE, PLANNER
from jaxecon.core.numerics import numpy_order_sum
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState, float_dtype
from jaxecon.spaces import Box

TAX_MODELS = (
    "model_wrapper",
    "us-federal-single-filer-2018-scaled",
    "saez",
    "fixed-bracket-rates",
)


@struct.dataclass
class PeriodicBracketTaxParams:
    """Numeric parameters of PeriodicBracketTax (all traced).

    Attributes:
        bracket_cutoffs: float [B] lower income edge of each bracket (coin per period).
        disc_rates: float [K] the planner's discrete rate table (model_wrapper;
            empty for the other models).
        fixed_rates: float [B] the schedule of the us-federal and
            fixed-bracket-rates models (zeros otherwise), before capping.
        rate_min: float [] lowest rate (saez clip and random warm-up).
        rate_max: float [] highest rate (0 when taxes are disabled).
        annealing_warmup: float [] tax_annealing_schedule[0] (unused without one).
        annealing_slope: float [] tax_annealing_schedule[1] (unused without one).
        saez_fixed_elas: float [] elasticity the saez formula uses when
            ``saez_fixed_elas`` was given (unused otherwise).
        bracket_temperature: float [] (coin) jaxecon only: 0 (default) = the
            reference's exact brackets; > 0 = the soft bracket assignment
            (``soft_taxes_due`` / ``soft_marginal_rate``) for taxes and
            marginal rates, a relaxation for gradients w.r.t. cutoffs and
            incomes (bracket occupancy stays hard). See docs/differentiability.md.
        tax_model_index: int32 [] jaxecon only, with ``tax_model_in_params``:
            the tax model in force, an index into ``TAX_MODELS``; None (no
            leaf) otherwise.
    """

    bracket_cutoffs: np.ndarray = struct.field(  # no bound: the lowest edge may move below 0 (no income lies there)
        default_factory=lambda: np.array(US_FEDERAL_CUTOFFS_USD) / 1000.0
    )
    disc_rates: np.ndarray = bounded(
        default_factory=lambda: (lambda r: r[r <= 1.0])(np.arange(0.0, 1.05, 0.05)), minimum=0, maximum=1
    )
    fixed_rates: np.ndarray = bounded(default_factory=lambda: np.zeros(7), minimum=0, maximum=1)
    rate_min: float = bounded(0.0, minimum=0, maximum=1)
    rate_max: float = bounded(1.0, minimum=0, maximum=1)
    annealing_warmup: float = 0.0
    annealing_slope: float = 0.0
    saez_fixed_elas: float = bounded(0.0, minimum=0)
    bracket_temperature: float = bounded(0.0, minimum=0)
    tax_model_index: Any = bounded(None, minimum=0, maximum=len(TAX_MODELS) - 1)


@struct.dataclass
class PeriodicBracketTaxState:
    """PeriodicBracketTax's sub-state, ``state.components["PeriodicBracketTax"]``.

    n = n_agents, B = brackets; coin amounts are per tax period unless said.

    Attributes:
        tax_cycle_pos: int32 [] position in the tax period (1..period; 1 = first day).
        rate_idx: int32 [B] model_wrapper rate indices into ``disc_rates``.
        saez_rates: float [B] saez bracket rates (before capping).
        curr_rates_obs: float [B] rates cached on the period's first day (the
            ``curr_rates`` observation).
        last_coin: float [n] Coin endowment (coin) after the last tax day (or reset).
        last_income: float [n] the last tax day's incomes (coin).
        last_marginal_rate: float [n] the rate at each of those incomes.
        last_effective_tax_rate: float [n] tax paid / max(1e-6, income).
        last_tax_paid: float [n] tax each agent paid (coin).
        last_lump_sum: float [] the rebate each agent received (coin).
        last_schedule: float [B] the rates of the last tax day.
        last_cutoffs: float [B] the cutoffs of the last tax day (coin).
        enacted: bool [] taxes were collected on the last step (the dense log
            shows the ``last_*`` values then).
        n_tax_days: int32 [] tax days this episode.
        schedule_sum: float [B] sum of the rates over this episode's tax days.
        occupancy: int32 [B] incomes that fell in each bracket this episode.
        total_collected_taxes: float [] coin collected this episode.
        effective_rate_sum: float [] sum of all effective rates this episode.
        income_pos_sum: float [n] sum of positive incomes this episode (coin).
        tax_paid_sum: float [n] tax paid this episode (coin).
        saez: ``SaezState`` for the "saez" tax model and with
            ``tax_model_in_params`` (buffer, elasticity estimates,
            running-average rates), None otherwise.
    """

    tax_cycle_pos: jax.Array
    rate_idx: jax.Array
    saez_rates: jax.Array
    curr_rates_obs: jax.Array
    last_coin: jax.Array
    last_income: jax.Array
    last_marginal_rate: jax.Array
    last_effective_tax_rate: jax.Array
    last_tax_paid: jax.Array
    last_lump_sum: jax.Array
    last_schedule: jax.Array
    last_cutoffs: jax.Array
    enacted: jax.Array
    n_tax_days: jax.Array
    schedule_sum: jax.Array
    occupancy: jax.Array
    total_collected_taxes: jax.Array
    effective_rate_sum: jax.Array
    income_pos_sum: jax.Array
    tax_paid_sum: jax.Array
    saez: SaezState | None = None


def _f(x):
    """``x`` (numbers or nested lists from Foundation) as a float array of ``float_dtype()``."""
    return jnp.asarray(np.array(x, dtype=np.float64), float_dtype())


@component_registry.add
class PeriodicBracketTax(Component, FoundationComponentHooks):
    """Periodic bracketed income tax with lump-sum redistribution (see module docstring).

    Args (Foundation's, with defaults):
        disable_taxes: bool (False) no taxes (rates forced to 0), same observations.
        tax_model: one of ``TAX_MODELS`` ("model_wrapper").
        period: int > 0 (100) steps per tax period.
        rate_min: float (0.0), rate_max: float (1.0) with 0 <= rate_min <= rate_max <= 1
            (both 0 when taxes are disabled).
        rate_disc: float > 0 (0.05) spacing of the discrete rates (model_wrapper).
            Foundation does not check it (quirk Q23).
        n_brackets: int >= 2 (5) ("linear"/"log" spacing).
        top_bracket_cutoff: float >= 10 (100) lowest income of the top bracket
            ("linear"/"log").
        usd_scaling: float > 0 (1000.0) divides the US cutoffs ("us-federal").
        bracket_spacing: "us-federal" | "linear" | "log" ("us-federal", case-insensitive).
        fixed_bracket_rates: list of B rates in [0, 1]; required by, and only
            used by, "fixed-bracket-rates".
        pareto_weight_type: "inverse_income" | "uniform" ("inverse_income") saez
            welfare weights 1 / max(1, z) or 1. Foundation fails only when the
            formula first runs; jaxecon checks at construction.
        saez_fixed_elas: None or float >= 0 (None = estimate the elasticity).
        tax_annealing_schedule: None or [warmup, slope] (None = no annealing).
    Args (jaxecon only):
        tax_model_in_params: bool (False) compile every tax model into one
            economy and select the one in force with the traced
            ``params.tax_model_index`` (default: the index of ``tax_model``),
            so that economies that differ only in their tax model share one
            compiled program (``jaxecon evaluate`` runs every planner so).
            Needs ``tax_model="model_wrapper"`` (the planner's action heads
            exist, masked to NO-OP under the other models) and taxes enabled;
            the us-federal and fixed-bracket-rates schedules are the
            ``fixed_rates`` leaf (zeros by default: give the schedule in the
            params) and the saez memory is always carried.
            Under each model the economy steps as one built with that
            ``tax_model`` (same rates, taxes and observations).
        observed_incomes: None (Foundation's: every mobile agent observes all
            n sorted last incomes, n values per agent, n * n per step) or an
            int K in 2..n: the mobile agents' ``last_incomes`` holds the sorted
            last incomes at K evenly spaced ranks, the lowest and the highest
            included (rank ``round(j * (n - 1) / (K - 1))`` for j = 0..K-1;
            K = n is Foundation's), so that an agent's observation does not
            grow with the number of agents. The planner observes all n.
    Raises:
        ValueError: for any value outside these ranges, a "us-federal-single-
            filer-2018-scaled" model without "us-federal" spacing, a missing or
            malformed ``fixed_bracket_rates``, two brackets whose labels
            coincide (Foundation would merge their action subspaces), or
            ``tax_model_in_params`` without "model_wrapper" or with
            ``disable_taxes``.
    """

    name = "PeriodicBracketTax"
    component_type = "PeriodicTax"
    required_entities = ("Coin",)
    agent_subclasses = (MOBILE, PLANNER)
    Params = PeriodicBracketTaxParams

    def __init__(
        self,
        spec,
        disable_taxes=False,
        tax_model="model_wrapper",
        period=100,
        rate_min=0.0,
        rate_max=1.0,
        rate_disc=0.05,
        n_brackets=5,
        top_bracket_cutoff=100,
        usd_scaling=1000.0,
        bracket_spacing="us-federal",
        fixed_bracket_rates=None,
        pareto_weight_type="inverse_income",
        saez_fixed_elas=None,
        tax_annealing_schedule=None,
        tax_model_in_params=False,
        observed_incomes=None,
    ):
        super().__init__(spec)
        p = "PeriodicBracketTax."
        if observed_incomes is not None:
            observed_incomes = cfg.check_int(p + "observed_incomes", observed_incomes, minimum=2)
            if observed_incomes > spec.n_agents:
                raise ValueError(f"{p}observed_incomes must be None or an int in 2..n_agents "
                                 f"({spec.n_agents}), got {observed_incomes}")
        self.observed_incomes = observed_incomes
        self.disable_taxes = cfg.check_bool(p + "disable_taxes", disable_taxes)
        if tax_model not in TAX_MODELS:
            raise ValueError(f"{p}tax_model must be one of {list(TAX_MODELS)}, got {tax_model!r}")
        self.tax_model = tax_model
        self.tax_model_in_params = cfg.check_bool(p + "tax_model_in_params", tax_model_in_params)
        if self.tax_model_in_params and (tax_model != "model_wrapper" or self.disable_taxes):
            raise ValueError(
                f'{p}tax_model_in_params needs tax_model "model_wrapper" and disable_taxes False '
                f"(the planner's actions exist; params.tax_model_index picks the model), got "
                f"tax_model {tax_model!r}, disable_taxes {self.disable_taxes}"
            )
        self.period = cfg.check_int(p + "period", period, minimum=1)
        P = PeriodicBracketTaxParams
        self.rate_min = 0.0 if self.disable_taxes else bound_of(P, "rate_min").check_float(p + "rate_min", rate_min)
        self.rate_max = 0.0 if self.disable_taxes else bound_of(P, "rate_max").check_float(p + "rate_max", rate_max)
        if not self.rate_min <= self.rate_max:
            raise ValueError(
                f"{p}rate_min/rate_max must satisfy rate_min <= rate_max, got {self.rate_min}, {self.rate_max}"
            )
        self.rate_disc = cfg.check_float(p + "rate_disc", rate_disc)
        self.use_discretized_rates = self.tax_model == "model_wrapper"
        if self.use_discretized_rates:
            if self.rate_disc <= 0:
                raise ValueError(f"{p}rate_disc must be > 0, got {rate_disc!r}")
            disc = np.arange(self.rate_min, self.rate_max + self.rate_disc, self.rate_disc)
            disc = disc[disc <= self.rate_max]
            if not (len(disc) > 1 or self.disable_taxes):
                raise ValueError(
                    f"{p}rate_min/rate_max/rate_disc give {len(disc)} discrete rate(s); need >= 2"
                )
            self.disc_rates = disc
        else:
            self.disc_rates = np.zeros(0)
        self.n_disc_rates = len(self.disc_rates)

        self.bracket_spacing = cfg.check_choice(p + "bracket_spacing", bracket_spacing, BRACKET_SPACINGS)
        self.n_brackets = cfg.check_int(p + "n_brackets", n_brackets, minimum=2)
        self.top_bracket_cutoff = cfg.check_float(p + "top_bracket_cutoff", top_bracket_cutoff, minimum=10)
        self.usd_scaling = cfg.check_float(p + "usd_scaling", usd_scaling)
        if self.usd_scaling <= 0:
            raise ValueError(f"{p}usd_scaling must be > 0, got {usd_scaling!r}")
        self.bracket_cutoffs = bracket_cutoffs(
            self.bracket_spacing, self.n_brackets, self.top_bracket_cutoff, self.usd_scaling
        )
        if self.bracket_spacing == "us-federal":
            self.n_brackets = len(self.bracket_cutoffs)
            self.top_bracket_cutoff = float(self.bracket_cutoffs[-1])
        #: Bracket labels, "{:03d}".format(int(cutoff)) (quirk Q8).
        self.labels = tuple("{:03d}".format(int(c)) for c in self.bracket_cutoffs)
        if len(set(self.labels)) != len(self.labels):
            raise ValueError(
                f"{p}brackets {list(self.bracket_cutoffs)} get the labels {list(self.labels)}; "
                "labels (int of each cutoff) must be distinct - raise top_bracket_cutoff or "
                "lower n_brackets"
            )
        self.subspace_names = tuple(f"TaxIndexBracket_{k}" for k in self.labels)

        if self.tax_model == "us-federal-single-filer-2018-scaled" and self.bracket_spacing != "us-federal":
            raise ValueError(
                f'{p}tax_model "us-federal-single-filer-2018-scaled" needs bracket_spacing '
                f'"us-federal", got {bracket_spacing!r}'
            )
        if self.tax_model == "fixed-bracket-rates":
            if not isinstance(fixed_bracket_rates, (tuple, list)):
                raise ValueError(
                    f'{p}fixed_bracket_rates must be a list of {self.n_brackets} rates for '
                    f'tax_model "fixed-bracket-rates", got {fixed_bracket_rates!r}'
                )
            rates = np.array(fixed_bracket_rates, dtype=np.float64)
            bound = bound_of(P, "fixed_rates")
            if len(rates) != self.n_brackets or not np.all(np.isfinite(rates) & ~bound.below(rates) & ~bound.above(rates)):
                raise ValueError(
                    f"{p}fixed_bracket_rates must hold {self.n_brackets} rates, each "
                    f"{bound.describe()}, got {fixed_bracket_rates!r}"
                )
            self.fixed_rates = rates
        elif self.tax_model == "us-federal-single-filer-2018-scaled":
            self.fixed_rates = np.array(US_FEDERAL_RATES)
        else:
            self.fixed_rates = np.zeros(self.n_brackets)

        self.pareto_weight_type = cfg.check_choice(
            p + "pareto_weight_type", pareto_weight_type, PARETO_WEIGHT_TYPES
        )
        self.saez_fixed_elas = (
            None if saez_fixed_elas is None
            else bound_of(P, "saez_fixed_elas").check_float(p + "saez_fixed_elas", saez_fixed_elas)
        )
        if tax_annealing_schedule is None:
            self.tax_annealing_schedule = None
        else:
            if not isinstance(tax_annealing_schedule, (tuple, list)) or len(tax_annealing_schedule) != 2:
                raise ValueError(
                    f"{p}tax_annealing_schedule must be None or [warmup, slope], "
                    f"got {tax_annealing_schedule!r}"
                )
            self.tax_annealing_schedule = (
                cfg.check_float(p + "tax_annealing_schedule[0]", tax_annealing_schedule[0]),
                cfg.check_float(p + "tax_annealing_schedule[1]", tax_annealing_schedule[1]),
            )

    # ------------------------------------------------------------ structure
    def default_params(self):
        warmup, slope = self.tax_annealing_schedule or (0.0, 0.0)
        return PeriodicBracketTaxParams(
            bracket_cutoffs=np.array(self.bracket_cutoffs, dtype=np.float64),
            disc_rates=np.array(self.disc_rates, dtype=np.float64),
            fixed_rates=np.array(self.fixed_rates, dtype=np.float64),
            rate_min=self.rate_min,
            rate_max=self.rate_max,
            annealing_warmup=warmup,
            annealing_slope=slope,
            saez_fixed_elas=0.0 if self.saez_fixed_elas is None else self.saez_fixed_elas,
            tax_model_index=np.int32(TAX_MODELS.index(self.tax_model)) if self.tax_model_in_params else None,
        )

    def unread_params(self) -> tuple[str, ...]:
        """Leaves of ``PeriodicBracketTaxParams`` this configuration never reads.

        Changing them changes nothing and their gradients are zero by
        construction (``jaxecon.analysis`` refuses them as ``wrt``):
        ``fixed_rates`` except for "fixed-bracket-rates" /
        "us-federal-single-filer-2018-scaled"; ``disc_rates`` except for
        "model_wrapper"; ``saez_fixed_elas`` except for "saez" with a fixed
        elasticity; ``rate_min`` except for "saez"; ``rate_max`` for
        "model_wrapper"; ``annealing_warmup``/``annealing_slope`` without a
        ``tax_annealing_schedule``; all rate leaves with ``disable_taxes``.
        """
        if self.tax_model_in_params:  # every model compiled in: every rate leaf may be read
            return tuple(k for k in ("annealing_warmup", "annealing_slope") if self.tax_annealing_schedule is None)
        model = self.tax_model
        unread = {
            "fixed_rates": model not in ("fixed-bracket-rates", "us-federal-single-filer-2018-scaled"),
            "disc_rates": model != "model_wrapper",
            "saez_fixed_elas": model != "saez" or self.saez_fixed_elas is None,
            "rate_min": model != "saez",
            "rate_max": model == "model_wrapper",
            "annealing_warmup": self.tax_annealing_schedule is None,
            "annealing_slope": self.tax_annealing_schedule is None,
        }
        if self.disable_taxes:
            unread = dict.fromkeys(unread, True)
        return tuple(k for k, v in unread.items() if v)

    @property
    def has_planner_actions(self) -> bool:
        return self.tax_model == "model_wrapper" and not self.disable_taxes

    @property
    def carries_saez(self) -> bool:
        """The sub-state holds the saez memory (``saez`` model or ``tax_model_in_params``)."""
        return self.tax_model == "saez" or self.tax_model_in_params

    def model_is(self, params, model: str):
        """Whether ``model`` is in force: a Python bool, or with
        ``tax_model_in_params`` a traced bool [] from ``params.tax_model_index``."""
        if self.tax_model_in_params:
            return jnp.asarray(params.tax_model_index) == TAX_MODELS.index(model)
        return self.tax_model == model

    def get_n_actions(self, agent_cls_name):
        if agent_cls_name == PLANNER and self.has_planner_actions:
            return [(name, self.n_disc_rates) for name in self.subspace_names]
        return 0

    # ------------------------------------------------------------ rates
    def rate_limit(self, state: EnvState, params: PeriodicBracketTaxParams):
        """Current maximum rate (``curr_rate_max``): rate_max, or the annealed limit.

        The annealed limit uses the episode counter c, except in the reset
        observation (timestep 0), which still sees c - 1 as in Foundation.
        """
        if self.tax_annealing_schedule is None:
            return jnp.asarray(params.rate_max, float_dtype())
        c = state.completions
        c = jnp.where(state.timestep == 0, jnp.maximum(c - 1, 0), c)
        return annealed_tax_limit(
            c.astype(float_dtype()), params.annealing_warmup, params.annealing_slope, params.rate_max
        )

    def curr_marginal_rates(self, state: EnvState, sub: PeriodicBracketTaxState, params) -> jax.Array:
        """float [B]: the schedule in force (``curr_marginal_rates``), given this
        component's sub-state ``sub``."""
        f = float_dtype()
        if self.disable_taxes:  # structural: no parameter value turns taxes back on
            return jnp.zeros(self.n_brackets, f)
        if self.tax_model_in_params:
            limit = self.rate_limit(state, params)
            return jnp.where(
                self.model_is(params, "model_wrapper"),
                jnp.asarray(params.disc_rates, f)[sub.rate_idx],
                jnp.minimum(jnp.where(self.model_is(params, "saez"), sub.saez_rates,
                                      jnp.asarray(params.fixed_rates, f)), limit),
            )
        if self.tax_model == "model_wrapper":
            return jnp.asarray(params.disc_rates, f)[sub.rate_idx]
        limit = self.rate_limit(state, params)
        if self.tax_model == "saez":
            return jnp.minimum(sub.saez_rates, limit)
        return jnp.minimum(jnp.asarray(params.fixed_rates, f), limit)

    # ------------------------------------------------------------ state
    def init(self, key, params) -> PeriodicBracketTaxState:
        n, b, f = self.n_agents, self.n_brackets, float_dtype()
        return PeriodicBracketTaxState(
            tax_cycle_pos=jnp.ones((), jnp.int32),
            rate_idx=jnp.zeros(b, jnp.int32),
            saez_rates=jnp.zeros(b, f),
            curr_rates_obs=jnp.zeros(b, f),
            last_coin=jnp.zeros(n, f),
            last_income=jnp.zeros(n, f),
            last_marginal_rate=jnp.zeros(n, f),
            last_effective_tax_rate=jnp.zeros(n, f),
            last_tax_paid=jnp.zeros(n, f),
            last_lump_sum=jnp.zeros((), f),
            last_schedule=jnp.zeros(b, f),
            last_cutoffs=jnp.zeros(b, f),
            enacted=jnp.zeros((), bool),
            n_tax_days=jnp.zeros((), jnp.int32),
            schedule_sum=jnp.zeros(b, f),
            occupancy=jnp.zeros(b, jnp.int32),
            total_collected_taxes=jnp.zeros((), f),
            effective_rate_sum=jnp.zeros((), f),
            income_pos_sum=jnp.zeros(n, f),
            tax_paid_sum=jnp.zeros(n, f),
            saez=saez_model.init_saez_state(b) if self.carries_saez else None,
        )

    def reset(self, key, state: EnvState, params):
        """``additional_reset_steps``: fresh cycle and trackers; saez fields are kept."""
        old = self.sub_state(state)
        sub = self.init(key, params).replace(last_coin=state.total_endowment("Coin"))
        if self.carries_saez:
            sub = self._saez_restart(sub, old)
        sub = sub.replace(curr_rates_obs=self.curr_marginal_rates(state, sub, params))
        if self.carries_saez:
            sub = sub.replace(saez_rates=sub.saez.running_avg_tax_rates)
        return self.with_sub_state(state, sub)

    @staticmethod
    def _saez_restart(sub: PeriodicBracketTaxState, old: PeriodicBracketTaxState) -> PeriodicBracketTaxState:
        """Keep the persistent saez state (and, for the reset observation only,
        the last rates: Foundation caches ``curr_rates`` before it restarts the
        rates from ``running_avg_tax_rates``)."""
        return sub.replace(saez=old.saez, saez_rates=old.saez_rates)

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """Continue the saez buffer, estimates and running-average rates of
        ``prev_state`` in the freshly reset ``state`` (Foundation keeps them across
        episodes). Re-observe with ``env.observe(state, env_params)`` afterwards.
        No-op for the other tax models."""
        if not self.carries_saez:
            return state
        sub = self._saez_restart(self.sub_state(state), self.sub_state(prev_state))
        sub = sub.replace(curr_rates_obs=self.curr_marginal_rates(state, sub, params))
        sub = sub.replace(saez_rates=sub.saez.running_avg_tax_rates)
        return self.with_sub_state(state, sub)

    # ------------------------------------------------------------ step
    def step(self, key, state: EnvState, actions, params):
        f = float_dtype()
        sub = self.sub_state(state)
        pos = sub.tax_cycle_pos
        first = pos == 1

        # 1. First day of a period: set this period's rates.
        if self.has_planner_actions:
            new_idx = []
            for b, sname in enumerate(self.subspace_names):
                a = actions.planner[f"{self.name}.{sname}"]
                take = first & (a >= 1) & (a <= self.n_disc_rates)
                new_idx.append(jnp.where(take, a - 1, sub.rate_idx[b]))
            sub = sub.replace(rate_idx=jnp.stack(new_idx).astype(jnp.int32))
        if self.carries_saez:
            sub = jax.lax.cond(
                first & self.model_is(params, "saez"),
                lambda s: self._saez_new_rates(key, state, s, params),
                lambda s: s,
                sub,
            )
        rates = self.curr_marginal_rates(state, sub, params)
        sub = sub.replace(curr_rates_obs=jnp.where(first, rates, sub.curr_rates_obs))

        # 2. Last day of a period: collect and redistribute.
        tax_day = pos >= self.period
        cutoffs = jnp.asarray(params.bracket_cutoffs, f)
        coin = state.inventory["Coin"]
        income = state.total_endowment("Coin") - sub.last_coin
        temp = params.bracket_temperature
        due = taxes_due(income, rates, cutoffs, temp)
        paid = jnp.minimum(coin, due)
        mrate = marginal_rate(income, rates, cutoffs, temp)
        eff = paid / jnp.maximum(0.000001, income)
        net = numpy_order_sum(paid)  # Foundation adds agent by agent
        lump = net / self.n_agents
        new_coin = coin - paid + lump
        new_last_coin = new_coin + state.escrow["Coin"]
        occ = jax.nn.one_hot(bracket_index(income, cutoffs), self.n_brackets, dtype=jnp.int32).sum(0, dtype=jnp.int32)

        def on(new, old):
            return jnp.where(tax_day, new, old)

        sub = sub.replace(
            last_coin=on(new_last_coin, sub.last_coin),
            last_income=on(income, sub.last_income),
            last_marginal_rate=on(mrate, sub.last_marginal_rate),
            last_effective_tax_rate=on(eff, sub.last_effective_tax_rate),
            last_tax_paid=on(paid, sub.last_tax_paid),
            last_lump_sum=on(lump, sub.last_lump_sum),
            last_schedule=on(rates, sub.last_schedule),
            last_cutoffs=on(cutoffs, sub.last_cutoffs),
            enacted=tax_day,
            n_tax_days=sub.n_tax_days + tax_day.astype(jnp.int32),
            schedule_sum=on(sub.schedule_sum + rates, sub.schedule_sum),
            occupancy=on(sub.occupancy + occ, sub.occupancy),
            total_collected_taxes=on(sub.total_collected_taxes + net, sub.total_collected_taxes),
            effective_rate_sum=on(sub.effective_rate_sum + jnp.sum(eff), sub.effective_rate_sum),
            income_pos_sum=on(sub.income_pos_sum + jnp.maximum(0.0, income), sub.income_pos_sum),
            tax_paid_sum=on(sub.tax_paid_sum + paid, sub.tax_paid_sum),
        )
        if self.carries_saez:
            record = tax_day & self.model_is(params, "saez")
            sub = sub.replace(saez=jax.tree.map(lambda new, old: jnp.where(record, new, old),
                                                saez_model.record(sub.saez, income, mrate), sub.saez))

        # 3. Advance the cycle.
        sub = sub.replace(tax_cycle_pos=jnp.where(tax_day, 0, pos) + 1)
        inventory = {**state.inventory, "Coin": on(new_coin, coin)}
        return self.with_sub_state(state, sub, inventory=inventory)

    def _saez_new_rates(self, key, state: EnvState, sub: PeriodicBracketTaxState, params) -> PeriodicBracketTaxState:
        """``compute_and_set_new_period_rates_from_saez_formula``: ``sub`` with new
        ``saez_rates`` and saez estimates (see ``saez.new_period_rates``)."""
        rates, saez = saez_model.new_period_rates(
            key,
            sub.saez,
            jnp.asarray(params.bracket_cutoffs, float_dtype()),
            params.rate_min,
            self.rate_limit(state, params),
            self.pareto_weight_type,
            None if self.saez_fixed_elas is None else params.saez_fixed_elas,
        )
        return sub.replace(saez_rates=rates, saez=saez)

    # ------------------------------------------------------------ observation
    def observe(self, state: EnvState, params):
        f = float_dtype()
        n = self.n_agents
        sub = self.sub_state(state)
        pos = sub.tax_cycle_pos
        is_tax_day = (pos >= self.period).astype(f)
        is_first_day = (pos == 1).astype(f)
        tax_phase = pos / self.period
        last_income_obs = sub.last_income / self.period
        last_sorted = sort_floats(last_income_obs)
        curr_rates = sub.curr_rates_obs
        rates = self.curr_marginal_rates(state, sub, params)
        cutoffs = jnp.asarray(params.bracket_cutoffs, f)
        curr_mr = marginal_rate(
            state.total_endowment("Coin") - sub.last_coin, rates, cutoffs, params.bracket_temperature
        )
        common = {
            "is_tax_day": is_tax_day,
            "is_first_day": is_first_day,
            "tax_phase": tax_phase,
            "last_incomes": last_sorted,
            "curr_rates": curr_rates,
        }
        seen = common if self.observed_incomes is None else {
            **common, "last_incomes": last_sorted[self._observed_ranks()]}
        agent = {k: jnp.broadcast_to(v, (n,) + jnp.shape(v)) for k, v in seen.items()}
        agent["marginal_rate"] = curr_mr
        pa = {
            "last_income": last_income_obs,
            "last_marginal_rate": sub.last_marginal_rate,
            "curr_marginal_rate": curr_mr,
        }
        return Observed(mobile=agent, planner=common, planner_view=pa)

    def _observed_ranks(self) -> np.ndarray:
        """int [K]: the ranks of the sorted last incomes the mobile agents observe
        (``observed_incomes``)."""
        k, n = self.observed_incomes, self.n_agents
        return np.rint(np.arange(k) * (n - 1) / (k - 1)).astype(np.int32)

    def observation_spaces(self):
        """``is_tax_day``, ``is_first_day`` float [] in [0, 1]; ``tax_phase``
        float32 [] in [0, 1] (tax_cycle_pos in 1..period, over period; widened by
        ``ROUNDING_SLACK`` for the division);
        ``curr_rates`` float [B], ``marginal_rate``, ``last_marginal_rate``,
        ``curr_marginal_rate`` float [] in [0, 1] (rates are disc_rates,
        fixed_rates or saez rates, all in [0, 1] at construction; params with
        rates outside [0, 1] leave the space); ``last_incomes`` float [n] and
        ``last_income`` float [] unbounded (an income is a change of coin
        endowment, negative after a loss)."""
        f = float_dtype()
        unit = Box(0.0, 1.0, (), f)
        common = {
            "is_tax_day": unit,
            "is_first_day": unit,
            "tax_phase": Box(0.0, 1.0, (), np.float32).widen(),  # int32 / int: float32 also under x64
            "last_incomes": Box(-np.inf, np.inf, (self.n_agents,), f),
            "curr_rates": Box(0.0, 1.0, (self.n_brackets,), f),
        }
        pa = {
            "last_income": Box(-np.inf, np.inf, (), f),
            "last_marginal_rate": unit,
            "curr_marginal_rate": unit,
        }
        agent = common if self.observed_incomes is None else {
            **common, "last_incomes": Box(-np.inf, np.inf, (self.observed_incomes,), f)}
        return Observed(mobile={**agent, "marginal_rate": unit}, planner=common, planner_view=pa)

    def masks(self, state: EnvState, params):
        if not self.has_planner_actions:
            return {}
        first = self.sub_state(state).tax_cycle_pos == 1
        if self.tax_annealing_schedule is None:
            allowed = jnp.ones(self.n_disc_rates, bool)
        else:
            rates = jnp.abs(jnp.asarray(params.disc_rates, float_dtype()))
            limit = annealed_tax_limit(
                state.completions.astype(float_dtype()),
                params.annealing_warmup,
                params.annealing_slope,
                jnp.max(rates),
            )
            allowed = rates <= limit
        m = allowed & first & self.model_is(params, "model_wrapper")
        return PerKind(planner={f"{self.name}.{s}": m for s in self.subspace_names})

    # ------------------------------------------------------------ logs
    def metrics(self, state: EnvState, params):
        f = float_dtype()
        sub = self.sub_state(state)
        days = sub.n_tax_days
        nan = jnp.asarray(jnp.nan, f)
        avg_rates = jnp.where(days > 0, sub.schedule_sum / jnp.maximum(days, 1), nan)
        occ = sub.occupancy
        occ_share = occ / jnp.maximum(1, jnp.sum(occ))
        out = {}
        for b, k in enumerate(self.labels):
            out[f"avg_bracket_rate/{k}"] = avg_rates[b]
            out[f"bracket_occupancy/{k}"] = occ_share[b]
        if not self.disable_taxes:
            n_rates = days * self.n_agents
            out["avg_effective_tax_rate"] = jnp.where(
                n_rates > 0, sub.effective_rate_sum / jnp.maximum(n_rates, 1), nan
            )
            out["total_collected_taxes"] = sub.total_collected_taxes
            endow = state.total_endowment("Coin")
            for i, tag in ((jnp.argmin(endow), "poorest"), (jnp.argmax(endow), "richest")):
                out[f"avg_tax_rate/{tag}"] = sub.tax_paid_sum[i] / jnp.maximum(
                    0.001, sub.income_pos_sum[i]
                )
            if self.carries_saez:
                out["saez/estimated_elasticity"] = jnp.where(self.model_is(params, "saez"), sub.saez.elas_tm1, nan)
        return out

    def dense_log_entry(self, prev_state, state):
        if self.disable_taxes:
            return None
        sub = jax.device_get(self.sub_state(state))
        if not bool(sub.enacted):
            return []
        entry = {
            "schedule": [float(x) for x in sub.last_schedule],
            "cutoffs": [float(x) for x in sub.last_cutoffs],
        }
        for i in range(self.n_agents):
            entry[str(i)] = {
                "income": float(sub.last_income[i]),
                "tax_paid": float(sub.last_tax_paid[i]),
                "marginal_rate": float(sub.last_marginal_rate[i]),
                "effective_rate": float(sub.last_effective_tax_rate[i]),
                "lump_sum": float(sub.last_lump_sum),
            }
        return entry

    # ------------------------------------------------------------ interop
    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with this sub-state copied from Foundation's live component.

        Reads ``ai_economist/foundation/components/redistribution.py``'s
        ``PeriodicBracketTax`` attributes (``tax_cycle_pos``,
        ``curr_rate_indices``, ``curr_bracket_tax_rates``, ``_curr_rates_obs``,
        ``last_*``, ``saez_buffer`` and the estimates) and rebuilds the episode
        trackers from its ``_schedules``, ``_occupancy``, ``taxes`` and
        ``all_effective_tax_rates`` lists.

        Raises:
            ValueError: if the reference has a different number of brackets.
        """
        ref, n = ref_component, self.n_agents
        if len(ref.curr_rate_indices) != self.n_brackets:
            raise ValueError(
                f"reference PeriodicBracketTax has {len(ref.curr_rate_indices)} brackets, "
                f"this one {self.n_brackets}"
            )
        sched = [list(ref._schedules[k]) for k in self.labels]
        income_pos, paid = np.zeros(n), np.zeros(n)
        for day in ref.taxes[(ref.period - 1)::ref.period]:
            if isinstance(day, dict):
                for i in range(n):
                    income_pos[i] += max(0.0, day[str(i)]["income"])
                    paid[i] += day[str(i)]["tax_paid"]
        sub = self.init(None, None).replace(
            tax_cycle_pos=jnp.asarray(int(ref.tax_cycle_pos), jnp.int32),
            rate_idx=jnp.asarray(np.array(ref.curr_rate_indices, np.int64), jnp.int32),
            saez_rates=_f(ref.curr_bracket_tax_rates),
            curr_rates_obs=_f(ref._curr_rates_obs),
            last_coin=_f(ref.last_coin),
            last_income=_f(ref.last_income),
            last_marginal_rate=_f(ref.last_marginal_rate),
            last_effective_tax_rate=_f(ref.last_effective_tax_rate),
            n_tax_days=jnp.asarray(len(sched[0]), jnp.int32),
            schedule_sum=_f([float(np.sum(s)) if s else 0.0 for s in sched]),
            occupancy=jnp.asarray([int(ref._occupancy[k]) for k in self.labels], jnp.int32),
            total_collected_taxes=_f(float(ref.total_collected_taxes)),
            effective_rate_sum=_f(
                float(np.sum(ref.all_effective_tax_rates)) if ref.all_effective_tax_rates else 0.0
            ),
            income_pos_sum=_f(income_pos),
            tax_paid_sum=_f(paid),
        )
        if ref.taxes and isinstance(ref.taxes[-1], dict):
            day = ref.taxes[-1]
            sub = sub.replace(
                enacted=jnp.asarray(True),
                last_tax_paid=_f([day[str(i)]["tax_paid"] for i in range(n)]),
                last_lump_sum=_f(day["0"]["lump_sum"]),
                last_schedule=_f(day["schedule"]),
                last_cutoffs=_f(day["cutoffs"]),
            )
        if self.tax_model == "saez":
            entries = np.array(ref.saez_buffer, dtype=np.float64).reshape(-1, 2)[-SAEZ_BUFFER_SIZE:]
            buf = np.zeros((SAEZ_BUFFER_SIZE, 2))
            if len(entries):
                buf[SAEZ_BUFFER_SIZE - len(entries):] = entries
            sub = sub.replace(saez=SaezState(
                saez_buffer=_f(buf),
                saez_count=jnp.asarray(len(entries), jnp.int32),
                elas_tm1=_f(float(ref.elas_tm1)),
                elas_t=_f(float(ref.elas_t)),
                log_z0_tm1=_f(float(ref.log_z0_tm1)),
                log_z0_t=_f(float(ref.log_z0_t)),
                running_avg_tax_rates=_f(ref.running_avg_tax_rates),
            ))
        return self.with_sub_state(state, sub)
