"""Tests of jaxecon.analysis: gradients, sweeps, relaxations, optimal taxation.

- Gradients through full ``lax.scan`` rollouts agree with central finite
  differences in float64 (``jax.enable_x64``) on the tax path, the utility path
  (one-step economy, fixed actions), the softmax best-response path, a small
  Gather-Build-Tax economy and the COVID-19 economy (its smooth,
  ``float32_rounding=False`` mode; the rounded mode has the same gradients).
- Gradients are finite on a grid of schedules (float32).
- A vmapped sweep over 1,024 schedules equals 1,024 separate jitted calls.
- Relaxations at temperature -> 0 equal the exact dynamics; temperature 0 is
  bit-identical to the reference dynamics.
Small episodes; jitted functions are built once per module.
"""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon import analysis as A
from jaxecon.analysis import params as P
from jaxecon.analysis import relaxations as R
from jaxecon.components.redistribution import (
    marginal_rate,
    soft_marginal_rate,
    soft_taxes_due,
    taxes_due,
)

TAXP = "components.PeriodicBracketTax"
RATES = f"{TAXP}.fixed_rates"
CUTOFFS = f"{TAXP}.bracket_cutoffs"
HOURS = np.array([3, 17, 40, 71, 100])  # incomes well inside brackets for the skills below
KEY = jax.random.key(0)


def labor_actions(env, hours):
    a = jnp.stack([jnp.zeros(len(hours), jnp.int32), jnp.asarray(hours, jnp.int32)])
    return {"a": a}


def rel_err(g, fd):
    g, fd = np.ravel(np.asarray(g, np.float64)), np.ravel(np.asarray(fd, np.float64))
    return np.linalg.norm(g - fd) / max(np.linalg.norm(fd), 1e-300)


def central_fd(f, x, eps):
    """Central differences of scalar f at float64 array x (any shape)."""
    x = np.asarray(x, np.float64)
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[i] = eps
        out[i] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
    return out


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def iso_env():
    """One-step economy, isoelastic utility, 5 agents, us-federal brackets."""
    return A.make_one_step_economy(n_agents=5, agent_reward_type="isoelastic_coin_minus_labor",
                                   labor_cost=0.05)


@pytest.fixture(scope="module")
def ql_env():
    """One-step economy, quasi-linear utility (the worked example's), 5 agents."""
    return A.make_one_step_economy(n_agents=5)


ISO_WRT = (RATES, CUTOFFS, "scenario.isoelastic_eta", "scenario.labor_cost", "components.SimpleLabor.skills")


@pytest.fixture(scope="module")
def iso_fns(iso_env):
    return {m: A.make_metric_grad(iso_env, m, wrt=ISO_WRT)
            for m in ("planner_objective", "tax_revenue", "mean_agent_utility")}


def value_at(grad_fn, wrt, x0, key, params, *args):
    """x -> metric value with leaf ``wrt`` (one path) set to x, from a value_and_grad fn."""
    def f(x):
        return grad_fn(key, P.insert(params, tuple(x0), {**x0, wrt: jnp.asarray(x)}), *args)[0]
    return f


@pytest.fixture(scope="module")
def gtb_env():
    return jaxecon.make(
        "layout_from_file/simple_wood_and_stone",
        components=[("Build", {"skill_dist": "pareto", "payment_max_skill_multiplier": 3}),
                    ("Gather", {"skill_dist": "pareto"}),
                    ("PeriodicBracketTax", {"tax_model": "us-federal-single-filer-2018-scaled",
                                            "period": 10, "usd_scaling": 100.0})],
        n_agents=4, world_size=[9, 9], episode_length=40,
        env_layout_file="quadrant_8x8_4each_8clump.txt", starting_agent_coin=5,
    )


def builder_policy(env):
    """Random valid actions, but build whenever possible (so coin flows)."""
    def policy(key, obs, params):
        a = env.sample_actions(key, obs)
        can_build = obs["a"]["action_mask"][:, 1] > 0
        return {**a, "a": jnp.where(can_build, 1, a["a"])}
    return policy


