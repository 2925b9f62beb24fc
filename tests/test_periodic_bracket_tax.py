"""PeriodicBracketTax and WealthRedistribution: step-by-step parity with the reference.

Wood-and-stone economies [Build, Gather, PeriodicBracketTax] (or
WealthRedistribution) made deterministic as docs/testing.md (deterministic steps) says
(Gather skill_dist "none", regeneration 0/1, mask-valid non-conflicting
moves). After every reference reset the state is copied into jaxecon
(``state_from_foundation``); both then get the same actions for the whole
episode and must agree on observations (flat vectors with the offsets of docs/testing.md,
planner ``p<i>`` vectors, masks), rewards, coin, the tax log and the metrics
(NaN == NaN before the first tax day, quirk Q25). Random planner actions come
from the masks (with annealing), plus deliberately unmasked ones (Q7: applied
anyway) and NO-OPs (Q6: keep the rate). Random agents hardly earn anything, so
between steps both sides receive identical external coin "pokes" (income,
losses, escrow) to put incomes in every bracket, produce negative incomes and
make tax bills exceed inventories. Saez runs from a synthetic full buffer
(after the warm-up it is deterministic). Runs under ``jax.enable_x64``.

Also: the gradient of collected taxes with respect to the rate table and the
bracket cutoffs matches central finite differences in float64.
"""

from __future__ import annotations

import copy

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.interop import state_from_foundation

from parity import DETERMINISTIC_BUILD, DETERMINISTIC_GATHER, deconflict_moves, to_jax_actions
from reference import GATHER_BUILD_CONFIG, make_reference_env, random_valid_actions
from jaxecon.foundation.formats import planner_entries


def _config(last_components, episode_length, regen=1.0, **overrides):
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["components"] = [copy.deepcopy(DETERMINISTIC_BUILD), copy.deepcopy(DETERMINISTIC_GATHER)] + list(last_components)
    cfg["resource_regen_prob"] = regen
    cfg["episode_length"] = episode_length
    cfg.update(overrides)
    return cfg


def _tax(**kw):
    return {"PeriodicBracketTax": {"period": 10, **kw}}


def _close(a, b, where, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol,
                               err_msg=where)


def _compare_obs(obs, ref_obs, n, where):
    """All agents' entries of a key compared in one vectorised check (fast path)."""
    obs = {**obs, "p": planner_entries(obs["p"], n)}  # Foundation's p<i> entries
    keys = set(ref_obs["0"])
    assert all(set(ref_obs[str(i)]) == keys for i in range(n)) and keys == set(obs["a"]), (where, keys, set(obs["a"]))
    for k in keys:
        ref = np.stack([np.asarray(ref_obs[str(i)][k], np.float64) for i in range(n)])
        got = np.asarray(obs["a"][k], np.float64)
        if not np.allclose(got, ref, rtol=1e-6, atol=1e-7):
            _close(got, ref, f"{where}: agents' obs {k}", rtol=1e-6, atol=1e-7)
    assert set(ref_obs["p"]) == set(obs["p"]), (where, set(ref_obs["p"]) ^ set(obs["p"]))
    for k, v in ref_obs["p"].items():
        got, ref = np.asarray(obs["p"][k], np.float64), np.asarray(v, np.float64)
        if got.shape != ref.shape or not np.allclose(got, ref, rtol=1e-6, atol=1e-7):
            _close(got, ref, f"{where}: planner obs {k}", rtol=1e-6, atol=1e-7)


def _compare_log(entry, ref_entry, where, rtol):
    if isinstance(ref_entry, dict):
        assert isinstance(entry, dict) and set(entry) == set(ref_entry), (where, entry, ref_entry)
        for k in ref_entry:
            _compare_log(entry[k], ref_entry[k], f"{where}/{k}", rtol)
    elif isinstance(ref_entry, list):
        assert entry == [] and ref_entry == [], (where, entry, ref_entry)
    else:
        _close(entry, ref_entry, where, rtol=rtol, atol=rtol)


