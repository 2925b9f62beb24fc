"""GymnaxEnv (jaxecon.wrappers.gymnax): gymnax 1.0's interface over the mobile agents.

GymnaxEnv works without gymnax; the tests that compare with gymnax itself
(its ``Environment`` base class, its ``LegacyStepAPIWrapper``) skip when it
is missing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon import spaces
from jaxecon.configs import gather_build_config
from jaxecon.core.state import EnvState
from jaxecon.wrappers import AutoResetWrapper, GymnaxEnv, LogWrapper
from jaxecon.wrappers.flat import flat_observation
from jaxecon.wrappers.library_spaces import library_spaces_module
from jaxecon.wrappers.planner import make_planner_policy

from common import default_key_draws, jit_fast, taxed_config, two_agents

EPISODE = 5
STEPS = 7
BATCH = 2


def _later_rates(key, planner_obs, state):
    """A planner policy: NO-OP on the first two steps, then rate index 2 in every bracket."""
    assert isinstance(state, EnvState) and "action_mask" in planner_obs
    return jnp.where(state.timestep >= 2, 3, 0) * jnp.ones(7, jnp.int32)


@pytest.fixture(scope="module")
def taxed(jitted_env):
    """The economy without trade, two agents (shared with the JaxMARL tests)."""
    return jitted_env(two_agents(taxed_config(), EPISODE))


@pytest.fixture(scope="module")
def env(taxed):
    return taxed.env


@pytest.fixture(scope="module")
def first(taxed):
    """``(obs, state)`` of one jitted reset of ``env``."""
    return taxed.reset(jax.random.key(1), taxed.params)


@pytest.fixture(scope="module")
def genv(env):
    return GymnaxEnv(LogWrapper(env), planner_policy=_later_rates, info_keys=("action_mask", "final_observation"))


def _masked_sample(key, mask):
    """One action per agent, uniform over its allowed actions (bool [n, n_actions])."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


@pytest.fixture(scope="module")
def run(genv):
    """``BATCH`` economies, ``STEPS`` steps of the six-value ``step``, under ``jit(vmap(scan))``."""
    params = genv.default_params

    def one(key):
        k0, k = jax.random.split(key)
        obs, state = genv.reset(k0, params)
        mask0 = genv.action_mask(state, params)

        def body(carry, key):
            obs, state, mask = carry
            k_act, k_step = jax.random.split(key)
            action = _masked_sample(k_act, mask)
            obs2, state2, reward, term, trunc, info = genv.step(k_step, state, action, params)
            out = dict(obs=obs2, reward=reward, term=term, trunc=trunc, info=info, state=state2.env_state,
                       recomputed_mask=genv.action_mask(state2, params), action=action, mask=mask)
            return (obs2, state2, info["action_mask"]), out

        _, out = jax.lax.scan(body, (obs, state, mask0), jax.random.split(k, STEPS))
        return obs, out

    return jit_fast(jax.vmap(one))(jax.random.split(jax.random.key(3), BATCH))


def test_the_economy_draws_with_unrolled_threefry_keys(genv, env):
    """Joint mode and per-agent mode with remapped actions: every key the
    front splits or hands to the economy is rewrapped (as_unrolled_key), none
    is JAX's default; the economy's own reset, not rewrapped, counts some."""
    key = jax.random.key(0)

    def joint(k):
        return genv.step(k, genv.reset(k)[1], jnp.zeros((genv.num_agents,), jnp.int32))

    per_agent = GymnaxEnv(env, agents_as_batch=True, invalid_actions="remap")
    keys = jax.random.split(key, per_agent.num_agents)

    def entries(ks):
        _, state = jax.vmap(per_agent.reset)(ks)
        return jax.vmap(per_agent.step)(ks, state, jnp.zeros(len(ks), jnp.int32))

    assert default_key_draws(joint, key) == 0
    assert default_key_draws(entries, keys) == 0
    assert default_key_draws(lambda k: env.reset(k, env.default_params), key) > 0