# --------------------------------------------------------------------------- params / errors
def test_an_out_of_range_action_in_a_given_sequence_is_named(ql_env):
    """SimpleLabor hours 1000 gave value 0 and a zero gradient without a word; a
    traced sequence keeps the step's rule (an out-of-range action is a NO-OP)."""
    params = ql_env.default_params
    acts = labor_actions(ql_env, [3, 17, 40, 71, 1000])
    message = ('actions["a"] holds 1000 at index [1, 4] (step first), outside its allowed actions 0..100: '
               "env.step would take it as a NO-OP (as Foundation does), so the episode would run as if that "
               "agent idled and the gradient through it would be zero")
    for call in (lambda: A.grad_metric(ql_env, "planner_objective", KEY, params, wrt=RATES, actions=acts),
                 lambda: A.value_and_grad_metric(ql_env, "tax_revenue", KEY, params, wrt=RATES, actions=acts),
                 lambda: A.make_metric_grad(ql_env, "tax_revenue", wrt=RATES)(KEY, params, acts),
                 lambda: A.rollout(ql_env, KEY, params, actions={"a": np.asarray(acts["a"])})):
        with pytest.raises(ValueError) as exc:
            call()
        assert str(exc.value) == message
    jax.eval_shape(lambda a: A.rollout(ql_env, KEY, params, actions=a).returns, acts)  # traced: the step's rule


def test_param_paths_and_errors(iso_env):
    params = iso_env.default_params
    paths = A.param_paths(params)
    assert RATES in paths and "scenario.isoelastic_eta" in paths and f"{TAXP}.bracket_temperature" in paths
    p2 = A.set_param(params, "scenario.labor_cost", 0.3)
    assert A.get_param(p2, "scenario.labor_cost") == 0.3
    assert A.get_param(params, "scenario.labor_cost") == 0.05
    with pytest.raises(KeyError, match="allowed"):
        A.get_param(params, "components.PeriodicBracketTax.rates")
    with pytest.raises(ValueError, match="allowed: .*productivity"):
        A.make_metric_grad(iso_env, "welfare")
    with pytest.raises(ValueError, match="exactly one"):
        A.rollout(iso_env, KEY, params)
    with pytest.raises(ValueError, match="shape"):
        A.rollout(iso_env, KEY, params, actions={"a": jnp.zeros((3, 5), jnp.int32)})
    with pytest.raises(ValueError, match=r"must have the shape\(s\) \(7,\), got \(3,\)"):
        A.set_param(params, RATES, jnp.zeros(3))
    sweep = A.make_sweep(iso_env, "tax_revenue", wrt=RATES)
    for bad in [(3,), (3, 1), (3, 5)]:  # no silent broadcasting of a [N, 1] batch
        with pytest.raises(ValueError, match="one leading batch axis N"):
            sweep(KEY, params, jnp.zeros(bad), labor_actions(iso_env, HOURS))
    wrapper_tax = jaxecon.make(
        "one-step-economy", n_agents=5, world_size=[1, 1], episode_length=2,
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2})])  # model_wrapper
    with pytest.raises(ValueError, match="not read by this economy's PeriodicBracketTax"):
        A.make_metric_grad(wrapper_tax, "tax_revenue", wrt=RATES)
    with pytest.raises(ValueError, match="not read by this economy's scenario"):  # quasi-linear agents
        A.make_metric_grad(A.make_one_step_economy(n_agents=5), "planner_objective",
                           wrt="scenario.isoelastic_eta")
    with pytest.raises(KeyError, match="overlap"):
        A.make_metric_grad(iso_env, "tax_revenue", wrt=[TAXP, RATES])
    with pytest.raises(KeyError, match="non-empty list of paths"):
        A.make_metric_grad(iso_env, "tax_revenue", wrt=[RATES, 3])
    with pytest.raises(ValueError, match="real numbers"):
        A.set_param(params, "scenario.isoelastic_eta", True)


