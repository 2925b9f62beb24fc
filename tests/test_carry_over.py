"""What Foundation keeps across episodes, against ai-economist 1.7.1.

Foundation's env object outlives its episodes, and a few of its attributes are
never cleared by ``reset`` (an AST scan of the reference for attributes and
``agent.state`` fields written outside the reset methods, audited by hand).
Each, with what jaxecon does and the test here:

- ``env._completions``: ``EnvState.completions``; ``reset`` takes
  ``prev_state.completions``. ``test_gridworld_carry_matches_reference``.
- the wood-and-stone ``_auto_warmup_integrator``: the scenario's
  ``carry_over``. ``test_gridworld_carry_matches_reference`` (case
  ``auto_saez``), ``test_warmup_integrator_statistics_match_reference``,
  ``test_shim_and_run_carry_the_warmup_integrator``.
- tax annealing (``_annealed_rate_max``, ``_last_completions``): derived from
  ``completions``, with the reset observation's one-episode lag. Both cases of
  ``test_gridworld_carry_matches_reference`` (reset masks, observations, rates).
- saez (``_local_saez_buffer``, ``elas_*``, ``log_z0_*``,
  ``running_avg_tax_rates``, ``_reached_min_samples``):
  ``PeriodicBracketTax.carry_over``. ``test_gridworld_carry_matches_reference``
  (case ``auto_saez``: every leaf of the tax sub-state at every reset).
- COVID-19 ``agent.state``/``planner.state`` fields the scenario writes only
  in steps (``R0``, ``Total Unemployed``, ``New Subsidy Received``/``Provided``,
  ``Postsubsidy Productivity``; ``Total Vaccinated`` without
  VaccinationCampaign): the scenario's ``carry_over``; the shim shows them at
  timestep 0. ``test_covid_state_fields_carry_like_reference``.
- ControlUSStateOpenCloseStatus's ``Current Open Close Stringency Level``
  field (written only in its steps): the component's ``carry_over``; the shim
  shows the last stepped level at timestep 0. Same test.
- FederalGovernmentSubsidy's ``_subsidy_level_array`` (replayed subsidies
  added again every episode): fixed, reproduced from ``completions`` behind
  ``reference_subsidy_accumulation_bug``;
  ``test_covid19.py::test_real_world_subsidy_accumulation_bug``.
- the saez ``_global_saez_buffer`` and ``_additions_this_episode``: no
  counterpart (no multi-replica buffer).
- ``_last_ep_metrics``/``_dense_log``/``_replay_log``: the shim's
  ``previous_episode_*`` (``test_foundation_shim.py``; the metrics' episode
  counter: ``test_shim_previous_episode_metrics_use_the_completions_of_the_episode``).

Everything else is rebuilt by Foundation's resets (component state fields are
re-registered by ``BaseComponent.reset``: SimpleLabor's ``production``, the
subsidy and vaccination fields) or is a lazy cache.

The gridworld test drives both sides with the same actions from the same state
(the deterministic economy of ``test_periodic_bracket_tax.py``: Gather without
skills, regeneration probability 1, identical coin "pokes") for three
episodes: at every reset jaxecon resets on its own from its previous
episode's last state (``reset(key, params, prev_state=state)``) and must carry
over exactly what Foundation kept; only the random parts (layout, start
positions, Build skills) are then copied from the reference. Runs under
``jax.enable_x64``.
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

TAX = "PeriodicBracketTax"


def _close(a, b, where, rtol=1e-12, atol=1e-12):
    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=rtol, atol=atol,
                               err_msg=where)


def _leaves(tree) -> dict:
    """``{path: leaf}`` of a pytree (paths as ``jax.tree_util.keystr``)."""
    return {jax.tree_util.keystr(p): v for p, v in jax.tree_util.tree_flatten_with_path(tree)[0]}


def _same_tree(got, want, where, rtol=1e-12):
    g, w = _leaves(got), _leaves(want)
    assert set(g) == set(w), (where, sorted(set(g) ^ set(w)))
    for k in w:
        _close(g[k], w[k], f"{where}{k}", rtol=rtol, atol=rtol)


# --------------------------------------------------------------------------
# Wood and stone: completions, annealing, the auto warm-up integrator, saez
# --------------------------------------------------------------------------


def _gridworld_config(tax_kwargs, **scenario):
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["components"] = [DETERMINISTIC_BUILD, DETERMINISTIC_GATHER, {TAX: {"period": 10, **tax_kwargs}}]
    cfg.update(resource_regen_prob=1.0, episode_length=30, **scenario)
    return cfg


CASES = {
    # the "auto" warm-up (weight 1 - exp(-integrator / 20)) and a saez planner
    # past its warm-up (a full synthetic buffer), with an annealed rate cap
    "auto_saez": _gridworld_config(
        {"tax_model": "saez", "bracket_spacing": "linear", "n_brackets": 5, "top_bracket_cutoff": 100,
         "tax_annealing_schedule": [-1, 0.7]},
        energy_warmup_method="auto", energy_warmup_constant=20),
    # the "decay" warm-up (weight 1 - exp(-completions / 2)) and an RL planner
    # whose masks anneal with completed episodes
    "decay_model_wrapper": _gridworld_config(
        {"tax_annealing_schedule": [-1, 0.5]}, energy_warmup_method="decay", energy_warmup_constant=2),
}


def _fill_saez_buffer(ref_tax, rng, top=100.0):
    """500 synthetic (income, rate) samples, so saez is past its random warm-up."""
    z = np.concatenate([-rng.uniform(0, 20, 25), np.zeros(25),
                        np.round(rng.lognormal(np.log(top / 4), 0.8, 400), 1), top + rng.exponential(top / 3, 50)])
    tau = rng.choice(np.arange(0, 1.05, 0.05), size=len(z))
    ref_tax._local_saez_buffer = [[float(a), float(b)] for a, b in zip(rng.permutation(z), tau)]


def _poke(ref_env, state, rng):
    """The same external coin income (or loss) on both sides."""
    i = int(rng.integers(ref_env.n_agents))
    agent = ref_env.world.agents[i]
    if rng.random() < 0.8:
        x = float(np.round(rng.lognormal(2.5, 1.2), 3))
    else:
        x = -float(np.round(rng.uniform(0, 0.8) * max(agent.state["inventory"]["Coin"], 0), 3))
    agent.state["inventory"]["Coin"] += x
    return state.replace(inventory={**state.inventory, "Coin": state.inventory["Coin"].at[i].add(x)})


def _compare_obs(obs, ref_obs, n, where):
    obs = {**obs, "p": planner_entries(obs["p"], n)}  # Foundation's p<i> entries
    for i in range(n):
        assert set(ref_obs[str(i)]) == set(obs["a"]), where
        for k, v in ref_obs[str(i)].items():
            _close(obs["a"][k][i], v, f"{where}: agent {i} obs {k}", rtol=1e-6, atol=1e-7)
    assert set(ref_obs["p"]) == set(obs["p"]), where
    for k, v in ref_obs["p"].items():
        _close(obs["p"][k], v, f"{where}: planner obs {k}", rtol=1e-6, atol=1e-7)


def _with_carried(loaded, carried):
    """The reference's freshly reset world (random layout, positions, skills) with
    everything jaxecon carried over: completions, the scenario and tax sub-states."""
    return loaded.replace(
        completions=carried.completions,
        scenario=carried.scenario,
        components={**loaded.components, TAX: carried.components[TAX]},
    )


@pytest.mark.reference
@pytest.mark.parametrize("case", list(CASES))
def test_gridworld_carry_matches_reference(case):
    """Three episodes: at each reset jaxecon's ``reset(prev_state=...)`` carries over
    Foundation's completions, warm-up integrator and tax state exactly; every step
    then matches (rewards use the carried energy weight, masks the annealed cap)."""
    cfg = CASES[case]
    rng = np.random.default_rng(7)
    integrators, weights = [], []
    with jax.enable_x64(True):
        env = jaxecon.make_from_config(cfg)
        params = env.default_params
        ref_env = make_reference_env(cfg, seed=7)
        ref_tax = ref_env.get_component(TAX)
        reset, step = jax.jit(env.reset), jax.jit(env.step)
        observe, metrics = jax.jit(env.observe), jax.jit(env.metrics)
        key = jax.random.key(7)
        state = None
        for ep in range(3):
            ref_obs = ref_env.reset()
            if case == "auto_saez" and ep == 0:
                _fill_saez_buffer(ref_tax, rng)
            loaded = state_from_foundation(env, ref_env, params)
            if ep > 0:
                key, k = jax.random.split(key)
                _, carried = reset(k, params, None, state)
                where = f"episode {ep} reset"
                assert int(carried.completions) == ref_env._completions == ep, where
                assert int(carried.scenario.auto_warmup_integrator) == ref_env._auto_warmup_integrator, where
                _same_tree(carried.scenario, loaded.scenario, f"{where}: scenario")
                _same_tree(carried.components[TAX], loaded.components[TAX], f"{where}: tax")
                loaded = _with_carried(loaded, carried)
            state = loaded
            _compare_obs(observe(state, params), ref_obs, env.n_agents, f"episode {ep} reset")
            for t in range(env.episode_length):
                where = f"episode {ep} step {t + 1}"
                actions = deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env)
                ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
                key, k = jax.random.split(key)
                obs, state, rew, done, _ = step(k, state, to_jax_actions(actions, env), params)
                _compare_obs(obs, ref_obs, env.n_agents, where)
                _close(rew["a"], [ref_rew[str(i)] for i in range(env.n_agents)], f"{where}: rewards",
                       rtol=1e-9, atol=1e-9)
                _close(rew["p"], ref_rew["p"], f"{where}: planner reward", rtol=1e-9, atol=1e-9)
                assert int(state.scenario.auto_warmup_integrator) == ref_env._auto_warmup_integrator, where
                assert bool(done) == ref_done["__all__"], where
                if rng.random() < 0.4 and not ref_done["__all__"]:
                    state = _poke(ref_env, state, rng)
            # the live metrics after the last step (completions already counted,
            # as in jaxecon's state; previous_episode_metrics were taken before)
            got = {k: float(v) for k, v in metrics(state, params).items()}
            want = ref_env.metrics
            assert set(got) == set(want), set(got) ^ set(want)
            for k, v in want.items():
                _close(got[k], v, f"episode {ep} end: metric {k}", rtol=1e-9, atol=1e-9)
            integrators.append(ref_env._auto_warmup_integrator)
            weights.append(ref_env.previous_episode_metrics["labor/weighted_cost"])
    # the carried quantity moved: the warm-up progressed over the episodes
    if case == "auto_saez":
        assert integrators[0] > 0 and integrators[-1] > integrators[0], integrators
    assert weights[-1] > weights[0], weights


def test_reset_from_a_fresh_state_carries_nothing():
    """``reset(prev_state=init_state(...))`` (the shim's and ``jaxecon run``'s first
    reset) equals a plain reset leaf for leaf; a reset without ``prev_state``
    starts the warm-up integrator at 0."""
    cfg = CASES["auto_saez"]
    env = jaxecon.make_from_config(cfg)
    params = env.default_params
    key = jax.random.key(3)
    obs, plain = env.reset(key, params)
    obs2, from_init = env.reset(key, params, prev_state=env.init_state(jax.random.key(9), params))
    for a, b in zip(jax.tree.leaves((obs, plain)), jax.tree.leaves((obs2, from_init))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    ended = plain.replace(scenario=plain.scenario.replace(auto_warmup_integrator=jnp.int32(17)),
                          completions=jnp.int32(4))
    _, carried = env.reset(key, params, prev_state=ended)
    assert int(carried.scenario.auto_warmup_integrator) == 17 and int(carried.completions) == 4
    _, fresh = env.reset(key, params, completions=4)
    assert int(fresh.scenario.auto_warmup_integrator) == 0


def test_shim_and_run_carry_the_warmup_integrator():
    """The shim resets from its last state; ``jaxecon run`` resets each episode from
    the previous one's last state: the integrator never goes back."""
    from jaxecon import foundation
    from jaxecon.cli.simulate import run_economy

    cfg = dict(CASES["auto_saez"], episode_length=20)
    env = foundation.make_env_instance(**copy.deepcopy(cfg), seed=2)
    rng = np.random.default_rng(2)
    prev = 0
    for ep in range(3):
        env.reset()
        assert int(env.state.scenario.auto_warmup_integrator) == prev, ep
        for t in range(20):
            if t % 4 == 0:  # income, so that some steps' mean reward is > 0
                st = env.state
                env.state = st.replace(inventory={**st.inventory, "Coin": st.inventory["Coin"] + 5.0})
            env.step({str(i): int(rng.integers(0, 6)) for i in range(env.n_agents)})
        prev = int(env.state.scenario.auto_warmup_integrator)
        assert env.previous_episode_metrics["labor/warmup_integrator"] == prev
    assert prev > 0

    out = run_economy(jaxecon.make_from_config(cfg), episodes=3, batch=4, progress=False)
    ends = [e["metrics"]["labor/warmup_integrator"] for e in out["episodes"]]
    assert ends[0] > 0 and ends[0] <= ends[1] <= ends[2] and ends[2] > ends[0], ends


