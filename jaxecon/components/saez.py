"""The Saez optimal-tax estimator of ``PeriodicBracketTax``'s "saez" tax model.

Follows ``ai_economist/foundation/components/redistribution.py``
(``compute_and_set_new_period_rates_from_saez_formula`` and the helpers it
calls), an adaptation of Saez (2001), "Using Elasticities to Derive Optimal
Income Tax Rates", Review of Economic Studies 68(1), eq. (19):
tau(z) = (1 - G(z)) / (1 - G(z) + A(z) e), with G the average welfare weight
of incomes above z, A the local Pareto parameter of the income distribution
and e the elasticity of income with respect to (1 - tau).

The tax model keeps a buffer of the last ``SAEZ_BUFFER_SIZE`` (income,
marginal rate) observations (``record``). Each new tax period
(``new_period_rates``): until the buffer is full, uniformly random rates in
[rate_min, limit]; then the elasticity estimate is updated
(``estimate_elasticity``), incomes are binned into ``SAEZ_N_BINS`` bins
between 0 and the top cutoff plus one above it (``saez_bins``), G and A are
computed per bin (``binned_g_and_a``), the formula gives per-bin rates
(``saez_marginal_rates``), which are averaged into bracket rates
(``bracketize``) and clipped to [rate_min, limit]. ``jaxecon.analysis``
(``saez_schedule``) iterates the same functions against agents' best
responses.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from jaxecon.core.state import float_dtype

PARETO_WEIGHT_TYPES = ("inverse_income", "uniform")

#: Saez model constants (Foundation's ``_buffer_size``, ``_saez_n_estimation_bins``,
#: and the smoothing of the elasticity estimate).
SAEZ_BUFFER_SIZE = 500
SAEZ_N_BINS = 100
SAEZ_ELAS_DF = 0.98


@struct.dataclass
class SaezState:
    """What the "saez" tax model remembers (Foundation keeps it across episodes).

    B = brackets, S = ``SAEZ_BUFFER_SIZE``. Attributes:
        saez_buffer: float [S, 2] (income in coin, marginal rate) samples,
            newest last, the valid ones right-aligned (Foundation's ``saez_buffer``).
        saez_count: int32 [] valid samples, at most S.
        elas_tm1, elas_t: float [] the elasticity estimate before and after the
            last update (unitless).
        log_z0_tm1, log_z0_t: float [] the regression intercept (log coin)
            before and after the last update.
        running_avg_tax_rates: float [B] exponential average (0.99 / 0.01) of
            the formula's rates; a new episode's first period starts from it.
    """

    saez_buffer: jax.Array
    saez_count: jax.Array
    elas_tm1: jax.Array
    elas_t: jax.Array
    log_z0_tm1: jax.Array
    log_z0_t: jax.Array
    running_avg_tax_rates: jax.Array


def init_saez_state(n_brackets: int) -> SaezState:
    """An empty buffer, elasticity estimates 0.5, intercepts 0, average rates 0
    (Foundation's initial values)."""
    f = float_dtype()
    return SaezState(
        saez_buffer=jnp.zeros((SAEZ_BUFFER_SIZE, 2), f),
        saez_count=jnp.zeros((), jnp.int32),
        elas_tm1=jnp.asarray(0.5, f),
        elas_t=jnp.asarray(0.5, f),
        log_z0_tm1=jnp.zeros((), f),
        log_z0_t=jnp.zeros((), f),
        running_avg_tax_rates=jnp.zeros(n_brackets, f),
    )


def record(saez: SaezState, income, marginal_rate) -> SaezState:
    """``saez`` with one tax day's samples appended (Foundation's
    ``_update_saez_buffer``), the oldest dropped beyond ``SAEZ_BUFFER_SIZE``.

    Args:
        income, marginal_rate: float [n] each agent's income this period (coin)
            and the marginal rate it faced.
    """
    n = income.shape[0]
    entries = jnp.stack([income, marginal_rate], axis=1)
    return saez.replace(
        saez_buffer=jnp.concatenate([saez.saez_buffer, entries])[n:],
        saez_count=jnp.minimum(saez.saez_count + n, SAEZ_BUFFER_SIZE),
    )


def new_period_rates(key, saez: SaezState, cutoffs, rate_min, limit, pareto_weight_type: str,
                     fixed_elas=None):
    """A new tax period's bracket rates (``compute_and_set_new_period_rates_from_saez_formula``).

    Args:
        key: PRNG key of the random rates used while the buffer is not full.
        saez: the model's ``SaezState``.
        cutoffs: float [B] bracket cutoffs (coin).
        rate_min, limit: float [] the lowest and the current highest rate.
        pareto_weight_type: "inverse_income" | "uniform".
        fixed_elas: None (use the estimate) or float [] the elasticity to use.
    Returns:
        ``(rates, saez)``: float [B] the new rates, and the state with the
        updated estimates and running-average rates (unchanged, and the rates
        uniformly random in [rate_min, limit], until the buffer is full).
    """
    f = float_dtype()
    reached = saez.saez_count >= SAEZ_BUFFER_SIZE
    random_rates = jax.random.uniform(key, cutoffs.shape, f, minval=rate_min, maxval=limit)

    valid = jnp.arange(SAEZ_BUFFER_SIZE) >= SAEZ_BUFFER_SIZE - saez.saez_count
    z, tau = saez.saez_buffer[:, 0], saez.saez_buffer[:, 1]
    elas_tm1, log_z0_tm1 = saez.elas_t, saez.log_z0_t
    elas_t, log_z0_t = estimate_elasticity(z, tau, valid, elas_tm1, log_z0_tm1)
    elas = elas_t if fixed_elas is None else jnp.asarray(fixed_elas, f)
    edges, bin_sizes = saez_bins(cutoffs)
    gz, az = binned_g_and_a(z, valid, edges, pareto_weight_type)
    taus = saez_marginal_rates(gz, az, elas)
    rates = jnp.clip(bracketize(taus, edges, bin_sizes, cutoffs), rate_min, limit)

    def pick(new, old):
        return jnp.where(reached, new, old)

    return pick(rates, random_rates), saez.replace(
        elas_tm1=pick(elas_tm1, saez.elas_tm1),
        log_z0_tm1=pick(log_z0_tm1, saez.log_z0_tm1),
        elas_t=pick(elas_t, saez.elas_t),
        log_z0_t=pick(log_z0_t, saez.log_z0_t),
        running_avg_tax_rates=pick(saez.running_avg_tax_rates * 0.99 + rates * 0.01, saez.running_avg_tax_rates),
    )


def estimate_elasticity(z, tau, valid, elas_tm1, log_z0_tm1):
    """Foundation's ``estimate_uniform_income_elasticity``, smoothed.

    OLS of log income on log(1 - marginal rate) over the valid samples with
    z > 0 and tau < 1; the new estimate is ``(1 - SAEZ_ELAS_DF) * max(slope, 0)
    + SAEZ_ELAS_DF * elas_tm1``. With fewer than 10 usable samples, or rates
    that do not vary (std < 1e-6), the previous values are kept.

    Args:
        z, tau: float [S] buffered incomes (coin) and marginal rates.
        valid: bool [S] which buffer entries hold samples.
        elas_tm1, log_z0_tm1: float [] the previous elasticity and intercept.
    Returns:
        ``(elas_t, log_z0_t)``, float [] each.
    """
    ok = valid & (z > 0) & (tau < 1)
    n_ok = jnp.sum(ok)
    okf = ok.astype(z.dtype)
    nf = jnp.maximum(n_ok, 1).astype(z.dtype)
    tau_mean = jnp.sum(tau * okf) / nf
    tau_std = jnp.sqrt(jnp.sum(jnp.where(ok, jnp.abs(tau - tau_mean) ** 2, 0.0)) / nf)
    x = jnp.where(ok, jnp.log(jnp.maximum(1 - jnp.where(ok, tau, 0.0), 1e-9)), 0.0)
    y = jnp.where(ok, jnp.log(jnp.maximum(jnp.where(ok, z, 1.0), 1e-9)), 0.0)
    xtx = jnp.array([[jnp.sum(x * x), jnp.sum(x)], [jnp.sum(x), jnp.sum(okf)]])
    xy = jnp.array([jnp.sum(x * y), jnp.sum(y)])
    use = (n_ok >= 10) & (tau_std >= 1e-6)
    xtx = jnp.where(use, xtx, jnp.eye(2, dtype=z.dtype))
    elas, log_z0 = jnp.linalg.inv(xtx).T.dot(xy)
    elas_t = ((1 - SAEZ_ELAS_DF) * jnp.maximum(elas, 0.0)) + (SAEZ_ELAS_DF * elas_tm1)
    return jnp.where(use, elas_t, elas_tm1), jnp.where(use, log_z0, log_z0_tm1)


def saez_bins(cutoffs):
    """The estimation bins: edges float [101] from 0 to the top cutoff
    (numpy's ``linspace``, as Foundation's ``_saez_income_bin_edges``) and
    sizes float [101] (the last one, above the top cutoff, infinite)."""
    top = cutoffs[-1]
    edges = jnp.arange(SAEZ_N_BINS + 1, dtype=cutoffs.dtype) * (top / SAEZ_N_BINS)
    edges = edges.at[-1].set(top)
    sizes = jnp.concatenate([edges[1:] - edges[:-1], jnp.full((1,), jnp.inf, cutoffs.dtype)])
    return edges, sizes


def pareto_weight(z, pareto_weight_type: str):
    """Welfare weight of income ``z`` (float [...]): 1 / max(1, z) for
    "inverse_income", 1 for "uniform" (Foundation's ``pareto_weight_type``)."""
    if pareto_weight_type == "uniform":
        return jnp.ones_like(z)
    return 1.0 / jnp.maximum(1, z)


def binned_g_and_a(z, valid, edges, pareto_weight_type: str):
    """Foundation's ``get_binned_saez_welfare_weight_and_pareto_params``.

    Args:
        z: float [S] buffered incomes (coin); valid: bool [S] entries in use.
        edges: float [101] from ``saez_bins``.
        pareto_weight_type: "inverse_income" | "uniform".
    Returns:
        ``(G, A)``, float [101] each: per bin (the last one above the top
        cutoff) the average welfare weight of incomes >= z, and the Pareto
        parameter z p(z) / P(z' >= z) (NaN in empty bins).
    """
    dt = z.dtype
    nb = SAEZ_N_BINS
    ge = (z[:, None] >= edges[None, :]) & valid[:, None]
    n_ge = jnp.sum(ge, axis=0)  # [101] #(z >= edge_k)
    n_gt_top = jnp.sum(valid & (z > edges[-1]))
    counts = jnp.concatenate([n_ge[:nb - 1] - n_ge[1:nb], (n_ge[nb - 1] - n_gt_top)[None]])
    below = valid & (z < edges[0])
    above = valid & (z > edges[-1])
    n_below, n_above = jnp.sum(below), jnp.sum(above)
    mids = 0.5 * (edges[:-1] + edges[1:])

    # G(z): average welfare weight of incomes >= z.
    w_below = jnp.sum(jnp.where(below, pareto_weight(jnp.maximum(z, 0), pareto_weight_type), 0.0))
    w_above = jnp.sum(jnp.where(above, pareto_weight(z, pareto_weight_type), 0.0))
    w_bins = counts.astype(dt) * pareto_weight(mids, pareto_weight_type)
    total_w = jnp.sum(w_bins) + w_below + w_above
    density = jnp.concatenate([w_bins, w_above[None]]) / (total_w + 1e-9)
    density_geq = jnp.cumsum(density[::-1])[::-1]
    n_total = (jnp.sum(counts) + n_below + n_above).astype(dt)
    pz = jnp.concatenate([counts.astype(dt) / n_total, (n_above / n_total)[None]])
    prob_geq = jnp.cumsum(pz[::-1])[::-1]
    g = density_geq / (prob_geq + 1e-9)
    gz = jnp.concatenate([0.5 * (g[:-1] + g[1:]), g[-1:]])

    # A(z) = z p(z) / P(z' >= z), per unit bin width.
    cum = jnp.cumsum(pz.at[0].add(n_below / n_total))
    cum_pz = jnp.concatenate([cum[:1], jnp.minimum(cum[1:], 1.0)])
    p_geq = 1 - cum_pz + 0.5 * pz
    width = edges[1:] - edges[:-1]
    paz = mids * pz[:nb] / (jnp.clip(p_geq[:nb], 0, 1) + 1e-9) / width
    az_bins = jnp.where(pz[:nb] == 0, jnp.nan, paz)
    mean_above = jnp.sum(jnp.where(above, z, 0.0)) / jnp.maximum(n_above, 1)
    az_above = jnp.where(n_above > 0, mean_above / (mean_above - edges[-1] + 1e-9), 0.0)
    return gz, jnp.concatenate([az_bins, az_above[None]])


def saez_marginal_rates(gz, az, elas):
    """Foundation's ``get_saez_marginal_rates``: float [101] per-bin rates
    tau = (1 - G) / (1 - G + A e), empty (NaN) bins linearly interpolated
    between their neighbours (0 before the first non-empty bin)."""
    taus = (1.0 - gz) / (1.0 - gz + az * elas + 1e-9)
    m = taus.shape[0]
    idx = jnp.arange(m)
    real = ~jnp.isnan(taus)
    prev_i = jax.lax.cummax(jnp.where(real, idx, -1))
    prev_i_excl = jnp.concatenate([jnp.array([-1]), prev_i[:-1]])
    next_i = jax.lax.cummin(jnp.where(real, idx, m), reverse=True)
    safe = jnp.where(real, taus, 0.0)
    last_val = jnp.where(prev_i_excl >= 0, safe[jnp.maximum(prev_i_excl, 0)], 0.0)
    next_val = safe[jnp.minimum(next_i, m - 1)]
    span = (next_i - prev_i_excl).astype(taus.dtype)
    step = (next_val - last_val) / span
    interp = (idx - prev_i_excl).astype(taus.dtype) * step + last_val
    return jnp.where(real, taus, interp)


def bracketize(taus, edges, bin_sizes, cutoffs):
    """Foundation's ``bracketize_schedule``: float [B] bracket rates, each the
    average of the bin rates over its bracket (the top bracket gets the top
    bin's rate). ``cutoffs`` float [B] (coin)."""
    past = jnp.maximum(0, cutoffs[1:, None] - edges[None, :])
    bin_income = jnp.minimum(bin_sizes[None, :], past)
    due = jnp.maximum(0, jnp.sum(taus[None, :] * bin_income, axis=1))
    burden = due - jnp.concatenate([jnp.zeros(1, due.dtype), due[:-1]])
    sizes = cutoffs[1:] - cutoffs[:-1]
    return jnp.concatenate([burden / sizes, taus[-1:]])