def test_the_function_makers_name_bad_arguments_when_they_make_the_function(iso_env):
    """Each was accepted until the made function's first call (or failed with an AttributeError)."""
    with pytest.raises(TypeError, match=r"^env must be a jaxecon env \(jaxecon\.make\(\.\.\.\)\), got builtins\.NoneType$"):
        A.make_rollout_fn(None)
    with pytest.raises(TypeError, match=r"^env must be a jaxecon env"):
        A.metric_fn(None, "productivity")
    with pytest.raises(TypeError, match=r"^env must be a jaxecon env"):
        A.rate_grid(None)
    with pytest.raises(ValueError, match=r"^n_steps must be an int >= 1, got 0$"):
        A.make_rollout_fn(iso_env, n_steps=0)
    with pytest.raises(ValueError, match=r"^policy must be None or callable \(key, obs, params\) -> actions, got 'random'$"):
        A.make_sweep(iso_env, "tax_revenue", wrt=RATES, policy="random")
    with pytest.raises(KeyError, match=r"no parameter 'nope' under 'EnvParams' \(path 'nope\.x'\); allowed: "):
        A.make_sweep(iso_env, "tax_revenue", wrt="nope.x")


def test_disable_taxes_is_structural():
    """disable_taxes=True: no tax whatever the rate leaves say (they are unread, so refused as wrt)."""
    env = A.make_one_step_economy(n_agents=5, disable_taxes=True)
    params = A.set_param(env.default_params, f"{TAXP}.rate_max", 1.0)
    r = A.rollout(env, KEY, params, actions=labor_actions(env, HOURS))
    assert float(A.metric_value(env, "tax_revenue", r, params)) == 0.0
    with pytest.raises(ValueError, match="not read"):
        A.make_metric_grad(env, "tax_revenue", wrt=f"{TAXP}.rate_max")
    with pytest.raises(ValueError, match="one-step economy"):
        R.one_step_outcome(jaxecon.make(
            "one-step-economy", n_agents=3, world_size=[1, 1], episode_length=3,
            components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2})]), params)


# --------------------------------------------------------------------------- finite differences (float64)
@pytest.mark.parametrize("metric", ["planner_objective", "tax_revenue", "mean_agent_utility"])
def test_fd_one_step_tax_and_utility_paths(iso_env, iso_fns, metric):
    """d metric / d (rates, cutoffs, eta, labor_cost, skills) with fixed actions == central FD."""
    grad_fn = iso_fns[metric]
    with jax.enable_x64(True):
        params = iso_env.default_params
        acts = labor_actions(iso_env, HOURS)
        x0 = P.as_float_tree(P.select(params, ISO_WRT))
        v, g = grad_fn(KEY, params, acts)
        assert v.dtype == jnp.float64
        for path in ISO_WRT:
            fd = central_fd(value_at(grad_fn, path, x0, KEY, params, acts), x0[path], 1e-6)
            if np.abs(fd).max() == 0:  # e.g. taxes do not depend on eta or labor_cost
                assert np.abs(np.asarray(g[path])).max() == 0, (path, g[path])
            else:
                assert rel_err(g[path], fd) < 1e-5, (path, g[path], fd)
        # taxes are linear in the rates: the tax-revenue gradient is the bracket income.
        if metric == "tax_revenue":
            assert np.all(np.asarray(g[RATES][:5]) > 0)


def test_fd_soft_brackets(iso_env):
    """With the soft bracket assignment the cutoff gradient of taxes is smooth and matches FD."""
    wrt = (RATES, CUTOFFS)
    gf = A.make_metric_grad(iso_env, "tax_revenue", wrt=wrt)
    with jax.enable_x64(True):
        params = R.with_bracket_temperature(iso_env.default_params, 3.0)
        acts = labor_actions(iso_env, HOURS)
        x0 = P.as_float_tree(P.select(params, wrt))
        _, g = gf(KEY, params, acts)
        for path in wrt:
            fd = central_fd(value_at(gf, path, x0, KEY, params, acts), x0[path], 1e-6)
            assert rel_err(g[path], fd) < 1e-5, (path, g[path], fd)
        assert np.all(np.abs(np.asarray(g[CUTOFFS][1:5])) > 0)