def _compare_metrics(got, ref, where, rtol):
    assert set(got) == set(ref), (where, set(got) ^ set(ref))
    for k, v in ref.items():
        _close(got[k], v, f"{where}: metric {k}", rtol=rtol, atol=rtol)  # NaN == NaN


def _poke(ref_env, state, rng):
    """Identical external coin changes on both sides: income, a loss, or escrow."""
    i = int(rng.integers(ref_env.n_agents))
    agent = ref_env.world.agents[i]
    u = rng.random()
    if u < 0.6:
        field, x = "inventory", float(np.round(rng.lognormal(2.5, 1.2), 3))
    elif u < 0.8:
        field, x = "inventory", -float(np.round(rng.uniform(0, 0.8) * max(agent.state["inventory"]["Coin"], 0), 3))
    else:
        field, x = "escrow", float(np.round(rng.uniform(0, 60), 3))
    agent.state[field]["Coin"] += x
    arrays = getattr(state, field)
    return state.replace(**{field: {**arrays, "Coin": arrays["Coin"].at[i].add(x)}})


def _planner_action(actions, ref_obs, env, rng, unmasked_prob):
    """Masked random planner actions; sometimes any in-range action (Q7)."""
    if env.planner_actions.passive or rng.random() >= unmasked_prob:
        return actions
    dims = env.planner_actions.dims
    actions["p"] = [int(rng.integers(0, d)) for d in dims]
    return actions


def _fill_saez_buffer(ref_tax, rng, top):
    z = np.concatenate([
        -rng.uniform(0, 20, 25),
        np.zeros(25),
        np.round(rng.lognormal(np.log(top / 4), 0.8, 400), 1),  # rounded: many empty bins
        top + rng.exponential(top / 3, 50),
    ])
    tau = rng.choice(np.arange(0, 1.05, 0.05), size=len(z))
    buf = [[float(a), float(b)] for a, b in zip(rng.permutation(z), tau)]
    ref_tax._local_saez_buffer = buf[-500:]


def _run(cfg, seed, n_episodes, poke_prob=0.3, unmasked_prob=0.25, saez_top=None, rtol=1e-12):
    rng = np.random.default_rng(seed)
    stats = {"taxes": 0.0, "capped": 0, "negative": 0, "tax_days": 0}
    with jax.enable_x64(True):
        env = jaxecon.make_from_config(cfg)
        params = env.default_params
        ref_env = make_reference_env(cfg, seed=seed)
        step = jax.jit(env.step)
        observe = jax.jit(env.observe)
        metrics = jax.jit(env.metrics)
        tax = env.get_component("PeriodicTax") if env.has_component("PeriodicTax") else None
        ref_tax = ref_env.get_component("PeriodicTax") if tax is not None else None
        key = jax.random.key(seed)
        for ep in range(n_episodes):
            ref_obs = ref_env.reset()
            if saez_top is not None and ep == 0:
                _fill_saez_buffer(ref_tax, rng, saez_top)
            state = state_from_foundation(env, ref_env, params)
            _compare_obs(observe(state, params), ref_obs, env.n_agents, f"episode {ep} reset")
            for t in range(env.episode_length):
                where = f"episode {ep} step {t + 1}"
                actions = deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env)
                actions = _planner_action(actions, ref_obs, env, rng, unmasked_prob)
                ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
                key, k = jax.random.split(key)
                obs, state, rew, done, _ = step(k, state, to_jax_actions(actions, env), params)
                _compare_obs(obs, ref_obs, env.n_agents, where)
                _close(rew["a"], [ref_rew[str(i)] for i in range(env.n_agents)], f"{where}: rewards",
                       rtol=max(rtol, 1e-9), atol=1e-9)
                _close(rew["p"], ref_rew["p"], f"{where}: planner reward", rtol=max(rtol, 1e-9), atol=1e-9)
                assert bool(done) == ref_done["__all__"]
                agents = ref_env.world.agents
                _close(state.inventory["Coin"], [a.state["inventory"]["Coin"] for a in agents], f"{where}: coin",
                       rtol=rtol, atol=rtol)
                if tax is not None:
                    sub = state.components["PeriodicBracketTax"]
                    assert int(sub.tax_cycle_pos) == ref_tax.tax_cycle_pos, where
                    if tax.tax_model == "model_wrapper":
                        assert list(np.asarray(sub.rate_idx)) == list(ref_tax.curr_rate_indices), where
                    ref_entry = ref_tax.get_dense_log()
                    if tax.disable_taxes:
                        assert ref_entry is None and tax.dense_log_entry(None, state) is None
                    else:
                        _compare_log(tax.dense_log_entry(None, state), ref_entry[-1], f"{where}: tax log", rtol)
                        if isinstance(ref_entry[-1], dict):
                            day = ref_entry[-1]
                            stats["tax_days"] += 1
                            for i in range(env.n_agents):
                                stats["taxes"] += day[str(i)]["tax_paid"]
                                stats["negative"] += day[str(i)]["income"] < 0
                                stats["capped"] += day[str(i)]["tax_paid"] < tax_due(tax, day, i) - 1e-9
                    if t == 3 and ep == 0:
                        # before the first tax day: NaN averages (Q25)
                        _compare_metrics({k: float(v) for k, v in metrics(state, params).items()},
                                         ref_env.metrics, f"{where} (mid-episode)", rtol)
                if rng.random() < poke_prob and not ref_done["__all__"]:
                    state = _poke(ref_env, state, rng)
            _compare_metrics({k: float(v) for k, v in metrics(state, params).items()},
                             ref_env.previous_episode_metrics, f"episode {ep} end", rtol)
    return stats