def test_shapes_dtypes_and_spaces(genv, env, run, first):
    obs0, out = run
    n = env.n_agents
    lib = library_spaces_module("gymnax") or spaces  # gymnax's own classes when installed
    space = genv.observation_space(genv.default_params)
    assert isinstance(space, lib.Box) and space.dtype == np.float32
    d = space.shape[0]
    assert obs0.shape == (BATCH, n, d) and obs0.dtype == jnp.float32
    assert out["obs"].shape == (BATCH, STEPS, n, d)
    assert out["reward"].shape == (BATCH, STEPS, n)
    assert out["action"].dtype == jnp.int32 and out["action"].shape == (BATCH, STEPS, n)
    assert out["term"].shape == (BATCH, STEPS) and out["trunc"].dtype == jnp.bool_
    act = genv.action_space(None)
    assert isinstance(act, lib.Discrete) and act.n == env.agent_actions.n_actions
    assert genv.num_actions == env.agent_actions.n_actions and genv.num_agents == n
    assert genv.name == "jaxecon/layout_from_file/simple_wood_and_stone"
    assert out["info"]["action_mask"].shape == (BATCH, STEPS, n, env.agent_actions.n_actions)
    # every agent's flat observation lies in the (finite where bounded) Box
    assert (np.isfinite(np.asarray(space.low)) & np.isfinite(np.asarray(space.high))).any()
    rows = jnp.concatenate([x.reshape(-1, d) for x in (obs0, out["obs"], out["info"]["final_observation"])])
    assert bool(jnp.all(jax.vmap(space.contains)(rows)))
    # the vector is the observation's fields without the mask, in sorted order
    o = first[0]
    np.testing.assert_array_equal(
        np.asarray(flat_observation(o["a"], 1)[:, -1]), np.asarray(o["a"]["world-map"][:, -1, -1, -1]))
    assert flat_observation(o["a"], 1).shape[-1] == d


def test_gymnax_auto_reset_terminated_truncated(run, env):
    _, out = run
    trunc = np.asarray(out["trunc"])
    expected = np.zeros(STEPS, bool)
    expected[EPISODE - 1] = True
    np.testing.assert_array_equal(trunc, np.broadcast_to(expected, trunc.shape))
    assert not np.asarray(out["term"]).any()
    np.testing.assert_array_equal(np.asarray(out["info"]["truncated"]), trunc)
    np.testing.assert_array_equal(np.asarray(out["info"]["terminated"]), np.asarray(out["term"]))
    state = out["state"]
    t = EPISODE - 1
    # after the end: the new episode's first state, carried over (a fresh reset has completions 0)
    assert (np.asarray(state.timestep[:, t]) == 0).all() and (np.asarray(state.completions[:, t]) == 1).all()
    assert not np.allclose(np.asarray(out["obs"][:, t]), np.asarray(out["info"]["final_observation"][:, t]))
    # elsewhere the final observation is the observation
    others = [i for i in range(STEPS) if i != t]
    np.testing.assert_array_equal(np.asarray(out["obs"][:, others]),
                                  np.asarray(out["info"]["final_observation"][:, others]))
    # the mask in info goes with the returned obs (after the reset too)
    np.testing.assert_array_equal(np.asarray(out["info"]["action_mask"]), np.asarray(out["recomputed_mask"]))
    # sampled actions respect the masks they were drawn from
    taken = np.take_along_axis(np.asarray(out["mask"]), np.asarray(out["action"])[..., None], axis=-1)
    assert taken.all()
    # the LogWrapper underneath reports the finished episode
    assert (np.asarray(out["info"]["returned_episode_lengths"][:, t]) == EPISODE).all()
    np.testing.assert_allclose(np.asarray(out["info"]["returned_episode_returns"]["a"][:, t]),
                               np.asarray(out["reward"][:, :t + 1]).sum(axis=1), rtol=1e-5, atol=1e-6)


def test_callable_planner_policy_drives_the_planner(run):
    _, out = run
    planner = np.asarray(out["info"]["planner_action"])  # [B, T, 7]
    timestep_before = np.arange(STEPS) % EPISODE  # the planner acts on the state before the step
    want = np.where(timestep_before >= 2, 3, 0)
    np.testing.assert_array_equal(planner, np.broadcast_to(want[None, :, None], planner.shape))
    assert out["info"]["planner_reward"].shape == (BATCH, STEPS)