def test_fd_relaxed_best_responses(iso_env, ql_env):
    """Gradient of the planner objective through softmax best responses == central FD."""
    for env in (iso_env, ql_env):
        def obj(rates, eta, params, env=env):
            p = A.set_param(params, "scenario.isoelastic_eta", eta)
            return R.one_step_outcome(env, p, 0.05, rates=rates).planner_objective

        vg = jax.jit(jax.value_and_grad(obj, argnums=(0, 1)))

        def f(rates, eta, params, vg=vg):
            return vg(rates, eta, params)[0]

        def g(rates, eta, params, vg=vg):
            return vg(rates, eta, params)[1]
        with jax.enable_x64(True):
            params = env.default_params
            r0 = jnp.asarray([0.1, 0.15, 0.25, 0.3, 0.35, 0.4, 0.45])
            eta = jnp.asarray(0.23)
            gr, ge = g(r0, eta, params)
            fd_r = central_fd(lambda x: f(jnp.asarray(x), eta, params), r0, 1e-6)
            fd_e = central_fd(lambda x: f(r0, jnp.asarray(x), params), eta, 1e-6)
            assert rel_err(gr, fd_r) < 1e-5, (gr, fd_r)
            if env is iso_env:
                assert rel_err(ge, fd_e) < 1e-5, (ge, fd_e)
            assert np.abs(np.asarray(gr)).max() > 0


def test_fd_gather_build_tax_economy(gtb_env):
    """Gradients through a 40-step lax.scan of Build + Gather + PeriodicBracketTax == FD."""
    wrt = ("components.Build.payment", RATES, "scenario.energy_cost", "scenario.isoelastic_eta",
           "scenario.starting_agent_coin")
    pol = builder_policy(gtb_env)
    gf = A.make_metric_grad(gtb_env, "planner_objective", wrt=wrt, policy=pol)
    with jax.enable_x64(True):
        params = gtb_env.default_params
        key = jax.random.key(3)
        x0 = P.as_float_tree(P.select(params, wrt))
        v, g = gf(key, params)
        assert np.isfinite(float(v))
        for path in wrt:
            fd = central_fd(value_at(gf, path, x0, key, params), x0[path], 1e-6)
            assert rel_err(g[path], fd) < 1e-5, (path, g[path], fd)
        assert abs(float(g["components.Build.payment"])) > 0  # houses were built
        assert np.abs(np.asarray(g[RATES])).max() > 0  # taxes were collected


# --------------------------------------------------------------------------- whole EnvParams, float32
def test_grad_whole_envparams_with_market_float32():
    """jax.grad w.r.t. all of EnvParams runs under jit through a scan with every GTB component."""
    env = jaxecon.make(
        "layout_from_file/simple_wood_and_stone",
        components=[("Build", {}), ("ContinuousDoubleAuction", {}), ("Gather", {}),
                    ("PeriodicBracketTax", {"period": 5})],
        n_agents=4, world_size=[9, 9], episode_length=10,
        env_layout_file="quadrant_8x8_4each_8clump.txt", starting_agent_coin=10,
    )
    params = env.default_params
    v, g = A.make_metric_grad(env, "planner_objective", policy=builder_policy(env))(KEY, params)
    leaves = jax.tree.leaves(g)
    assert v.dtype == jnp.float32 and all(x.dtype == jnp.float32 for x in leaves)
    assert jax.tree.structure(g) == jax.tree.structure(P.as_float_tree(params))
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in leaves)


def test_grad_whole_envparams_covid19_float32():
    """The COVID-19 economy: gradients w.r.t. all of EnvParams run through a 10-day scan
    and are finite."""
    config = pytest.importorskip("jaxecon.scenarios.covid19.config")
    cfg = dict(config.default_covid_config())
    cfg["episode_length"] = 10
    env = jaxecon.make_from_config(cfg)
    params = env.default_params
    v, g = A.make_metric_grad(env, "planner_return", policy=lambda k, o, p: env.sample_actions(k, o))(
        KEY, params)
    assert np.isfinite(float(v))
    assert all(bool(jnp.all(jnp.isfinite(x))) for x in jax.tree.leaves(g))
    assert float(jnp.abs(g.scenario.health_priority_scaling_planner)) > 0


COVID_WRT = (
    "scenario.beta_slopes_modulation", "scenario.unemployment_modulation",
    "scenario.risk_free_interest_rate", "scenario.health_priority_scaling_planner",
    "scenario.economic_reward_crra_eta", "scenario.infection_too_sick_to_work_rate",
    "components.FederalGovernmentSubsidy.max_annual_subsidy_per_person",
)


