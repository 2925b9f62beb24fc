"""The COVID-19 scenario's reward nonlinearities, in Foundation's float32 arithmetic.

Follows ai-economist 1.7.1 ``scenarios/covid19/covid19_env.py``
(``crra_nonlinearity``, ``min_max_normalization``, the health-weight
scaling). ``float32_rounding`` rounds to float32 where Foundation does.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxecon.core.numerics import as_float32

DAYS_PER_YEAR = 365


def float32_rounder(enabled: bool):
    """``f32(x)`` = ``as_float32(x, enabled)``."""
    return lambda x: as_float32(x, enabled)


def crra_nonlinearity(x, eta, float32_rounding: bool):
    """Daily CRRA utility of a daily productivity fraction x (float32 arithmetic as Foundation).

    crra(x) = (1 + ((clip(365 x, 0.1, 3))^(1 - eta) - 1) / (1 - eta)) / 365; for
    eta == 1 (where Foundation divides by zero) the limit (1 + log(clip(365 x))) / 365.
    ``float32_rounding``: round to float32 where Foundation does (``as_float32``).
    """
    f32 = float32_rounder(float32_rounding)
    annual = jnp.clip(f32(DAYS_PER_YEAR * x), f32(jnp.asarray(0.1, x.dtype)), 3.0)
    e1 = f32(1 - f32(eta))
    one = e1 == 0
    safe = jnp.where(one, 1.0, e1)
    iso = f32(f32(f32(annual ** safe) - 1) / safe)
    util = jnp.where(one, jnp.log(annual), iso)
    return f32(f32(1 + util) / DAYS_PER_YEAR)


def min_max_normalization(x, lo, hi, float32_rounding: bool, float32_x=True):
    """(x - lo) / (hi - lo + 1e-10); ``float32_x``: x is float32, so the difference rounds."""
    f32 = float32_rounder(float32_rounding)
    num = f32(x - lo) if float32_x else x - lo
    return num / f32(f32(hi - lo) + 1e-10)


def scale_health_weight(scaling, alpha, float32_rounding: bool):
    """The health weight a = alpha with its odds z = a / (1 - a) scaled: s z / (1 + s z)."""
    f32 = float32_rounder(float32_rounding)
    z = f32(alpha / f32(1 - alpha))
    sz = f32(f32(scaling) * z)
    return f32(sz / f32(1 + sz))
