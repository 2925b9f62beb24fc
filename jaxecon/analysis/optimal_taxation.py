"""Optimal taxation in the one-step economy: gradient ascent vs Saez vs US federal.

``grid_search_one_step_taxes`` searches the planner's own rate grid without
derivatives, scoring every schedule exactly: where the objective jumps (an
agent switching between two local maxima of its utility) it finds schedules
the gradient of the relaxation misses.

The planner's bracket rates are optimised by gradient ascent (Adam, optax) on
its objective (``planner_reward_type``, by default the inverse-income-weighted
utility of Zheng et al. 2022, "The AI Economist", Science Advances) through the
agents' softmax-relaxed best responses (``relaxations.one_step_outcome``), and
compared with two baselines:

- the 2018 US federal single-filer schedule (Foundation's
  ``us-federal-single-filer-2018-scaled`` tax model), and
- the Saez (2001, "Using Elasticities to Derive Optimal Income Tax Rates",
  Review of Economic Studies 68(1), eq. (19)) optimal-tax formula
  tau(z) = (1 - G(z)) / (1 - G(z) + A(z) e), bracketed exactly as Foundation's
  ``saez`` tax model does (``components/redistribution.py``:
  ``compute_and_set_new_period_rates_from_saez_formula``; the binning, G, A and
  bracket averaging are the functions of ``jaxecon.components.saez`` that
  ``PeriodicBracketTax`` uses), iterated to a fixed point against the agents'
  best responses.

Every schedule is finally scored by *exact* dynamics: the agents' argmax best
responses are stepped through the environment (``evaluate_schedule``).

Usage::

    env = make_one_step_economy()
    res = optimize_one_step_taxes(env, env.default_params)
    evaluate_schedule(env, env.default_params, res.rates)["planner_objective"]
"""

from __future__ import annotations

import functools
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.analysis import params as P
from jaxecon.analysis.metrics import episode_metrics
from jaxecon.analysis.relaxations import (
    TAX,
    best_response_actions,
    check_one_step_economy,
    one_step_outcome,
    schedule,
)
from jaxecon.analysis.rollout import rollout
from jaxecon.components import saez as saez_model
from jaxecon.components.saez import SAEZ_BUFFER_SIZE
from jaxecon.components.tax_schedules import US_FEDERAL_RATES, marginal_rate
from jaxecon.core.state import EnvParams, float_dtype
from jaxecon.env_checks import check_economy

FIXED_RATES = f"components.{TAX}.fixed_rates"


def make_one_step_economy(
    n_agents: int = 100,
    seed: int = 1,
    agent_reward_type: str = "coin_minus_labor_cost",
    labor_cost: float = 0.02,
    labor_exponent: float = 2.0,
    isoelastic_eta: float = 0.23,
    planner_reward_type: str = "inv_income_weighted_utility",
    bracket_spacing: str = "us-federal",
    **tax_kwargs,
):
    """The one-step economy used by the worked example (fixed-bracket-rates tax model).

    Components ``[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2,
    "tax_model": "fixed-bracket-rates", "fixed_bracket_rates": US 2018 rates,
    "bracket_spacing": ...})]``, episode_length 2. With the defaults (quasi-linear
    utility coin - 0.02 * hours^2, skills in [1, 3]) an agent of skill s facing
    marginal rate t works 25 s (1 - t) hours (income elasticity 1), so incomes
    (0..225 coin) span the scaled US brackets [0, 9.7, 39.5, 84.2, 160.7, 204.1,
    510.3] coin.
    """
    import jaxecon

    tax = {"period": 2, "tax_model": "fixed-bracket-rates", "bracket_spacing": bracket_spacing}
    tax.update(tax_kwargs)
    if "fixed_bracket_rates" not in tax:
        if bracket_spacing != "us-federal":
            raise ValueError("give fixed_bracket_rates=[...] for non us-federal bracket spacing")
        tax["fixed_bracket_rates"] = list(US_FEDERAL_RATES)
    return jaxecon.make(
        "one-step-economy",
        n_agents=n_agents,
        world_size=[1, 1],
        episode_length=2,
        seed=seed,
        agent_reward_type=agent_reward_type,
        labor_cost=labor_cost,
        labor_exponent=labor_exponent,
        isoelastic_eta=isoelastic_eta,
        planner_reward_type=planner_reward_type,
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", tax)],
    )