def covid_setup(metric, rounding, T=30):
    """(params, fixed random actions, jitted value-and-grad of ``metric`` w.r.t. COVID_WRT)."""
    config = pytest.importorskip("jaxecon.scenarios.covid19.config")
    cfg = dict(config.default_covid_config(), episode_length=T, float32_rounding=rounding)
    env = jaxecon.make_from_config(cfg)
    rng = np.random.default_rng(0)
    acts = {
        "a": jnp.asarray(rng.integers(0, 10, (T, env.n_agents) + env.agent_actions.action_shape)),
        "p": jnp.asarray(rng.integers(0, 20, (T,) + env.planner_actions.action_shape)),
    }
    return env.default_params, acts, A.make_metric_grad(env, metric, wrt=COVID_WRT)


@pytest.mark.parametrize("metric", ["planner_return", "mean_agent_return"])
def test_fd_covid19_economy_path(metric):
    """d (planner / mean agent return) / d (SIR, unemployment, reward and subsidy
    constants) over 30 days with fixed actions == central FD in float64, with the
    scenario's float32 rounding off (``float32_rounding=False``: a smooth model); with
    the rounding on (Foundation's numerics) jax.grad returns the same derivative."""
    with jax.enable_x64(True):
        params, acts, smooth_fn = covid_setup(metric, rounding=False)
        _, _, rounded_fn = covid_setup(metric, rounding=True)
        v, g_smooth = smooth_fn(KEY, params, acts)
        _, g_rounded = rounded_fn(KEY, params, acts)
        assert v.dtype == jnp.float64
        x0 = P.as_float_tree(P.select(params, COVID_WRT))
        for path in COVID_WRT:
            fd = central_fd(value_at(smooth_fn, path, x0, KEY, params, acts), x0[path],
                            1e-6 * max(1.0, abs(float(x0[path]))))
            if fd == 0:  # e.g. the agents' rewards do not depend on the subsidy's cost
                assert float(g_smooth[path]) == 0 == float(g_rounded[path]), path
                continue
            assert rel_err(g_smooth[path], fd) < 1e-5, (path, g_smooth[path], fd)
            assert rel_err(g_rounded[path], g_smooth[path]) < 1e-5, (path, g_rounded[path], g_smooth[path])


# --------------------------------------------------------------------------- grids and sweeps, float32
def test_gradients_finite_on_grid_of_schedules(iso_env):
    """Gradients w.r.t. rates (and cutoffs, with soft brackets) are finite on a 3^4 grid
    of schedules including all-zero and all-one rates; exact and relaxed paths."""
    levels = [0.0, 0.5, 1.0]
    grid = np.array([list(c) + [0.3] * 3 for c in itertools.product(levels, repeat=4)], np.float32)
    params = iso_env.default_params
    acts = labor_actions(iso_env, HOURS)
    names = ("planner_objective", "mean_agent_utility", "equality", "tax_revenue")

    def metrics(x, temperature):
        p = R.with_bracket_temperature(P.insert(params, (RATES, CUTOFFS), x), temperature)
        r = A.rollout(iso_env, KEY, p, actions=acts)
        return jnp.stack([A.metric_value(iso_env, n, r, p) for n in names])

    cut = np.asarray(params.components["PeriodicBracketTax"].bracket_cutoffs, np.float32)
    x = {RATES: jnp.asarray(grid), CUTOFFS: jnp.tile(cut, (len(grid), 1))}
    jac = jax.jit(jax.vmap(jax.jacrev(metrics), in_axes=(0, None)))
    for temperature in (0.0, 1.0):
        g = jac(x, temperature)
        assert g[RATES].shape == (len(grid), len(names), 7)
        assert all(bool(jnp.all(jnp.isfinite(v))) for v in jax.tree.leaves(g)), temperature
    relaxed = jax.jit(jax.vmap(jax.value_and_grad(
        lambda r: R.one_step_outcome(iso_env, params, 0.05, rates=r).planner_objective)))
    v, g = relaxed(jnp.asarray(grid))
    assert bool(jnp.all(jnp.isfinite(v))) and bool(jnp.all(jnp.isfinite(g)))