@pytest.mark.reference
@pytest.mark.slow
def test_warmup_integrator_statistics_match_reference():
    """The canonical economy with ``energy_warmup_method="auto"``, random valid
    actions, 30 episodes of 200 steps: the reference's end-of-episode
    ``labor/warmup_integrator`` (one run) against 16 jaxecon runs (functional API,
    ``reset(prev_state=...)``). Per-episode increments agree in mean (4 standard
    errors), and the run's average over the 30 episodes lies within 4 standard
    deviations of jaxecon's runs. (Without the carry-over jaxecon's average would be
    the mean increment, about 16, against the reference's 190-270.) About 30 s."""
    from jaxecon.configs import default_config
    from jaxecon.rollout import RolloutCarry, scan_steps

    n_ep, T, B = 30, 200, 16
    cfg = default_config()
    cfg.update(episode_length=T, energy_warmup_method="auto", energy_warmup_constant=10000,
               dense_log_frequency=None)

    ref_env = make_reference_env(cfg, seed=1)
    rng = np.random.default_rng(1)
    ref_ends = []
    for _ in range(n_ep):
        obs = ref_env.reset()
        for _ in range(T):
            obs, _, _, _ = ref_env.step(random_valid_actions(obs, ref_env, rng))
        ref_ends.append(ref_env.previous_episode_metrics["labor/warmup_integrator"])
    ref_ends = np.asarray(ref_ends, np.float64)

    env = jaxecon.make_from_config(cfg)
    params = env.default_params

    @jax.jit
    def episode(keys, prev):
        def start(key, prev):
            k_reset, k_steps = jax.random.split(key)
            obs, state = env.reset(k_reset, params, prev_state=prev)
            return RolloutCarry(obs=obs, state=state, key=k_steps)

        carry, _ = scan_steps(env, params, jax.vmap(start)(keys, prev), T, batched=True)
        return carry.state

    root = jax.random.key(1)
    state = jax.jit(jax.vmap(lambda k: env.init_state(k, params, 0)))(jax.random.split(root, B))
    ends = []
    for ep in range(n_ep):
        state = episode(jax.random.split(jax.random.fold_in(root, ep + 1), B), state)
        ends.append(np.asarray(state.scenario.auto_warmup_integrator, np.float64))
    ends = np.stack(ends)  # [episodes, B]
    assert np.all(np.diff(ends, axis=0) >= 0)

    inc_ref = np.diff(ref_ends, prepend=0.0)
    inc = np.diff(ends, axis=0, prepend=0.0).reshape(-1)
    se = np.sqrt(inc_ref.var(ddof=1) / inc_ref.size + inc.var(ddof=1) / inc.size)
    assert abs(inc_ref.mean() - inc.mean()) < 4 * se, (inc_ref.mean(), inc.mean(), se)
    runs = ends.mean(axis=0)
    assert abs(ref_ends.mean() - runs.mean()) < 4 * runs.std(ddof=1), (ref_ends.mean(), runs)
    print(f"warm-up integrator, mean over {n_ep} episodes of {T} steps: reference {ref_ends.mean():.1f}, "
          f"jaxecon {runs.mean():.1f} +- {runs.std(ddof=1):.1f} (16 runs); per-episode increment "
          f"{inc_ref.mean():.2f} vs {inc.mean():.2f}")