def test_planner_policies(env, first):
    params = env.default_params
    obs, state = first
    noop = make_planner_policy(env, "noop")(jax.random.key(0), state, params)
    np.testing.assert_array_equal(np.asarray(noop), np.zeros(7, np.int32))
    fixed = make_planner_policy(env, [3] * 7)(jax.random.key(0), state, params)
    np.testing.assert_array_equal(np.asarray(fixed), np.full(7, 3))
    random = jax.jit(lambda k: make_planner_policy(env, "random")(k, state, params))
    draws = np.stack([np.asarray(random(k)) for k in jax.random.split(jax.random.key(2), 8)])
    assert draws.shape == (8, 7) and draws.dtype == np.int32
    mask = np.asarray(obs["p"]["action_mask"]).reshape(7, 22)  # 7 heads of 22 (NO-OP + 21 rates)
    assert all(mask[h, a] > 0 for row in draws for h, a in enumerate(row))
    assert len(np.unique(draws)) > 1


@pytest.fixture(scope="module")
def small(jitted_env):
    """A cheap economy (Build and Gather, two agents) for the step-convention tests."""
    return jitted_env(two_agents(gather_build_config(), EPISODE)).env


def _walk(genv, n_steps):
    params = genv.default_params
    obs, state = genv.reset(jax.random.key(0), params)
    outs = []
    for t in range(n_steps):
        out = genv.step(jax.random.key(t + 1), state, jnp.full(2, 2, jnp.int32), params)
        state = out[1]
        outs.append(out)
    return outs


@pytest.fixture(scope="module")
def legacy_walk(small):
    return _walk(GymnaxEnv(small, step_api="legacy"), EPISODE + 1)


def test_legacy_five_value_step(legacy_walk):
    outs = legacy_walk
    assert all(len(o) == 5 for o in outs)
    dones = [bool(o[3]) for o in outs]
    assert dones == [False] * (EPISODE - 1) + [True, False]
    end = outs[EPISODE - 1][4]
    assert bool(end["truncated"]) and not bool(end["terminated"])
    assert int(outs[EPISODE - 1][1].completions) == 1 and int(outs[EPISODE - 1][1].timestep) == 0


def test_mirrors_gymnax(small, legacy_walk):
    gymnax_env = pytest.importorskip("gymnax.environments.environment")
    compat = pytest.importorskip("gymnax.wrappers.compat")
    genv = GymnaxEnv(small)
    assert isinstance(genv, gymnax_env.Environment)
    assert genv.is_terminated(None, None).dtype == jnp.bool_
    params = genv.default_params
    _, state = jax.eval_shape(lambda k: genv.reset(k, params), jax.random.key(0))
    action = jnp.zeros(2, jnp.int32)
    six = jax.eval_shape(lambda k, s: genv.step(k, s, action, params), jax.random.key(0), state)
    # gymnax's own adapter to the removed five-value API gives what step_api="legacy" gives
    lean = GymnaxEnv(small, info_keys=())  # the legacy API's default info
    theirs = jax.eval_shape(lambda k, s: compat.LegacyStepAPIWrapper(lean).step(k, s, action, params),
                            jax.random.key(0), state)
    assert jax.tree.structure(theirs) == jax.tree.structure(legacy_walk[0])
    assert [(x.shape, x.dtype) for x in jax.tree.leaves(theirs)] == \
        [(jnp.shape(x), x.dtype) for x in jax.tree.leaves(legacy_walk[0])]
    assert len(six) == 6 and set(six[5]) >= {"terminated", "truncated", "final_observation"}
    assert "action_mask" not in six[5]  # only when info_keys asks
    assert "final_observation" not in legacy_walk[0][4]  # legacy API: lean by default


def test_gymnax_own_wrappers_run_on_the_default_front(small):
    """gymnax 1.0's FlattenObservationWrapper and LogWrapper read info["final_observation"]."""
    purerl = pytest.importorskip("gymnax.wrappers.purerl")
    for per_agent in (False, True):
        genv = purerl.LogWrapper(purerl.FlattenObservationWrapper(GymnaxEnv(small, agents_as_batch=per_agent)))
        params = genv.default_params
        n = 2 if per_agent else 1
        obs, state = jax.vmap(genv.reset, in_axes=(0, None))(jax.random.split(jax.random.key(0), n), params)
        action = jnp.zeros((n,) if per_agent else (n, 2), jnp.int32)
        out = jax.vmap(genv.step, in_axes=(0, 0, 0, None))(jax.random.split(jax.random.key(1), n), state, action,
                                                            params)
        assert out[0].shape == obs.shape and "returned_episode_returns" in out[5]