def tax_due(tax, day, i):
    from jaxecon.components.redistribution import taxes_due
    return float(taxes_due(day[str(i)]["income"], jnp.asarray(day["schedule"]), jnp.asarray(day["cutoffs"])))


CASES = {
    # model_wrapper on US brackets with annealing: masks move with completed episodes.
    "model_wrapper_us_annealed": (
        _config([_tax(tax_annealing_schedule=[-2, 0.2])], 110), 2, {}),
    # log brackets with int() labels (Q8), a coarse rate table, period not dividing the episode.
    "model_wrapper_log": (
        _config([_tax(bracket_spacing="log", n_brackets=5, top_bracket_cutoff=100, rate_min=0.1,
                      rate_max=0.8, rate_disc=0.1, period=7)], 200, regen=0.0), 1, {}),
    # us-federal model: annealed cap; the reset observation lags one episode.
    "us_federal_annealed": (
        _config([_tax(tax_model="us-federal-single-filer-2018-scaled", usd_scaling=500,
                      tax_annealing_schedule=[-1, 0.25])], 100), 2, {}),
    # fixed rates on linear brackets, capped by rate_max and by an annealed limit
    # (0.35, then 0.7; the second reset observation still caps at 0.35).
    "fixed_linear": (
        _config([_tax(tax_model="fixed-bracket-rates", bracket_spacing="linear", n_brackets=4,
                      top_bracket_cutoff=30, fixed_bracket_rates=[0.5, 0.3, 0.6, 0.9], rate_max=0.7,
                      tax_annealing_schedule=[-1, 0.5])], 100),
        2, {}),
    # no taxes (same observations), then WealthRedistribution equalises coin (escrow pokes included).
    "disabled_then_wealth_redistribution": (
        _config([_tax(disable_taxes=True), {"WealthRedistribution": {}}], 200), 1, {"poke_prob": 0.5}),
    # saez after its warm-up (a full synthetic buffer): estimated elasticity, annealed cap.
    "saez": (
        _config([_tax(tax_model="saez", bracket_spacing="linear", n_brackets=5, top_bracket_cutoff=100,
                      tax_annealing_schedule=[-1, 0.7])], 100),
        1, {"saez_top": 100.0, "rtol": 1e-9}),
}


