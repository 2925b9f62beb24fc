"""The traced program does not grow with the number of agents.

Every per-agent quantity is an array with a leading agent axis inside the
traced functions (the planner's view of the agents, per-agent metrics,
masks); Foundation's per-agent layouts are written at the boundary. So the
jaxpr of ``reset``, ``step`` and ``metric_arrays`` has (nearly) the same
number of equations for 4 and for 1,000 agents: numpy's pairwise sum adds
one level of additions per doubling beyond 128 agents, nothing else
depends on n. Only shapes are traced (``jax.make_jaxpr``): nothing runs.
"""

from __future__ import annotations

import jax
import jax.extend.core
import pytest

import jaxecon
from jaxecon.analysis import make_one_step_economy
from jaxecon.configs import economy_config


def _count(jaxpr) -> int:
    """Equations of a jaxpr, those of the jaxprs inside it (scan, cond, jit) included."""
    return sum(1 + sum(_count(sub) for sub in jax.extend.core.jaxprs_in_params(e.params)) for e in jaxpr.eqns)


def _sizes(env) -> dict:
    params = env.default_params
    obs, state = jax.eval_shape(lambda k: env.reset(k, params), jax.random.key(0))
    actions = jax.eval_shape(env.sample_actions, jax.random.key(1), obs)
    return {
        "reset": _count(jax.make_jaxpr(lambda k: env.reset(k, params))(jax.random.key(0)).jaxpr),
        "step": _count(jax.make_jaxpr(env.step)(jax.random.key(2), state, actions, params).jaxpr),
        "metric_arrays": _count(jax.make_jaxpr(env.metric_arrays)(state, params).jaxpr),
        "sample_actions": _count(jax.make_jaxpr(env.sample_actions)(jax.random.key(1), obs).jaxpr),
    }


def _gather_trade_build(n: int):
    """The canonical components and taxes, n agents on a uniform map of about 16 tiles each."""
    cfg = economy_config("gtb100")
    side = max(10, int((16 * n) ** 0.5))
    cfg.update(n_agents=n, world_size=[side, side])
    return jaxecon.make_from_config(cfg)


@pytest.mark.parametrize("economy", ["one_step", "gather_trade_build"])
@pytest.mark.slow
def test_the_traced_program_is_flat_in_the_number_of_agents(economy):
    make = (lambda n: make_one_step_economy(n_agents=n)) if economy == "one_step" else _gather_trade_build
    small, mid, large = _sizes(make(4)), _sizes(make(300)), _sizes(make(1000))
    for fn in small:
        # A per-agent Python loop would add at least one equation per agent:
        # from 300 to 1,000 agents the program grows by under 5% ...
        assert large[fn] <= 1.05 * mid[fn], (economy, fn, mid[fn], large[fn])
        # ... and from 4 to 1,000 agents (250x) by under 1.6x: the rest is
        # constant-size code chosen by size (Foundation's pairwise Gini under
        # 30 agents, integer-key sorts from 256 values, blocked action sampling)
        assert large[fn] <= 1.6 * small[fn], (economy, fn, small[fn], large[fn])


def _stepped(env, steps: int = 2):
    """The one-step economy after ``steps`` steps of random valid actions (incomes taxed at step 2)."""
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    for t in range(steps):
        obs, state, *_ = env.step(jax.random.key(10 + t), state, env.sample_actions(jax.random.key(t), obs), params)
    return state, params


def test_observed_incomes_are_the_sorted_incomes_at_evenly_spaced_ranks():
    import numpy as np

    full = make_one_step_economy(n_agents=5)
    state, params = _stepped(full)
    tax = full.get_component("PeriodicBracketTax")
    every = np.asarray(tax.observe(state, params.components[tax.name]).mobile["last_incomes"])
    assert every.shape == (5, 5) and np.all(np.diff(every[0]) >= 0) and np.ptp(every[0]) > 0
    for k, ranks in ((2, [0, 4]), (3, [0, 2, 4]), (4, [0, 1, 3, 4]), (5, [0, 1, 2, 3, 4])):
        env = make_one_step_economy(n_agents=5, observed_incomes=k)
        comp = env.get_component("PeriodicBracketTax")
        seen = comp.observe(state, params.components[tax.name])
        np.testing.assert_array_equal(seen.mobile["last_incomes"], every[:, ranks])
        np.testing.assert_array_equal(seen.planner["last_incomes"], every[0])  # the planner sees all
        assert comp.observation_spaces().mobile["last_incomes"].shape == (k,)
        flat = env.observation_space("a")["flat"].shape[-1]
        assert flat == full.observation_space("a")["flat"].shape[-1] - (5 - k)


def test_with_observed_incomes_an_agents_observation_does_not_grow_with_the_agents():
    sizes = [make_one_step_economy(n_agents=n, observed_incomes=8).observation_space("a")["flat"].shape[-1]
             for n in (10, 1000)]
    assert sizes[0] == sizes[1]
    for bad in (1, 11, 2.5):
        with pytest.raises(ValueError, match="PeriodicBracketTax.observed_incomes"):
            make_one_step_economy(n_agents=10, observed_incomes=bad)