def test_a_bad_key_is_named(genv):
    params = genv.default_params
    with pytest.raises(TypeError, match="key must be one PRNG key"):
        genv.reset(0, params)
    _, state = genv.reset(jax.random.key(0), params)
    with pytest.raises(TypeError, match="key must be one PRNG key"):
        genv.step(jnp.zeros(3, jnp.uint32), state, jnp.zeros(genv.num_agents, jnp.int32), params)


def test_action_mask_names_a_state_or_params_of_another_economy(env, genv):
    """As ``step`` does (the mask used to fail with a bare KeyError of a component's name)."""
    from jaxecon.configs import default_config

    traders = GymnaxEnv(jaxecon.make_from_config(two_agents(default_config(), EPISODE)))  # with the auction
    _, state = jax.eval_shape(lambda k: genv.reset(k, genv.default_params), jax.random.key(0))
    with pytest.raises(ValueError, match=r"^state belongs to another economy: its structure differs from an EnvState "
                                         r"of this env \(from env.reset or env.step\): missing "
                                         r"\[\"\.components\['ContinuousDoubleAuction'\]"):
        jax.eval_shape(traders.action_mask, state)
    with pytest.raises(ValueError, match=r"^params belongs to another economy: .*unexpected "
                                         r"\[\"\.components\['ContinuousDoubleAuction'\]\.order_labor\"\]"):
        jax.eval_shape(lambda s: genv.action_mask(s, traders.default_params), state)
    with pytest.raises(TypeError, match="^state must be a jaxecon EnvState or a wrapper state"):
        genv.action_mask(None)
    assert jax.eval_shape(genv.action_mask, state).shape == (2, genv.num_actions)


def test_bad_input(env, genv):
    with pytest.raises(TypeError, match="env must be a jaxecon functional environment"):
        GymnaxEnv("CartPole-v1")
    with pytest.raises(TypeError, match="auto-resets by itself"):
        GymnaxEnv(AutoResetWrapper(env))
    with pytest.raises(ValueError, match=r"planner_policy must be one of \('noop', 'random'\)"):
        GymnaxEnv(env, planner_policy="saez")
    with pytest.raises(ValueError, match=r"integers of shape \(7,\)"):
        GymnaxEnv(env, planner_policy=[1, 2])
    with pytest.raises(ValueError, match="outside MultiDiscrete"):
        GymnaxEnv(env, planner_policy=[30] * 7)
    with pytest.raises(ValueError, match=r"step_api must be one of \('gymnax', 'legacy'\)"):
        GymnaxEnv(env, step_api="v0")
    with pytest.raises(ValueError, match="flatten_masks=True"):
        GymnaxEnv(jaxecon.make_from_config(two_agents(gather_build_config(), EPISODE, flatten_masks=False)))
    with pytest.raises(TypeError, match=r"got jaxecon.wrappers.gymnax.GymnaxEnv \(a wrapped env: pass its jaxecon env, env.unwrapped\)"):
        LogWrapper(genv)
    bad = GymnaxEnv(env, planner_policy=lambda key, obs, state: jnp.zeros(3, jnp.int32))
    params = env.default_params
    _, state = jax.eval_shape(lambda k: bad.reset(k, params), jax.random.key(0))
    for action, got in ((jnp.zeros(3, jnp.int32), r"int32 \(3,\)"), (jnp.zeros(2), r"float32 \(2,\)"),
                        (jnp.zeros(2, bool), r"bool \(2,\)")):
        with pytest.raises(ValueError, match=r"action must be an integer array of shape \(2,\), got " + got):
            jax.eval_shape(lambda k, s, a=action: bad.step(k, s, a, params), jax.random.key(0), state)
    # a list of ints, whose entries the jitted step makes tracers, is an action (it failed in np.asarray)
    _, state2 = jax.eval_shape(lambda k: genv.reset(k, params), jax.random.key(0))
    n = genv.num_agents
    obs, *_ = jax.eval_shape(lambda k, s: genv.step(k, s, [0] * n, params), jax.random.key(0), state2)
    assert obs.shape[0] == n
    with pytest.raises(ValueError, match=r"^action must be an integer array of shape \(\d+,\), got float32"):
        jax.eval_shape(lambda k, s: genv.step(k, s, [0.5] * n, params), jax.random.key(0), state2)
    with pytest.raises(TypeError, match="params must be the env's EnvParams"):
        genv.reset(jax.random.key(0), {"isoelastic_eta": 0.23})
    with pytest.raises(ValueError, match=r"planner_policy returned an action of shape \(3,\)"):
        jax.eval_shape(lambda k, s: bad.step_env(k, s, jnp.zeros(2, jnp.int32), params), jax.random.key(0), state)