@pytest.mark.reference
@pytest.mark.parametrize("case", list(CASES))
def test_tax_parity(case):
    cfg, n_episodes, kw = CASES[case]
    stats = _run(cfg, seed=3, n_episodes=n_episodes, **kw)
    if case != "disabled_then_wealth_redistribution":
        assert stats["tax_days"] > 0 and stats["taxes"] > 0 and stats["negative"] > 0
    if case == "fixed_linear":
        assert stats["capped"] > 0, "some bills should exceed the inventory (escrow is never taxed)"


def test_labels_and_subspaces():
    """Q8 labels and the planner's action subspaces; validation."""
    def comp(**kw):
        return jaxecon.make_from_config(_config([_tax(**kw)], 10)).get_component("PeriodicTax")

    log = comp(bracket_spacing="log", n_brackets=5, top_bracket_cutoff=100)
    assert log.labels == ("000", "012", "024", "049", "099")
    us = comp()
    assert [n for n, _ in us.get_n_actions("BasicPlanner")] == [
        "TaxIndexBracket_000", "TaxIndexBracket_009", "TaxIndexBracket_039", "TaxIndexBracket_084",
        "TaxIndexBracket_160", "TaxIndexBracket_204", "TaxIndexBracket_510"]
    assert us.n_disc_rates == 21 and us.disc_rates[3] == np.arange(0, 1.05, 0.05)[3]
    assert comp(tax_model="fixed-bracket-rates", fixed_bracket_rates=[0.1] * 7).get_n_actions("BasicPlanner") == 0
    assert comp(disable_taxes=True).get_n_actions("BasicPlanner") == 0
    for bad in (
        {"tax_model": "nope"}, {"period": 0}, {"rate_min": 0.5, "rate_max": 0.4}, {"rate_max": 1.5},
        {"n_brackets": 1, "bracket_spacing": "linear"}, {"top_bracket_cutoff": 5, "bracket_spacing": "linear"},
        {"usd_scaling": 0}, {"bracket_spacing": "cubic"}, {"tax_model": "fixed-bracket-rates"},
        {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.1] * 6},
        {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [1.1] * 7},
        {"tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [float("nan")] * 7},
        {"tax_model": "us-federal-single-filer-2018-scaled", "bracket_spacing": "linear"},
        {"saez_fixed_elas": -1}, {"tax_annealing_schedule": 3}, {"pareto_weight_type": "x"},
        {"bracket_spacing": "linear", "n_brackets": 40, "top_bracket_cutoff": 10},  # duplicate labels
        {"rate_disc": 2.0},
    ):
        with pytest.raises(ValueError):
            comp(**bad)


def _one_step_env():
    return jaxecon.make(
        "one-step-economy", n_agents=4, world_size=[1, 1], episode_length=2, seed=2,
        components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2})],
    )


def test_gradient_of_collected_taxes_matches_finite_differences():
    with jax.enable_x64(True):
        env = _one_step_env()
        params = env.default_params
        set_rates = {"p": np.array([5, 8, 12, 14, 16, 18, 20], np.int32)}
        work = {"a": np.array([40, 60, 80, 100], np.int32)}

        def collected(disc_rates, cutoffs):
            tp = params.components["PeriodicBracketTax"].replace(disc_rates=disc_rates, bracket_cutoffs=cutoffs)
            p = params.replace(components={**params.components, "PeriodicBracketTax": tp})
            _, s = env.reset(jax.random.key(0), p)
            _, s, _, _, _ = env.step(jax.random.key(1), s, set_rates, p)
            _, s, _, _, _ = env.step(jax.random.key(2), s, work, p)
            return s.components["PeriodicBracketTax"].total_collected_taxes

        tp = params.components["PeriodicBracketTax"]
        rates = jnp.asarray(tp.disc_rates)
        cut = jnp.asarray(tp.bracket_cutoffs)
        f = jax.jit(collected)
        assert float(f(rates, cut)) > 0
        g_rates, g_cut = jax.jit(jax.grad(collected, argnums=(0, 1)))(rates, cut)
        assert np.all(np.isfinite(g_rates)) and np.all(np.isfinite(g_cut))
        assert np.count_nonzero(np.asarray(g_rates)) >= 4 and np.count_nonzero(np.asarray(g_cut)) >= 4
        eps = 1e-6
        for name, x, g, other in (("rates", rates, g_rates, cut), ("cutoffs", cut, g_cut, rates)):
            for j in range(len(x)):
                if name == "cutoffs" and j == 0:
                    continue
                e = jnp.zeros_like(x).at[j].set(eps)
                if name == "rates":
                    fd = (f(x + e, other) - f(x - e, other)) / (2 * eps)
                else:
                    fd = (f(other, x + e) - f(other, x - e)) / (2 * eps)
                np.testing.assert_allclose(float(g[j]), float(fd), rtol=1e-6, atol=1e-6, err_msg=f"{name}[{j}]")