def _with_rates(params, rates):
    return P.set_param(params, FIXED_RATES, jnp.asarray(rates, float_dtype()))


def us_federal_rates(env) -> np.ndarray:
    """float64 [7]: the 2018 US federal single-filer rates (needs "us-federal" bracket spacing)."""
    check_economy(env)
    tax = env.get_component(TAX)
    if tax.bracket_spacing != "us-federal":
        raise ValueError(f"US federal rates need bracket_spacing 'us-federal', got {tax.bracket_spacing!r}")
    return np.array(US_FEDERAL_RATES)


def evaluate_schedule(env, params: EnvParams, rates, *, key=None, n_iterations: int = 30) -> dict:
    """Exact outcome of a schedule: argmax best responses stepped through ``env``.

    Args:
        env: the one-step economy with a fixed-rate tax model.
        params: ``EnvParams``; ``rates`` replaces its ``fixed_rates``.
        rates: float [B] bracket rates in [0, 1].
    Returns:
        ``{metric: float}`` (``jaxecon.analysis.metrics.METRIC_NAMES``) plus
        ``"hours"``: int [n] each agent's chosen hours. Jittable except for the
        conversion to Python floats (use ``evaluate_schedule_fn`` inside jit).
    """
    out = _jitted_evaluate(env, n_iterations)(params, jnp.asarray(rates, float_dtype()),
                                              jax.random.key(0) if key is None else key)
    return {k: (np.asarray(v) if k == "hours" else float(v)) for k, v in out.items()}


@functools.lru_cache(maxsize=32)
def _jitted_evaluate(env, n_iterations):
    return jax.jit(evaluate_schedule_fn(env, n_iterations))


def evaluate_schedule_fn(env, n_iterations: int = 30):
    """Pure ``fn(params, rates, key) -> {metric: float [], "hours": int32 [n]}`` (see ``evaluate_schedule``)."""
    check_one_step_economy(env)

    def fn(params, rates, key):
        p = _with_rates(params, rates)
        acts = best_response_actions(env, p, n_iterations=n_iterations)
        r = rollout(env, key, p, actions=acts)
        m = episode_metrics(env, r, p)
        m["hours"] = r.state.endogenous["Labor"]
        return m

    return fn


@struct.dataclass
class TaxOptimizationResult:
    """Outcome of ``optimize_one_step_taxes``.

    Attributes (S = steps, B = brackets):
        rates: float [B] the optimised schedule.
        rates_history: float [S + 1, B] the schedule before each step and at the end.
        relaxed_objective: float [S + 1] the planner objective under softmax best
            responses at each entry of ``rates_history``.
        exact_objective: float [S + 1] the planner objective under exact argmax
            best responses stepped through the environment.
    """

    rates: jax.Array
    rates_history: jax.Array
    relaxed_objective: jax.Array
    exact_objective: jax.Array