def test_phase1_warmup_carries_across_the_fronts_auto_resets(jitted_env):
    """``phase1``'s labor-cost warm-up ("auto": the integrator) and the completed
    episodes survive the auto-reset of both fronts, vmapped as PureJaxRL and
    JaxMARL vmap them; the labor weight read after the reset is Foundation's
    ``1 - exp(-integrator / energy_warmup_constant)``."""
    from jaxecon.configs import PHASE1_WARMUP_CONSTANT, phase1_config
    from jaxecon.wrappers import MultiAgentEnv

    cfg = two_agents(phase1_config(), EPISODE)
    assert cfg["energy_warmup_method"] == "auto" and cfg["energy_warmup_constant"] == PHASE1_WARMUP_CONSTANT
    assert [c["PeriodicBracketTax"]["disable_taxes"] for c in cfg["components"] if "PeriodicBracketTax" in c] == [True]
    econ = jitted_env(cfg).env
    integ, done_before = 1000, 7

    def seeded(state: EnvState) -> EnvState:
        return state.replace(completions=jnp.full_like(state.completions, done_before),
                             scenario=state.scenario.replace(
                                 auto_warmup_integrator=jnp.full_like(state.scenario.auto_warmup_integrator, integ)))

    genv = GymnaxEnv(econ, step_api="legacy", agents_as_batch=True)
    params = genv.default_params

    def gymnax_episode(key):
        keys = jax.random.split(key, 2 * econ.n_agents)  # two economies
        _, state = jax.vmap(genv.reset, in_axes=(0, None))(keys, params)
        state = state.replace(env_state=seeded(state.env_state))

        def body(state, key):
            action = jnp.zeros(keys.shape[0], jnp.int32)
            _, state, _, done, _ = jax.vmap(genv.step, in_axes=(0, 0, 0, None))(
                jax.random.split(key, keys.shape[0]), state, action, params)
            return state, done

        state, done = jax.lax.scan(body, state, jax.random.split(key, EPISODE))
        return state.env_state, done

    menv = MultiAgentEnv(econ)

    def jaxmarl_episode(key):
        _, state = jax.vmap(menv.reset)(jax.random.split(key, 2))
        state = seeded(state)

        def body(state, key):
            actions = {a: jnp.zeros(2, jnp.int32) for a in menv.agents}
            _, state, _, dones, _ = jax.vmap(menv.step)(jax.random.split(key, 2), state, actions)
            return state, dones["__all__"]

        return jax.lax.scan(body, state, jax.random.split(key, EPISODE))

    for state, done in (jax.jit(gymnax_episode)(jax.random.key(4)), jax.jit(jaxmarl_episode)(jax.random.key(5))):
        assert bool(done[-1].all()) and not bool(done[:-1].any())  # the last step reset every economy
        np.testing.assert_array_equal(np.asarray(state.timestep), 0)
        np.testing.assert_array_equal(np.asarray(state.completions), done_before + 1)
        # NO-OP earns nothing, so no step counted: the integrator is the one carried over
        np.testing.assert_array_equal(np.asarray(state.scenario.auto_warmup_integrator), integ)
        weight = jax.vmap(econ.scenario.energy_weight, in_axes=(0, None))(state, params)
        np.testing.assert_allclose(np.asarray(weight), 1 - np.exp(-integ / PHASE1_WARMUP_CONSTANT), rtol=1e-6)