def test_vmap_over_rate_tables():
    """A batch of rate tables in one jitted, vmapped episode; more tax at higher rates."""
    with jax.enable_x64(True):
        env = _one_step_env()
        params = env.default_params
        tp = params.components["PeriodicBracketTax"]

        def collected(scale):
            p = params.replace(components={**params.components,
                                           "PeriodicBracketTax": tp.replace(disc_rates=tp.disc_rates * scale)})
            _, s = env.reset(jax.random.key(0), p)
            _, s, _, _, _ = env.step(jax.random.key(1), s, {"p": np.full(7, 11, np.int32)}, p)
            _, s, _, _, _ = env.step(jax.random.key(2), s, {"a": np.full(4, 50, np.int32)}, p)
            return s.components["PeriodicBracketTax"].total_collected_taxes

        out = np.asarray(jax.jit(jax.vmap(collected))(jnp.array([0.0, 0.5, 1.0])))
        assert out[0] == 0 and 0 < out[1] < out[2]
        np.testing.assert_allclose(out[1] * 2, out[2], rtol=1e-12)


def test_saez_warmup_draws_within_limits_and_carry_over():
    with jax.enable_x64(True):
        env = jaxecon.make(
            "one-step-economy", n_agents=4, world_size=[1, 1], episode_length=2, seed=2,
            components=[("SimpleLabor", {}), ("PeriodicBracketTax", {
                "period": 2, "tax_model": "saez", "rate_min": 0.1, "rate_max": 0.6,
                "tax_annealing_schedule": [-1, 0.5]})],
        )
        tax = env.get_component("PeriodicTax")
        params = env.default_params
        reset, step = jax.jit(env.reset), jax.jit(env.step)
        obs, s = reset(jax.random.key(0), params)
        _, s1, _, _, _ = step(jax.random.key(1), s, {"a": np.zeros(4, np.int32)}, params)
        rates = np.asarray(s1.components["PeriodicBracketTax"].saez_rates)
        assert np.all((rates >= 0.1) & (rates <= 0.3)) and len(set(rates)) == 7  # limit(0) = 0.5 * 0.6
        _, s2, _, _, _ = step(jax.random.key(2), s1, {"a": np.full(4, 30, np.int32)}, params)
        assert int(s2.components["PeriodicBracketTax"].saez.saez_count) == 4
        _, fresh = reset(jax.random.key(3), params, 1)
        assert int(fresh.components["PeriodicBracketTax"].saez.saez_count) == 0
        carried = tax.carry_over(s2, fresh, params.components["PeriodicBracketTax"])
        sub = carried.components["PeriodicBracketTax"]
        assert int(sub.saez.saez_count) == 4
        np.testing.assert_array_equal(sub.saez.saez_buffer[-4:, 0], s2.components["PeriodicBracketTax"].last_income)
        # The reset observation shows the last episode's rates (capped at the limit of
        # completions - 1 = 0); the new period starts from the running average.
        np.testing.assert_array_equal(sub.curr_rates_obs, np.minimum(rates, 0.3))
        np.testing.assert_array_equal(sub.saez_rates, sub.saez.running_avg_tax_rates)