def optimize_one_step_taxes(
    env,
    params: EnvParams,
    *,
    init_rates=None,
    temperature: float = 0.05,
    n_steps: int = 300,
    learning_rate: float = 0.05,
    n_iterations: int = 30,
) -> TaxOptimizationResult:
    """Gradient ascent on the planner's bracket rates through softmax best responses.

    The rates are r = rate_min + (rate_max - rate_min) * sigmoid(theta); theta
    is updated with Adam (``optax.adam(learning_rate)``) on
    -planner_objective(one_step_outcome(env, params, temperature, rates=r)).
    The whole loop is one jitted ``lax.scan``.

    Args:
        env: the one-step economy (``relaxations.check_one_step_economy``) with a
            fixed-rate tax model ("fixed-bracket-rates" or "us-federal-...").
        params: ``EnvParams`` (skills, utility and tax parameters).
        init_rates: float [B] start (default: ``schedule(env, params)``),
            clipped into (rate_min, rate_max) by 1e-3.
        temperature: softmax temperature (utility units), > 0.
        n_steps: Adam steps (static int >= 1).
        learning_rate: Adam step size (in logit units).
        n_iterations: rebate fixed-point iterations (see ``one_step_outcome``).
    Returns:
        ``TaxOptimizationResult``.
    Raises:
        ValueError: not the one-step economy, temperature <= 0, n_steps < 1.
    """
    import optax

    check_one_step_economy(env)
    schedule(env, params)  # raises for a non fixed-rate model
    if not float(temperature) > 0:
        raise ValueError(f"temperature must be > 0 (use evaluate_schedule for exact dynamics), got {temperature!r}")
    if not isinstance(n_steps, int) or n_steps < 1:
        raise ValueError(f"n_steps must be an int >= 1, got {n_steps!r}")
    f = float_dtype()
    tp = params.components[TAX]
    lo = jnp.asarray(tp.rate_min, f)
    hi = jnp.asarray(tp.rate_max, f)
    r0 = schedule(env, params) if init_rates is None else jnp.asarray(init_rates, f)
    r0 = jnp.clip(r0, lo + 1e-3, hi - 1e-3)
    theta0 = jnp.log((r0 - lo) / (hi - r0))
    opt = optax.adam(learning_rate)
    evaluate = evaluate_schedule_fn(env, n_iterations)

    def to_rates(theta):
        return lo + (hi - lo) * jax.nn.sigmoid(theta)

    def objective(theta):
        out = one_step_outcome(env, params, temperature, rates=to_rates(theta), n_iterations=n_iterations)
        return out.planner_objective

    def exact(theta):
        return evaluate(params, to_rates(theta), jax.random.key(0))["planner_objective"]

    @jax.jit
    def run(theta0):
        def step(carry, _):
            theta, state = carry
            value, grad = jax.value_and_grad(objective)(theta)
            updates, state = opt.update(-grad, state, theta)
            return (optax.apply_updates(theta, updates), state), (to_rates(theta), value, exact(theta))

        (theta, _), (hist, relaxed, ex) = jax.lax.scan(step, (theta0, opt.init(theta0)), None, length=n_steps)
        hist = jnp.concatenate([hist, to_rates(theta)[None]])
        relaxed = jnp.concatenate([relaxed, objective(theta)[None]])
        ex = jnp.concatenate([ex, exact(theta)[None]])
        return to_rates(theta), hist, relaxed, ex

    rates, hist, relaxed, ex = run(theta0)
    return TaxOptimizationResult(rates=rates, rates_history=hist, relaxed_objective=relaxed, exact_objective=ex)


@struct.dataclass
class SaezResult:
    """Outcome of ``saez_schedule``.

    Attributes (R = Saez rounds, B = brackets):
        rates: float [B] the final Saez schedule.
        rates_history: float [R, B] the schedule after each round.
        elasticity: float [] the elasticity used (given, or Foundation's estimate).
    """

    rates: jax.Array
    rates_history: jax.Array
    elasticity: jax.Array