def test_vmapped_sweep_of_1024_schedules_equals_separate_calls(ql_env):
    params = ql_env.default_params
    acts = labor_actions(ql_env, HOURS)
    schedules = np.asarray(jax.random.uniform(jax.random.key(7), (1024, 7)), np.float32)
    batched = np.asarray(A.make_sweep(ql_env, "planner_objective", wrt=RATES)(KEY, params, schedules, acts))
    single = jax.jit(A.metric_fn(ql_env, "planner_objective", wrt=RATES))
    separate = np.array([float(single(jnp.asarray(s), KEY, params, acts)) for s in schedules])
    np.testing.assert_allclose(batched, separate, rtol=2e-6, atol=1e-6)
    assert np.std(batched) > 0


# --------------------------------------------------------------------------- relaxations -> exact
def test_soft_brackets_tend_to_hard_brackets():
    cut = jnp.asarray([0.0, 9.7, 39.475, 84.2, 160.725])
    rates = jnp.asarray([0.1, 0.2, 0.3, 0.4, 0.5])
    z = jnp.linspace(-20.0, 300.0, 1001)
    hard = taxes_due(z, rates, cut)
    assert jnp.array_equal(taxes_due(z, rates, cut, 0.0), hard)
    assert jnp.array_equal(marginal_rate(z, rates, cut, 0.0), marginal_rate(z, rates, cut))
    errs = [float(jnp.max(jnp.abs(soft_taxes_due(z, rates, cut, t) - hard))) for t in (1.0, 1e-2, 1e-4)]
    assert errs[0] > errs[1] > errs[2] and errs[2] < 1e-4
    away = jnp.min(jnp.abs(z[:, None] - cut[None]), axis=1) > 0.1
    mr = soft_marginal_rate(z, rates, cut, 1e-3)
    assert float(jnp.max(jnp.where(away, jnp.abs(mr - marginal_rate(z, rates, cut)), 0.0))) < 1e-6


def test_env_soft_bracket_temperature_zero_is_exact(iso_env):
    params = iso_env.default_params
    acts = labor_actions(iso_env, HOURS)
    run = jax.jit(lambda p: A.rollout(iso_env, KEY, p, actions=acts).state)
    s0 = run(params)
    s_zero = run(R.with_bracket_temperature(params, 0.0))
    s_tiny = run(R.with_bracket_temperature(params, 1e-5))
    assert all(bool(jnp.array_equal(a, b)) for a, b in zip(jax.tree.leaves(s0), jax.tree.leaves(s_zero)))
    np.testing.assert_allclose(s_tiny.inventory["Coin"], s0.inventory["Coin"], rtol=1e-5)


def test_traced_bracket_temperature_runs_one_schedule():
    """A temperature passed into jit picks the exact or the soft schedule with a
    ``cond`` (the soft one is not computed beside the exact one); the values are
    each schedule's own (the exact one bit for bit), jitted, vmapped over
    temperatures and differentiated."""
    z = jnp.array([-3.0, 0.0, 5.0, 12.0, 40.0, 90.0])
    rates = jnp.array([0.1, 0.3, 0.5])
    cut = jnp.array([0.0, 10.0, 50.0])
    for fn, soft in ((taxes_due, soft_taxes_due), (marginal_rate, soft_marginal_rate)):
        f = jax.jit(lambda t, fn=fn: fn(z, rates, cut, t))
        np.testing.assert_array_equal(f(0.0), fn(z, rates, cut))
        np.testing.assert_allclose(f(2.0), soft(z, rates, cut, 2.0), rtol=1e-6)  # jit may fuse: an ulp
        both = jax.vmap(lambda t, fn=fn: fn(z, rates, cut, t))(jnp.array([0.0, 2.0]))
        np.testing.assert_array_equal(both[0], fn(z, rates, cut))
        np.testing.assert_allclose(both[1], soft(z, rates, cut, 2.0), rtol=1e-6)
        assert "cond[" in str(jax.make_jaxpr(lambda t, fn=fn: fn(z, rates, cut, t))(1.0))
        g = jax.grad(lambda r, t, fn=fn: jnp.sum(fn(z, r, cut, t)))
        np.testing.assert_allclose(g(rates, 0.0), jax.grad(lambda r, fn=fn: jnp.sum(fn(z, r, cut)))(rates))
        np.testing.assert_allclose(g(rates, 2.0), jax.grad(lambda r, soft=soft: jnp.sum(soft(z, r, cut, 2.0)))(rates))