@pytest.mark.reference
def test_shim_previous_episode_metrics_use_the_completions_of_the_episode():
    from jaxecon import foundation

    cfg = dict(CASES["decay_model_wrapper"], episode_length=3)
    env = foundation.make_env_instance(**copy.deepcopy(cfg), seed=2)
    ref_env = make_reference_env(cfg, seed=2)
    got, want = [], []
    for _ in range(2):
        env.reset()
        ref_env.reset()
        for _ in range(3):
            env.step()
            ref_env.step({})
        got.append(env.previous_episode_metrics["labor/weighted_cost"])
        want.append(ref_env.previous_episode_metrics["labor/weighted_cost"])
        # the state counts the episode afterwards, as Foundation's _completions does
        assert int(env.state.completions) == env._completions == ref_env._completions
        _close([env.metrics["labor/weighted_cost"]], [ref_env.metrics["labor/weighted_cost"]],
               "labor/weighted_cost after the episode", rtol=1e-6, atol=1e-9)
    _close(got, want, "labor/weighted_cost per episode", rtol=1e-6, atol=1e-9)


# --------------------------------------------------------------------------
# COVID-19: agent.state / planner.state fields written only in steps
# --------------------------------------------------------------------------

#: ControlUSStateOpenCloseStatus's field, written only in its steps.
STRINGENCY_FIELD = "Current Open Close Stringency Level"


