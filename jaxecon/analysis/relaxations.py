"""Relaxations of the discrete parts of the dynamics, for useful gradients.

Each relaxation has a temperature; temperature 0 is exactly the reference
dynamics (Foundation 1.7.1), and the relaxed quantities tend to the exact
ones as the temperature goes to 0 (tested in tests/test_analysis.py).

1. Soft bracket assignment (``PeriodicBracketTax``): the traced leaf
   ``params.components["PeriodicBracketTax"].bracket_temperature`` (coin).
   0 (the default) = the reference's hard brackets. T > 0: the tax on income
   z is sum_b rate_b (s_T(z - c_b) - s_T(z - c_{b+1})) with s_T(x) = T
   softplus(x / T), a smooth version of the bracket formula
   sum_b rate_b min(size_b, max(0, z - c_b)); the marginal rate is its
   derivative, sum_b rate_b (sigmoid((z - c_b)/T) - sigmoid((z - c_{b+1})/T)).
   Gives non-zero, smooth gradients w.r.t. cutoffs and incomes of the
   marginal-rate observations and of taxes near bracket edges. Set it with
   ``with_bracket_temperature``.

2. Softmax best responses in the one-step economy (``one-step-economy`` with
   ``[SimpleLabor, PeriodicBracketTax]``, period 2, episode length 2; Zheng et
   al. 2022, "The AI Economist", Science Advances, the two-level one-step
   economy; Foundation ``scenarios/one_step_economy/one_step_economy.py``).
   Every agent i chooses hours h in {0, ..., 100} (action h; 0 = NO-OP) to
   maximise its utility U_i(h) = u(z - T(z) + L, h), z = skill_i h, T the
   bracket tax, L the lump-sum rebate, u the scenario's agent utility
   (``agent_reward_type``). Agents take L as given (they ignore their own
   effect on it, as in Saez 2001 / Mirrlees) and L is the mean tax paid.
   Relaxation: agent i plays h with probability softmax(U_i(h) / T); L is
   solved by damped fixed-point iteration L <- (1 - d) L + d mean_i E[tax_i].
   Expected outcomes (coin, labor, utility) follow from the probabilities;
   the planner's objective is evaluated on them (inverse-income weights from
   expected pre-tax income: a mean-field approximation that is exact at T = 0).
   T = 0 gives the pure argmax best responses (the exact dynamics: running the
   environment with ``best_response_actions`` reproduces the outcome).
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
from flax import struct

from jaxecon import rewards, social_metrics
from jaxecon.analysis import params as P
from jaxecon.components.simple_labor import NUM_LABOR_HOURS
from jaxecon.components.tax_schedules import taxes_due
from jaxecon.core.state import EnvParams, float_dtype

TAX = "PeriodicBracketTax"
LABOR = "SimpleLabor"
#: Tax models whose schedule is the ``fixed_rates`` leaf (the planner takes no action).
FIXED_RATE_MODELS = ("fixed-bracket-rates", "us-federal-single-filer-2018-scaled")


def with_bracket_temperature(params: EnvParams, temperature) -> EnvParams:
    """``params`` with PeriodicBracketTax's soft-bracket temperature set (coin; 0 = exact).

    Raises:
        KeyError: if the economy has no PeriodicBracketTax.
    """
    return P.set_param(params, f"components.{TAX}.bracket_temperature", temperature)


def check_one_step_economy(env) -> None:
    """Raise ``ValueError`` unless ``env`` is the one-step economy this module models:
    scenario ``one-step-economy``, components ``[SimpleLabor, PeriodicBracketTax]``
    in that order (nothing else), tax period 2, episode_length 2, taxes enabled."""
    names = [c.name for c in env.components]
    problems = []
    if env.name != "one-step-economy":
        problems.append(f"scenario must be 'one-step-economy', got {env.name!r}")
    if names != [LABOR, TAX]:
        problems.append(f"components must be ['{LABOR}', '{TAX}'], got {names}")
    else:
        tax = env.get_component(TAX)
        if tax.period != 2:
            problems.append(f"{TAX}.period must be 2, got {tax.period}")
        if tax.disable_taxes:
            problems.append(f"{TAX}.disable_taxes must be False")
    if env.episode_length != 2:
        problems.append(f"episode_length must be 2, got {env.episode_length}")
    if problems:
        raise ValueError("not the one-step economy (tax on step 1, labor on step 2): " + "; ".join(problems))


def schedule(env, params: EnvParams) -> jax.Array:
    """float [B]: the bracket rates in force for a fixed-rate tax model (capped at rate_max).

    Raises:
        ValueError: for a tax model whose rates are chosen by the planner
            (model_wrapper) or estimated (saez); pass ``rates=`` explicitly then.
    """
    tax = env.get_component(TAX)
    if tax.tax_model not in FIXED_RATE_MODELS:
        raise ValueError(
            f"the {tax.tax_model!r} tax model has no fixed schedule in params; pass rates= "
            f"explicitly or use tax_model in {list(FIXED_RATE_MODELS)}"
        )
    tp = params.components[TAX]
    return jnp.minimum(jnp.asarray(tp.fixed_rates, float_dtype()), tp.rate_max)


def labor_outcomes(env, params: EnvParams, rates, lump_sum) -> dict:
    """Every agent's outcome for every choice of hours h = 0..100 (action index h).

    Args:
        env: the one-step economy (see ``check_one_step_economy``).
        params: ``EnvParams`` (skills, utility parameters, cutoffs, bracket temperature).
        rates: float [B] bracket rates.
        lump_sum: float [] rebate L each agent receives (coin).
    Returns:
        dict of float [n, 101]: ``income`` (pre-tax, coin = skill * h), ``tax``
        (paid: min(income, tax due)), ``coin`` (income - tax + L), ``labor`` (h),
        ``utility`` (the scenario's agent utility of that coin and labor).
    """
    f = float_dtype()
    skills = jnp.asarray(params.components[LABOR].skills, f)
    tp = params.components[TAX]
    hours = jnp.arange(NUM_LABOR_HOURS + 1, dtype=f)
    income = skills[:, None] * hours[None, :]
    cutoffs = jnp.asarray(tp.bracket_cutoffs, f)
    due = taxes_due(income, jnp.asarray(rates, f), cutoffs, tp.bracket_temperature)
    paid = jnp.minimum(income, due)
    coin = income - paid + lump_sum
    labor = jnp.broadcast_to(hours, income.shape)
    sp = params.scenario
    if env.agent_reward_type == "isoelastic_coin_minus_labor":
        util = rewards.isoelastic_coin_minus_labor(coin, labor, sp.isoelastic_eta, sp.labor_cost)
    else:
        util = rewards.coin_minus_labor_cost(coin, labor, sp.labor_exponent, sp.labor_cost)
    return {"income": income, "tax": paid, "coin": coin, "labor": labor, "utility": util}


def choice_probabilities(utility, temperature) -> jax.Array:
    """float [..., K]: softmax(utility / T) for T > 0; the one-hot argmax (first
    maximum, as ``jnp.argmax``) for T == 0. ``temperature`` in utility units,
    may be traced; gradients of the T == 0 branch are 0."""
    t = jnp.asarray(temperature, utility.dtype)
    safe = jnp.where(t > 0, t, 1.0)
    soft = jax.nn.softmax(utility / safe, axis=-1)
    hard = jax.nn.one_hot(jnp.argmax(utility, axis=-1), utility.shape[-1], dtype=utility.dtype)
    return jnp.where(t > 0, soft, hard)


@struct.dataclass
class OneStepOutcome:
    """Expected outcome of the one-step economy under (softmax) best responses.

    Attributes (n = n_agents, float dtype of the run):
        probs: float [n, 101] probability of each agent working h hours.
        lump_sum: float [] rebate the agents expected (fixed-point iterate).
        realized_lump_sum: float [] mean expected tax paid under ``probs``.
        income, tax, coin, labor, utility: float [n] expected pre-tax income,
            tax paid, final coin (with the realized rebate), hours, utility.
        planner_objective: float [] the planner's objective
            (``planner_reward_type``) on these outcomes.
        productivity, equality, tax_revenue: float [] (coin, unitless, coin).
    """

    probs: jax.Array
    lump_sum: jax.Array
    realized_lump_sum: jax.Array
    income: jax.Array
    tax: jax.Array
    coin: jax.Array
    labor: jax.Array
    utility: jax.Array
    planner_objective: jax.Array
    productivity: jax.Array
    equality: jax.Array
    tax_revenue: jax.Array


def one_step_outcome(
    env,
    params: EnvParams,
    temperature=0.0,
    *,
    rates: Optional[jax.Array] = None,
    n_iterations: int = 30,
    damping: float = 0.5,
) -> OneStepOutcome:
    """Agents' (softmax-relaxed) best responses to a tax schedule and their outcome.

    Args:
        env: the one-step economy (``check_one_step_economy``).
        params: ``EnvParams``; differentiable in every float leaf (skills,
            isoelastic_eta, labor_cost, labor_exponent, cutoffs, rates, ...).
        temperature: float [] (utility units) of the softmax choice; 0 = exact
            argmax best responses.
        rates: float [B] bracket rates; default ``schedule(env, params)``.
        n_iterations: static int >= 1, fixed-point iterations for the rebate.
        damping: d in (0, 1], the step of the rebate iteration.
    Returns:
        ``OneStepOutcome``. At temperature 0 the outcome (with
        ``realized_lump_sum``) is exactly what ``env`` produces when stepped with
        ``best_response_actions`` (up to float rounding).
    Raises:
        ValueError: as ``check_one_step_economy``; ``n_iterations`` < 1;
            ``damping`` outside (0, 1]; ``rates`` not of shape [B].
    """
    check_one_step_economy(env)
    if not isinstance(n_iterations, int) or n_iterations < 1:
        raise ValueError(f"n_iterations must be an int >= 1, got {n_iterations!r}")
    if not 0 < float(damping) <= 1:
        raise ValueError(f"damping must be in (0, 1], got {damping!r}")
    f = float_dtype()
    if rates is None:
        rates = schedule(env, params)
    rates = jnp.asarray(rates, f)
    n_b = len(env.get_component(TAX).bracket_cutoffs)
    if rates.shape != (n_b,):
        raise ValueError(f"rates must have shape ({n_b},) (one per bracket), got {rates.shape}")

    def probs_given(lump):
        out = labor_outcomes(env, params, rates, lump)
        return choice_probabilities(out["utility"], temperature), out

    def expected_tax(lump):
        p, out = probs_given(lump)
        return jnp.mean(jnp.sum(p * out["tax"], axis=-1))

    def body(lump, _):
        return (1 - damping) * lump + damping * expected_tax(lump), None

    lump0 = jnp.zeros((), f)
    lump, _ = jax.lax.scan(body, lump0, None, length=n_iterations)
    probs, _ = probs_given(lump)
    # Realised outcome: the rebate actually paid under these choices.
    base = labor_outcomes(env, params, rates, jnp.zeros((), f))
    realized = jnp.mean(jnp.sum(probs * base["tax"], axis=-1))
    out = labor_outcomes(env, params, rates, realized)
    e = {k: jnp.sum(probs * v, axis=-1) for k, v in out.items()}
    sp = params.scenario
    if env.planner_reward_type == "coin_eq_times_productivity":
        swf = rewards.coin_eq_times_productivity(e["coin"], 1 - sp.mixing_weight_gini_vs_coin)
    else:
        swf = rewards.inv_income_weighted_utility(e["income"], e["utility"])
    return OneStepOutcome(
        probs=probs,
        lump_sum=lump,
        realized_lump_sum=realized,
        income=e["income"],
        tax=e["tax"],
        coin=e["coin"],
        labor=e["labor"],
        utility=e["utility"],
        planner_objective=swf,
        productivity=social_metrics.get_productivity(e["coin"]),
        equality=social_metrics.get_equality(e["coin"]),
        tax_revenue=jnp.sum(e["tax"]),
    )


def best_response_actions(env, params: EnvParams, *, rates=None, n_iterations: int = 30,
                          damping: float = 0.5) -> dict:
    """The exact (argmax) best responses as the action sequence of one episode.

    Returns ``{group: int32}`` per group of ``env.agent_groups``: a mobile
    group's ``[2, count]`` (or ``[2, count, 1]`` in multi-action mode), a
    planner's ``[2, ...]`` zeros (Foundation's groups: ``{"a": [2, n_agents],
    "p": ...}``): NO-OP on step 1 (the planner's step; the fixed-rate tax
    models take no planner action), hours on step 2.
    Pass it to ``jaxecon.analysis.rollout(env, key, params, actions=...)``.
    """
    out = one_step_outcome(env, params, 0.0, rates=rates, n_iterations=n_iterations, damping=damping)
    hours = jnp.argmax(out.probs, axis=-1).astype(jnp.int32)
    for layout in [env.agent_actions] + [env.group_actions[g.name] for g in env.mobile_groups]:
        if layout.names != (LABOR,):
            raise ValueError(f"unexpected agent action subspaces {layout.names}")
    a = jnp.stack([jnp.zeros_like(hours), hours])
    if env.agent_actions.multi_action_mode:
        a = a[..., None]
    return {g.name: jnp.zeros((2,) + env.group_actions[g.name].action_shape, jnp.int32) if g.is_planner
            else a[:, g.start:g.stop] for g in env.agent_groups}