def saez_schedule(
    env,
    params: EnvParams,
    *,
    elasticity: Optional[float] = None,
    n_warmup: int = 20,
    n_rounds: int = 100,
    n_average: int = 20,
    key: Optional[jax.Array] = None,
    n_iterations: int = 30,
) -> SaezResult:
    """The Saez-formula schedule against the agents' exact best responses.

    Follows Foundation's ``saez`` tax model (``redistribution.py``): a buffer of
    the last 500 (income, marginal rate) observations; while it is not full,
    uniformly random rates in [rate_min, rate_max] (``n_warmup`` rounds, and at
    least enough to fill the buffer); then each round the formula's bracket
    rates from the buffer (``jaxecon.components.saez``'s ``saez_bins``,
    ``binned_g_and_a``, ``saez_marginal_rates``, ``bracketize``), clipped
    to [rate_min, rate_max]. One round = one episode: agents best-respond
    (argmax) to the round's rates and their incomes enter the buffer.

    Args:
        elasticity: the elasticity e of the formula; None = Foundation's
            estimate: OLS of log income on log(1 - marginal rate) over the
            warm-up buffer (the value Foundation's smoothed estimate converges to).
        n_warmup: random-schedule rounds before the formula is used.
        n_rounds: formula rounds.
        n_average: the result is the mean schedule of the last ``n_average`` rounds.
        key: PRNG key of the random warm-up rates (default key(0)).
    Returns:
        ``SaezResult``.
    """
    check_one_step_economy(env)
    schedule(env, params)
    if not (isinstance(n_rounds, int) and n_rounds >= 1 and isinstance(n_average, int)
            and 1 <= n_average <= n_rounds):
        raise ValueError(f"need ints 1 <= n_average <= n_rounds, got {n_average!r}, {n_rounds!r}")
    tax = env.get_component(TAX)
    f = float_dtype()
    tp = params.components[TAX]
    lo, hi = jnp.asarray(tp.rate_min, f), jnp.asarray(tp.rate_max, f)
    cutoffs = jnp.asarray(tp.bracket_cutoffs, f)
    n, b = env.n_agents, len(tax.bracket_cutoffs)
    n_warmup = max(int(n_warmup), -(-SAEZ_BUFFER_SIZE // n))
    key = jax.random.key(0) if key is None else key

    def incomes(rates):
        out = one_step_outcome(env, params, 0.0, rates=rates, n_iterations=n_iterations)
        return out.income, marginal_rate(out.income, rates, cutoffs)

    def push(buf, z, tau):
        new = jnp.stack([z, tau], axis=1)
        return jnp.concatenate([buf, new])[-SAEZ_BUFFER_SIZE:]

    @jax.jit
    def run(key):
        buf = jnp.zeros((SAEZ_BUFFER_SIZE, 2), f)
        count = jnp.zeros((), jnp.int32)

        def warm(carry, k):
            buf, count = carry
            rates = jax.random.uniform(k, (b,), f, minval=lo, maxval=hi)
            z, tau = incomes(rates)
            return (push(buf, z, tau), jnp.minimum(count + n, SAEZ_BUFFER_SIZE)), None

        (buf, count), _ = jax.lax.scan(warm, (buf, count), jax.random.split(key, n_warmup))
        valid = jnp.arange(SAEZ_BUFFER_SIZE) >= SAEZ_BUFFER_SIZE - count
        if elasticity is None:
            z, tau = buf[:, 0], buf[:, 1]
            ok = valid & (z > 0) & (tau < 1)
            x = jnp.where(ok, jnp.log(jnp.where(ok, 1 - tau, 1.0)), 0.0)
            y = jnp.where(ok, jnp.log(jnp.where(ok, z, 1.0)), 0.0)
            w = ok.astype(f)
            m = jnp.maximum(jnp.sum(w), 1.0)
            xm, ym = jnp.sum(x * w) / m, jnp.sum(y * w) / m
            slope = jnp.sum(w * (x - xm) * (y - ym)) / jnp.maximum(jnp.sum(w * (x - xm) ** 2), 1e-12)
            elas = jnp.maximum(slope, 0.0)
        else:
            elas = jnp.asarray(elasticity, f)
        edges, bin_sizes = saez_model.saez_bins(cutoffs)

        def formula(buf):
            gz, az = saez_model.binned_g_and_a(buf[:, 0], valid, edges, tax.pareto_weight_type)
            taus = saez_model.saez_marginal_rates(gz, az, elas)
            return jnp.clip(saez_model.bracketize(taus, edges, bin_sizes, cutoffs), lo, hi)

        def rnd(buf, _):
            rates = formula(buf)
            z, tau = incomes(rates)
            return push(buf, z, tau), rates

        _, hist = jax.lax.scan(rnd, buf, None, length=n_rounds)
        return hist, elas

    hist, elas = run(key)
    return SaezResult(rates=jnp.mean(hist[-n_average:], axis=0), rates_history=hist, elasticity=elas)


@struct.dataclass
class GridSearchResult:
    """Outcome of ``grid_search_one_step_taxes``.

    Attributes (B = brackets):
        rates: float [B] the best schedule found on the planner's rate grid.
        objective: float [] its planner objective under exact best responses.
        sweeps: int [] coordinate sweeps done from the best start.
        converged: bool [] its last sweep changed nothing (False: it
            stopped at ``max_sweeps``).
    """

    rates: jax.Array
    objective: jax.Array
    sweeps: jax.Array
    converged: jax.Array


def rate_grid(env) -> np.ndarray:
    """float64 [K]: the rates the planner can choose per bracket, PeriodicBracketTax's
    table ``arange(rate_min, rate_max + rate_disc, rate_disc)`` (entries <= rate_max)."""
    check_economy(env)
    tax = env.get_component(TAX)
    grid = np.arange(tax.rate_min, tax.rate_max + tax.rate_disc, tax.rate_disc)
    return np.round(grid[grid <= tax.rate_max + 1e-9], 10)


def grid_search_one_step_taxes(env, params: EnvParams, starts, *, max_sweeps: int = 20,
                               n_iterations: int = 30) -> GridSearchResult:
    """Coordinate ascent on the planner's own rate grid, every schedule scored exactly.

    Derivative free, so it is not misled where the objective jumps (an agent
    switching to another local maximum of its utility, e.g. from many hours
    in a low-rate bracket to few in the higher-rate bracket below it, which
    the softmax relaxation of ``optimize_one_step_taxes`` smooths over).
    From each start (rounded onto ``rate_grid``), each sweep tries every
    grid rate for each bracket in turn, all at once
    (``jax.vmap`` of ``evaluate_schedule_fn``), and keeps the best (the
    current rate unless another beats it by more than 1e-5 of the objective,
    float32's noise); it stops when a sweep changes nothing. The result
    is the best over the starts: a local optimum of the grid, the schedules a
    learned planner (one categorical head per bracket) can set.

    Args:
        env: the one-step economy with a fixed-rate tax model.
        params: ``EnvParams``.
        starts: float [S, B] (or [B]) schedules to start from.
        max_sweeps: at most this many sweeps per start (int >= 1).
        n_iterations: rebate fixed-point iterations of the best responses.
    Returns:
        ``GridSearchResult``.
    Raises:
        ValueError: not the one-step economy; ``starts`` empty, not of B
            brackets, or not finite; ``max_sweeps`` < 1.
    """
    check_one_step_economy(env)
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, (int, np.integer)) or max_sweeps < 1:
        raise ValueError(f"max_sweeps must be an int >= 1, got {max_sweeps!r}")
    grid = rate_grid(env)
    n_b = len(env.get_component(TAX).bracket_cutoffs)
    try:
        starts = np.atleast_2d(np.asarray(starts, np.float64))
    except ValueError:
        raise ValueError(f"starts must be schedules of {n_b} bracket rates (float [S, {n_b}]), "
                         f"got {starts!r}") from None
    if starts.ndim != 2 or starts.shape[0] == 0 or starts.shape[1] != n_b:
        raise ValueError(f"starts must hold one or more schedules of {n_b} bracket rates, "
                         f"got shape {starts.shape}")
    if not np.isfinite(starts).all():
        raise ValueError(f"starts must be finite rates, got {starts.tolist()}")
    evaluate = evaluate_schedule_fn(env, n_iterations)
    score = jax.jit(jax.vmap(lambda r: evaluate(params, r, jax.random.key(0))["planner_objective"]))
    best = (-np.inf, None, 0, False)
    for start in starts:
        rates = grid[np.abs(grid[None] - start[:, None]).argmin(axis=1)]
        value = float(score(jnp.asarray(rates[None], float_dtype()))[0])
        sweeps, changed = 0, True
        while changed and sweeps < max_sweeps:
            sweeps, changed = sweeps + 1, False
            for b in range(n_b):
                cand = np.repeat(rates[None], len(grid), axis=0)
                cand[:, b] = grid
                vals = np.asarray(score(jnp.asarray(cand, float_dtype())))
                i = int(vals.argmax())
                if vals[i] > value + 1e-5 * max(1.0, abs(value)):
                    rates, value, changed = cand[i], float(vals[i]), True
        if value > best[0]:
            best = (value, rates, sweeps, not changed)
    return GridSearchResult(rates=jnp.asarray(best[1], float_dtype()), objective=jnp.asarray(best[0]),
                            sweeps=jnp.asarray(best[2]), converged=jnp.asarray(best[3]))