def _covid_config(case):
    from jaxecon.scenarios.covid19 import default_covid_config

    cfg = default_covid_config()
    cfg.update(episode_length=4, dense_log_frequency=1)
    if case == "real_world_data_without_vaccination":  # (Foundation's SIR model needs the campaign)
        cfg["components"] = cfg["components"][:2]
        cfg.update(use_real_world_data=True, use_real_world_policies=True)
    return cfg


def _covid_state_fields_match(got, want, where):
    """A shim ``state`` dict vs Foundation's: the same keys and values."""
    assert set(got) == set(want), (where, sorted(set(got) ^ set(want)))
    for k, v in want.items():
        if isinstance(v, (str, np.str_, dict)):  # Date; inventory, escrow, endogenous
            assert got[k] == v, (where, k, got[k], v)
        else:  # by value (the dense log's [x] lists against scalars are another matter);
            # unemployment can differ by a float32 ulp, an int32 cast by one person
            atol = 1 if np.asarray(v).dtype.kind in "iu" else 0
            _close(np.reshape(got[k], -1), np.reshape(v, -1), f"{where}: {k!r}", rtol=1e-5, atol=atol)


@pytest.mark.reference
@pytest.mark.parametrize("case", ["simulated", "real_world_data_without_vaccination"])
def test_covid_state_fields_carry_like_reference(case):
    """Three episodes of the shim and the reference with the same actions (the
    model is deterministic): at every reset ``agent.state`` and ``planner.state``
    (and the dense log's first ``states``) show the previous episode's last
    step-only fields (``R0``, ``Total Unemployed``, ``New Subsidy
    Received``/``Provided``, ``Postsubsidy Productivity``, ``Total Vaccinated``
    without VaccinationCampaign, and the component's stringency level), as
    Foundation's. The actions change every state's level in each episode, so
    the carried level is the last episode's, not the start date's."""
    import contextlib
    import io

    from jaxecon import foundation

    cfg = _covid_config(case)
    ref = make_reference_env(cfg, seed=None)
    quiet = contextlib.redirect_stdout(io.StringIO())
    rng = np.random.default_rng(11)
    n = 51
    with jax.enable_x64(True), quiet:
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        for ep in range(3):
            ref.reset()
            env.reset()
            for i in (0, 7, n - 1):
                _covid_state_fields_match(env.world.agents[i].state, ref.world.agents[i].state, f"ep {ep} agent {i}")
            _covid_state_fields_match(env.world.planner.state, ref.world.planner.state, f"ep {ep} planner")
            carried = {"Total Unemployed", "New Subsidy Received", "Postsubsidy Productivity"} | (
                {"R0"} if case == "simulated" else {"Total Vaccinated"})
            assert carried & set(ref.world.agents[0].state) == (carried if ep > 0 else set()), ep
            assert (STRINGENCY_FIELD in ref.world.agents[0].state) == (ep > 0)
            assert (STRINGENCY_FIELD in env.world.agents[0].state) == (ep > 0)
            if ep > 0:  # the last episode's final levels, which differ from the start date's
                levels = [a.state[STRINGENCY_FIELD] for a in env.world.agents]
                assert levels == [a.state[STRINGENCY_FIELD] for a in ref.world.agents]
                start = env.core.get_component("ControlUSStateOpenCloseStatus").initial_stringency_level
                assert not np.array_equal(levels, start)
            for _ in range(cfg["episode_length"]):
                acts = {str(i): int(a) for i, a in enumerate(rng.integers(0, 11, n))}
                acts["p"] = int(rng.integers(0, 21))
                ref.step(acts)
                env.step(acts)
            got, want = env.previous_episode_dense_log["states"][0], ref.previous_episode_dense_log["states"][0]
            for k in ("0", str(n - 1), "p"):
                _covid_state_fields_match(got[k], want[k], f"ep {ep} dense log states[0][{k}]")