@pytest.mark.reference
@pytest.mark.parametrize("pareto_weight_type,saez_fixed_elas,spacing", [
    ("inverse_income", None, "us-federal"),
    ("uniform", 0.8, "linear"),
    ("inverse_income", 0.5, "log"),
])
def test_saez_formula_matches_reference(pareto_weight_type, saez_fixed_elas, spacing):
    """The whole saez update on many buffers (gaps, incomes below 0 and above the top
    cutoff, too few usable samples, constant rates) against the reference's methods."""
    kw = {"period": 2, "tax_model": "saez", "pareto_weight_type": pareto_weight_type,
          "saez_fixed_elas": saez_fixed_elas, "bracket_spacing": spacing, "n_brackets": 6,
          "top_bracket_cutoff": 100, "rate_min": 0.05, "rate_max": 0.9}
    cfg = {"scenario_name": "one-step-economy", "n_agents": 4, "world_size": [1, 1], "episode_length": 2,
           "components": [{"SimpleLabor": {}}, {"PeriodicBracketTax": kw}]}
    rng = np.random.default_rng(11)
    with jax.enable_x64(True):
        env = jaxecon.make_from_config(cfg)
        tax = env.get_component("PeriodicTax")
        params = env.default_params
        tp = params.components["PeriodicBracketTax"]
        ref_env = make_reference_env(cfg, seed=2)
        ref = ref_env.get_component("PeriodicTax")
        top = float(tax.bracket_cutoffs[-1])
        state = env.init_state(jax.random.key(0), params).replace(timestep=jnp.asarray(1, jnp.int32))
        update = jax.jit(lambda st, sub: tax._saez_new_rates(jax.random.key(0), st, sub, tp))
        for trial in range(8):
            n_valid = 500
            z = np.concatenate([-rng.uniform(0, 5, 10), np.zeros(10),
                                np.round(rng.lognormal(np.log(top / 5), 1.0, 440), 0 if trial % 2 else 2),
                                top + rng.exponential(top / 2, 40)])
            tau = rng.choice(np.arange(0, 1.05, 0.05), size=500)
            if trial == 6:
                tau[:] = 0.3  # std(tau) < 1e-6: the elasticity estimate is kept
            if trial == 7:
                tau[10:] = 1.0  # < 10 usable samples
            buf = [[float(a), float(b)] for a, b in zip(rng.permutation(z)[:n_valid], tau)]
            elas, logz = float(rng.uniform(0.1, 2)), float(rng.normal())
            avg = rng.uniform(0, 0.5, tax.n_brackets)
            ref._local_saez_buffer = [list(x) for x in buf]
            ref._reached_min_samples = False
            ref.elas_t, ref.log_z0_t, ref.elas_tm1, ref.log_z0_tm1 = elas, logz, 0.0, 0.0
            ref.running_avg_tax_rates = avg.copy()
            ref.compute_and_set_new_period_rates_from_saez_formula()

            sub = tax.init(jax.random.key(0), tp)
            sub = sub.replace(saez=sub.saez.replace(
                saez_buffer=jnp.asarray(np.array(buf)), saez_count=jnp.asarray(500, jnp.int32),
                elas_t=jnp.asarray(elas), log_z0_t=jnp.asarray(logz), running_avg_tax_rates=jnp.asarray(avg)))
            out = update(state, sub)
            where = f"trial {trial}"
            _close(out.saez_rates, ref.curr_bracket_tax_rates, where, rtol=1e-9, atol=1e-12)
            _close(out.saez.running_avg_tax_rates, ref.running_avg_tax_rates, where, rtol=1e-9, atol=1e-12)
            for ours, k in ((out.saez.elas_t, "elas_t"), (out.saez.elas_tm1, "elas_tm1"),
                            (out.saez.log_z0_t, "log_z0_t"), (out.saez.log_z0_tm1, "log_z0_tm1")):
                _close(ours, getattr(ref, k), f"{where} {k}", rtol=1e-9, atol=1e-12)
