"""Interop loaders for PeriodicBracketTax and WealthRedistribution.

Each loader reads a live Foundation component's internals
(``ai_economist/foundation/components/redistribution.py``) into
the jaxecon sub-state (see the components' docstrings for the fields).
Importing this module registers them in ``COMPONENT_LOADERS``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.components.redistribution import SAEZ_BUFFER_SIZE
from jaxecon.core.state import float_dtype
from jaxecon.interop.foundation_state import register_component_loader


def _f(x):
    return jnp.asarray(np.array(x, dtype=np.float64), float_dtype())


@register_component_loader("PeriodicBracketTax")
def _load_periodic_bracket_tax(comp, ref, ref_env, state):
    n, b = comp.n_agents, comp.n_brackets
    sub = dict(comp.init(jax.random.key(0), None))
    sub["tax_cycle_pos"] = jnp.asarray(int(ref.tax_cycle_pos), jnp.int32)
    sub["rate_idx"] = jnp.asarray(np.array(ref.curr_rate_indices, np.int64), jnp.int32)
    sub["saez_rates"] = _f(ref.curr_bracket_tax_rates)
    sub["curr_rates_obs"] = _f(ref._curr_rates_obs)
    sub["last_coin"] = _f(ref.last_coin)
    sub["last_income"] = _f(ref.last_income)
    sub["last_marginal_rate"] = _f(ref.last_marginal_rate)
    sub["last_effective_tax_rate"] = _f(ref.last_effective_tax_rate)

    # Episode trackers, rebuilt from the reference's lists.
    sched = [list(ref._schedules[k]) for k in comp.labels]
    sub["n_tax_days"] = jnp.asarray(len(sched[0]), jnp.int32)
    sub["schedule_sum"] = _f([float(np.sum(s)) if s else 0.0 for s in sched])
    sub["occupancy"] = jnp.asarray([int(ref._occupancy[k]) for k in comp.labels], jnp.int32)
    sub["total_collected_taxes"] = _f(float(ref.total_collected_taxes))
    sub["effective_rate_sum"] = _f(float(np.sum(ref.all_effective_tax_rates)) if ref.all_effective_tax_rates else 0.0)
    income_pos, paid = np.zeros(n), np.zeros(n)
    for day in ref.taxes[(ref.period - 1)::ref.period]:
        if isinstance(day, dict):
            for i in range(n):
                income_pos[i] += max(0.0, day[str(i)]["income"])
                paid[i] += day[str(i)]["tax_paid"]
    sub["income_pos_sum"] = _f(income_pos)
    sub["tax_paid_sum"] = _f(paid)
    if ref.taxes and isinstance(ref.taxes[-1], dict):
        day = ref.taxes[-1]
        sub["enacted"] = jnp.asarray(True)
        sub["last_tax_paid"] = _f([day[str(i)]["tax_paid"] for i in range(n)])
        sub["last_lump_sum"] = _f(day["0"]["lump_sum"])
        sub["last_schedule"] = _f(day["schedule"])
        sub["last_cutoffs"] = _f(day["cutoffs"])

    if comp.tax_model == "saez":
        entries = np.array(ref.saez_buffer, dtype=np.float64).reshape(-1, 2)[-SAEZ_BUFFER_SIZE:]
        buf = np.zeros((SAEZ_BUFFER_SIZE, 2))
        if len(entries):
            buf[SAEZ_BUFFER_SIZE - len(entries):] = entries
        sub["saez_buffer"] = _f(buf)
        sub["saez_count"] = jnp.asarray(len(entries), jnp.int32)
        for k in ("elas_tm1", "elas_t", "log_z0_tm1", "log_z0_t"):
            sub[k] = _f(float(getattr(ref, k)))
        sub["running_avg_tax_rates"] = _f(ref.running_avg_tax_rates)
    assert sub["rate_idx"].shape == (b,)
    return sub


@register_component_loader("WealthRedistribution")
def _load_wealth_redistribution(comp, ref, ref_env, state):
    return {}
