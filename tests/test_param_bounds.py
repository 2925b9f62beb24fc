"""One table of parameter bounds (``jaxecon.core.bounds``): ``make``, ``set_param``,
``make_sweep``, ``validate_params`` and ``checked_step`` accept and reject the same values."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import checkify

import jaxecon
from jaxecon import analysis as A
from jaxecon.configs import ECONOMIES
from jaxecon.core.bounds import FINITE, Bound, bound_of
from jaxecon.core.param_checks import leaf_bounds

GRIDWORLD = dict(n_agents=2, world_size=[25, 25], episode_length=3)
COMPONENTS = [("Build", {}), ("Gather", {}), ("PeriodicBracketTax", {})]

# (path in EnvParams, make's keyword: a top-level kwarg, or (component, kwarg), value)
CASES = [
    ("components.Build.payment", ("Build", "payment"), -10),
    ("components.Build.payment", ("Build", "payment"), 5),
    ("scenario.isoelastic_eta", "isoelastic_eta", 5.0),
    ("scenario.isoelastic_eta", "isoelastic_eta", 0.5),
    ("scenario.energy_cost", "energy_cost", -1.0),
    ("scenario.energy_cost", "energy_cost", 0.3),
    ("components.Gather.move_labor", ("Gather", "move_labor"), 1e30),  # large, but finite and >= 0
    ("components.Gather.move_labor", ("Gather", "move_labor"), -0.5),
    ("components.PeriodicBracketTax.rate_max", ("PeriodicBracketTax", "rate_max"), 1.5),
    ("scenario.mixing_weight_gini_vs_coin", "mixing_weight_gini_vs_coin", -0.1),
]


@pytest.fixture(scope="module")
def env():
    return jaxecon.make("layout_from_file/simple_wood_and_stone", components=COMPONENTS, **GRIDWORLD)


def _make_accepts(kwarg, value) -> bool:
    kwargs, components = dict(GRIDWORLD), [(n, dict(kw)) for n, kw in COMPONENTS]
    if isinstance(kwarg, tuple):
        dict(components)[kwarg[0]][kwarg[1]] = value
    else:
        kwargs[kwarg] = value
    try:
        jaxecon.make("layout_from_file/simple_wood_and_stone", components=components, **kwargs)
    except ValueError:
        return False
    return True


def _set_param_accepts(params, path, value) -> bool:
    try:
        A.set_param(params, path, float(value))
    except ValueError as exc:
        assert path in str(exc) and "allowed: a finite number" in str(exc), exc
        return False
    return True


@pytest.mark.parametrize("path, kwarg, value", CASES)
def test_make_and_set_param_accept_the_same_values(env, path, kwarg, value):
    assert _set_param_accepts(env.default_params, path, value) == _make_accepts(kwarg, value)


def test_set_param_rejects_what_make_rejects_naming_path_and_range(env):
    params = env.default_params
    with pytest.raises(ValueError, match=r"components\.Build\.payment = -10\.0 \(allowed: a finite number >= 0\)"):
        A.set_param(params, "components.Build.payment", -10.0)
    with pytest.raises(ValueError, match=r"scenario\.isoelastic_eta = 5\.0 \(allowed: a finite number in \[0, 1\]\)"):
        A.set_param(params, "scenario.isoelastic_eta", 5.0)
    with pytest.raises(ValueError, match=r"isoelastic_eta must be a finite number in \[0, 1\], got 5"):
        jaxecon.make("layout_from_file/simple_wood_and_stone", components=COMPONENTS, isoelastic_eta=5, **GRIDWORLD)
    # a whole node: every leaf is checked against its own field's bound
    build = params.components["Build"]
    with pytest.raises(ValueError, match=r"components\.Build\.payment_max_skill_multiplier = 0\.5"):
        A.set_param(params, "components.Build", build.replace(payment_max_skill_multiplier=0.5))
    with pytest.raises(ValueError, match=r"scenario\.regen_weight\.Wood = 2\.0 \(allowed: a finite number in \[0, 1\]\)"):
        A.set_param(params, "scenario.regen_weight", {"Wood": 2.0, "Stone": 0.1})


def test_validate_params_reports_out_of_range_leaves(env):
    params = env.default_params
    bad = params.replace(scenario=params.scenario.replace(energy_cost=-1.0, isoelastic_eta=jnp.nan))
    with pytest.raises(ValueError) as info:
        jaxecon.validate_params(bad)
    msg = str(info.value)
    assert "scenario.isoelastic_eta = nan" in msg  # non-finite
    assert "scenario.energy_cost = -1.0 (allowed: a finite number >= 0)" in msg  # out of range


def test_checked_step_reports_out_of_range_params_through_checkify(env):
    params = env.default_params
    _, state = env.reset(jax.random.key(0), params)
    checked = jax.jit(env.checked_step)
    err, _ = checked(jax.random.key(1), state, {}, params)
    assert err.get() is None
    bad = params.replace(components={**params.components,
                                     "Build": params.components["Build"].replace(payment=jnp.asarray(-10.0))})
    err, _ = checked(jax.random.key(1), state, {}, bad)
    assert "parameter components.Build.payment is out of range (allowed: a finite number >= 0): -10" in err.get()
    with pytest.raises(checkify.JaxRuntimeError, match="components.Build.payment is out of range"):
        err.throw()


@pytest.fixture(scope="module")
def tax_env():
    return A.make_one_step_economy(n_agents=5, agent_reward_type="isoelastic_coin_minus_labor", labor_cost=0.05)


def test_make_sweep_rejects_rates_make_rejects(tax_env):
    params = tax_env.default_params
    rates = "components.PeriodicBracketTax.fixed_rates"
    n = len(A.get_param(params, rates))
    bad = np.full((3, n), 0.2)
    bad[1, 2] = 1.5
    with pytest.raises(ValueError, match=r"fixed_bracket_rates must hold .* each a finite number in \[0, 1\]"):
        jaxecon.make("one-step-economy", n_agents=5, world_size=[1, 1], episode_length=2,
                     components=[("SimpleLabor", {}), ("PeriodicBracketTax", {
                         "period": 2, "tax_model": "fixed-bracket-rates", "bracket_spacing": "us-federal",
                         "fixed_bracket_rates": list(bad[1])})])
    with pytest.raises(ValueError, match=r"fixed_rates = .*1\.5.* \(allowed: a finite number in \[0, 1\]\)"):
        A.set_param(params, rates, bad[1])
    sweep = A.make_sweep(tax_env, "tax_revenue", wrt=rates)
    actions = {"a": jnp.stack([jnp.zeros(5, jnp.int32), jnp.array([3, 17, 40, 71, 100], jnp.int32)])}
    with pytest.raises(ValueError, match=rf"{rates} = .*1\.5.* \(allowed: a finite number in \[0, 1\]\)"):
        sweep(jax.random.key(0), params, bad, actions)
    multi = A.make_sweep(tax_env, "tax_revenue", wrt=[rates, "scenario.isoelastic_eta"])
    with pytest.raises(ValueError, match=r"scenario\.isoelastic_eta = \[0\.1, 5\.0, 0\.2\]"):
        multi(jax.random.key(0), params, {rates: np.full((3, n), 0.2), "scenario.isoelastic_eta": np.array([0.1, 5.0, 0.2])},
              actions)
    ok = sweep(jax.random.key(0), params, np.clip(bad, 0, 1), actions)  # in range: runs
    assert ok.shape == (3,) and np.all(np.isfinite(np.asarray(ok)))


def test_the_table_and_the_defaults():
    assert bound_of(jaxecon.components.Build.Params, "payment") == Bound(minimum=0)
    assert bound_of(jaxecon.components.PeriodicBracketTax.Params, "annealing_slope") is FINITE
    with pytest.raises(KeyError, match="fields: "):
        bound_of(jaxecon.components.Build.Params, "paymnet")
    assert Bound(0, 20, maximum_open=True).describe() == "a finite number in [0, 20)"
    assert Bound(0, minimum_open=True).describe() == "a finite number > 0"
    for name, economy in ECONOMIES.items():  # every named economy's defaults lie within the table
        params = jaxecon.make_from_config(economy.make()).default_params
        assert jaxecon.validate_params(params) is params, name
        assert any(b is not FINITE for b in leaf_bounds(params).values()), name
