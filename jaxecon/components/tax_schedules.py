"""Bracketed tax schedules: cutoffs, taxes owed, marginal rates, annealing.

The schedule maths of ``ai_economist/foundation/components/redistribution.py``
(``PeriodicBracketTax``'s bracket spacing in ``__init__``, ``income_bin``,
``marginal_rate``, ``taxes_due``) and of ``components/utils.py``
(``annealed_tax_limit``), as pure functions of arrays. ``PeriodicBracketTax``
and ``jaxecon.analysis`` both use them. Incomes, cutoffs and taxes are in
coin per tax period; rates are fractions in [0, 1]. Every function is
differentiable in ``rates`` and ``cutoffs``; the ``soft_*`` variants (jaxecon
only) are also smooth in income and cutoffs.

Bracket b covers incomes ``[cutoff_b, cutoff_{b+1})``; the last one is
open-ended.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.numerics import numpy_order_sum, unfused

BRACKET_SPACINGS = ("linear", "log", "us-federal")

#: 2018 US federal single-filer bracket cutoffs (USD) and rates.
US_FEDERAL_CUTOFFS_USD = (0, 9700, 39475, 84200, 160725, 204100, 510300)
US_FEDERAL_RATES = (0.1, 0.12, 0.22, 0.24, 0.32, 0.35, 0.37)


def bracket_cutoffs(spacing: str, n_brackets: int, top_bracket_cutoff: float, usd_scaling: float) -> np.ndarray:
    """float64 [B] bracket cutoffs (coin), computed exactly as Foundation does.

    "linear": ``linspace(0, top_bracket_cutoff, n_brackets)``; "log": ``[0] +
    2 ** linspace(log2(top / 2**(n - 2)), log2(top), n - 1)``; "us-federal"
    (any other value): ``US_FEDERAL_CUTOFFS_USD / usd_scaling`` (7 brackets,
    ``n_brackets`` and ``top_bracket_cutoff`` ignored). Arguments are checked by
    ``PeriodicBracketTax``.
    """
    if spacing == "linear":
        return np.linspace(0, top_bracket_cutoff, n_brackets)
    if spacing == "log":
        b0_max = top_bracket_cutoff / (2 ** (n_brackets - 2))
        return np.concatenate(
            [[0], 2 ** np.linspace(np.log2(b0_max), np.log2(top_bracket_cutoff), n_brackets - 1)]
        )
    return np.array(US_FEDERAL_CUTOFFS_USD) / usd_scaling


def annealed_tax_limit(completions, warmup, slope, final_max_tax_value):
    """Highest rate allowed after ``completions`` episodes: max * clip(slope * (c - warmup), 0, 1)."""
    visible = jnp.maximum(0.0, jnp.minimum(1.0, slope * (completions - warmup)))
    return visible * final_max_tax_value


def taxes_due(income, rates, cutoffs, temperature=None):
    """Tax owed: float [...] for incomes float [...] under a bracketed schedule.

    sum_b rates_b * min(size_b, max(0, income - cutoff_b)), sizes the gaps
    between cutoffs (the last bracket is unbounded). Differentiable in
    ``rates`` and ``cutoffs``.

    ``temperature`` (float [], coin; jaxecon only): when > 0, the soft bracket
    assignment of ``soft_taxes_due``; None or 0 gives the exact schedule above.
    """
    if temperature is not None:
        return _by_temperature(temperature, taxes_due, soft_taxes_due, income, rates, cutoffs)
    income = jnp.asarray(income)[..., None]
    sizes = jnp.concatenate([cutoffs[1:] - cutoffs[:-1], jnp.full((1,), jnp.inf, cutoffs.dtype)])
    past_cutoff = jnp.maximum(0.0, income - cutoffs)
    bin_income = jnp.minimum(sizes, past_cutoff)
    return numpy_order_sum(unfused(rates * bin_income))


def soft_taxes_due(income, rates, cutoffs, temperature):
    """Tax owed with a temperature-controlled soft bracket assignment: float [...].

    Uses min(size_b, max(0, z - c_b)) = relu(z - c_b) - relu(z - c_{b+1}) and
    replaces relu(x) by temperature * softplus(x / temperature), so the tax is
    smooth in income and cutoffs; its derivative in income is
    ``soft_marginal_rate``. As temperature -> 0 it tends to ``taxes_due``
    (error <= 2 * log(2) * temperature * max rate per bracket). jaxecon only.
    """
    z = jnp.asarray(income)[..., None]
    t = jnp.asarray(temperature)
    soft_relu = t * jax.nn.softplus((z - cutoffs) / t)  # [..., B]
    upper = jnp.concatenate([soft_relu[..., 1:], jnp.zeros_like(soft_relu[..., :1])], axis=-1)
    return jnp.sum(rates * (soft_relu - upper), axis=-1)


def soft_marginal_rate(income, rates, cutoffs, temperature):
    """sum_b rates_b * P(bracket b | income): float [...], the soft bracket
    membership being sigmoid((z - c_b) / T) - sigmoid((z - c_{b+1}) / T); the
    income derivative of ``soft_taxes_due``. jaxecon only."""
    z = jnp.asarray(income)[..., None]
    t = jnp.asarray(temperature)
    above = jax.nn.sigmoid((z - cutoffs) / t)
    upper = jnp.concatenate([above[..., 1:], jnp.zeros_like(above[..., :1])], axis=-1)
    return jnp.sum(rates * (above - upper), axis=-1)


def bracket_index(income, cutoffs):
    """int32 [...]: the bracket an income falls in (0 for negative incomes)."""
    income = jnp.asarray(income)[..., None]
    return jnp.sum(income >= cutoffs[1:], axis=-1).astype(jnp.int32) * (income[..., 0] >= 0)


def marginal_rate(income, rates, cutoffs, temperature=None):
    """The rate of the bracket holding ``income`` (0 for negative income): float [...].

    ``temperature`` > 0 (jaxecon only): ``soft_marginal_rate`` instead.
    """
    if temperature is not None:
        return _by_temperature(temperature, marginal_rate, soft_marginal_rate, income, rates, cutoffs)
    r = rates[bracket_index(income, cutoffs)]
    return jnp.where(jnp.asarray(income) < 0, 0.0, r)


def _by_temperature(temperature, exact, soft, income, rates, cutoffs):
    """``soft(income, rates, cutoffs, temperature)`` where temperature > 0, else
    ``exact(income, rates, cutoffs)``.

    A ``lax.cond``: a traced scalar temperature (a params leaf passed into
    jit) runs one of the two, not both (the soft one is an exp or a log per
    agent and bracket, a large share of a 10,000-agent one-step economy's
    step; measured: benchmarks/RESULTS.md, "Measurements behind the code's
    choices"). Under ``vmap`` over temperatures both run and each entry
    takes its own. The soft branch sees temperature 1 where it is 0, so the
    branch not taken never divides by zero (its NaNs would reach the
    gradient).
    """
    t = jnp.asarray(temperature)
    branches = (lambda: soft(income, rates, cutoffs, jnp.where(t > 0, t, 1.0)),
                lambda: exact(income, rates, cutoffs))
    dtype = jnp.result_type(*(jax.eval_shape(b).dtype for b in branches))  # what a where of the two gives
    return jax.lax.cond(t > 0, *(lambda b=b: b().astype(dtype) for b in branches))