def test_softmax_best_responses_tend_to_exact_dynamics(iso_env, ql_env):
    for env in (iso_env, ql_env):
        with jax.enable_x64(True):
            params = env.default_params
            out = jax.jit(lambda p, t: R.one_step_outcome(env, p, t))
            exact = out(params, 0.0)
            acts = jax.jit(lambda p: R.best_response_actions(env, p))(params)
            r = jax.jit(lambda p, a: A.rollout(env, KEY, p, actions=a))(params, acts)
            m = A.episode_metrics(env, r, params)
            np.testing.assert_allclose(exact.coin, r.state.inventory["Coin"], rtol=1e-12)
            np.testing.assert_allclose(exact.labor, r.state.endogenous["Labor"], rtol=1e-12)
            np.testing.assert_allclose(exact.planner_objective, m["planner_objective"], rtol=1e-10)
            np.testing.assert_allclose(exact.tax_revenue, m["tax_revenue"], rtol=1e-10)
            np.testing.assert_allclose(exact.realized_lump_sum, exact.lump_sum, rtol=1e-8)
            gaps = [abs(float(out(params, t).planner_objective - exact.planner_objective))
                    for t in (1e-1, 1e-3, 1e-5)]
            assert gaps[-1] < 1e-8 and gaps[0] > gaps[-1]


# --------------------------------------------------------------------------- worked result (smoke)
def test_optimize_one_step_taxes_beats_us_federal_and_saez_runs(ql_env):
    params = ql_env.default_params
    res = A.optimize_one_step_taxes(ql_env, params, n_steps=20, learning_rate=0.1)
    us = A.evaluate_schedule(ql_env, params, A.us_federal_rates(ql_env))["planner_objective"]
    assert res.rates_history.shape == (21, 7) and res.exact_objective.shape == (21,)
    assert float(res.exact_objective[0]) == pytest.approx(us, rel=1e-5)
    assert float(res.exact_objective[-1]) > us
    assert bool(jnp.all((res.rates >= 0) & (res.rates <= 1)))
    saez = A.saez_schedule(ql_env, params, n_warmup=5, n_rounds=5, n_average=2)
    assert saez.rates.shape == (7,) and bool(jnp.all((saez.rates >= 0) & (saez.rates <= 1)))
    assert float(saez.elasticity) >= 0
    with pytest.raises(ValueError, match="temperature"):
        A.optimize_one_step_taxes(ql_env, params, temperature=0.0)


def test_grid_search_stays_on_the_rate_grid_and_beats_each_start(ql_env):
    params = ql_env.default_params
    grid = A.rate_grid(ql_env)
    assert grid[0] == 0.0 and grid[-1] == 1.0 and len(grid) == 21
    us = A.us_federal_rates(ql_env)
    res = A.grid_search_one_step_taxes(ql_env, params, [us, np.zeros(7)], max_sweeps=3)
    rates = np.asarray(res.rates, np.float64)
    assert np.abs(rates[:, None] - grid[None]).min(axis=1).max() < 1e-6  # every rate a grid rate
    assert float(res.objective) == pytest.approx(A.evaluate_schedule(ql_env, params, rates)["planner_objective"])
    rounded_us = grid[np.abs(grid[None] - us[:, None]).argmin(axis=1)]
    assert float(res.objective) >= A.evaluate_schedule(ql_env, params, rounded_us)["planner_objective"]
    assert float(res.objective) > A.evaluate_schedule(ql_env, params, np.zeros(7))["planner_objective"]
    with pytest.raises(ValueError, match="max_sweeps"):
        A.grid_search_one_step_taxes(ql_env, params, us, max_sweeps=0)
    assert bool(res.converged) or int(res.sweeps) == 3
    with pytest.raises(ValueError, match="7 bracket rates"):
        A.grid_search_one_step_taxes(ql_env, params, np.zeros(3))
    with pytest.raises(ValueError, match="one or more schedules"):
        A.grid_search_one_step_taxes(ql_env, params, np.zeros((0, 7)))
    with pytest.raises(ValueError, match="finite"):
        A.grid_search_one_step_taxes(ql_env, params, np.full(7, np.nan))
