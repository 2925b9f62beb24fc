"""MultiAgentEnv (jaxecon.wrappers.jaxmarl): JaxMARL's interface over an economy.

The interface tests run without JaxMARL; the ones that use JaxMARL itself (its
base class, its baselines' ``LogWrapper``, an IPPO training function in the
shape of its ``baselines/IPPO/ippo_ff_*.py``: ``make_train(config)``
returning a jittable ``train(rng)``, written here) skip when it is missing.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon import spaces
from jaxecon.configs import gather_build_config
from jaxecon.wrappers import AutoResetWrapper, LogWrapper, MultiAgentEnv
from jaxecon.wrappers.library_spaces import library_spaces_module

from common import default_key_draws, jit_fast, taxed_config, two_agents

EPISODE = 5
STEPS = 6


@pytest.fixture(scope="module")
def menv(jitted_env):
    """The economy without trade, two agents, planner included as agent "p"
    (the env is shared with the gymnax tests)."""
    return MultiAgentEnv(jitted_env(two_agents(taxed_config(), EPISODE)).env, planner_policy=None)


@pytest.fixture(scope="module")
def small_env(jitted_env):
    """Build and Gather (a passive planner), two agents."""
    return jitted_env(two_agents(gather_build_config(), EPISODE)).env


def _sample(key, mask):
    """Uniform over allowed entries along the last axis (bool [..., k])."""
    return jax.random.categorical(key, jnp.where(mask, 0.0, -jnp.inf)).astype(jnp.int32)


@pytest.fixture(scope="module")
def run(menv):
    """``STEPS`` steps with random allowed actions, every agent, under ``jit(scan)``."""

    def go(key):
        k0, k = jax.random.split(key)
        obs, state = menv.reset(k0)

        def body(carry, key):
            obs, state = carry
            avail = menv.get_avail_actions(state)
            keys = dict(zip(menv.agents, jax.random.split(key, menv.num_agents + 1)))
            actions = {a: _sample(keys[a], avail[a]) for a in menv.agents}
            obs2, state2, rewards, dones, infos = menv.step(jax.random.fold_in(key, 1), state, actions)
            return (obs2, state2), dict(obs=obs2, state=state2, rewards=rewards, dones=dones, infos=infos,
                                        avail=avail, actions=actions)

        _, out = jax.lax.scan(body, (obs, state), jax.random.split(k, STEPS))
        return obs, out

    return jit_fast(go)(jax.random.key(5))


def test_the_economy_draws_with_unrolled_threefry_keys(menv):
    """Every key reset and step split or hand to the economy is rewrapped
    (as_unrolled_key), none is JAX's default key."""
    key = jax.random.key(0)
    actions = {a: jnp.zeros(menv.action_space(a).shape, jnp.int32) for a in menv.agents}
    assert default_key_draws(menv.reset, key) == 0
    assert default_key_draws(lambda k: menv.step(k, menv.reset(k)[1], actions), key) == 0


def test_agents_and_spaces(menv):
    n = menv.unwrapped.n_agents
    assert menv.agents == [str(i) for i in range(n)] + ["p"] and menv.num_agents == n + 1
    assert menv.agent_classes == {"mobile": [str(i) for i in range(n)], "planner": ["p"]}
    assert menv.name == "jaxecon/layout_from_file/simple_wood_and_stone"
    lib = library_spaces_module("jaxmarl") or spaces  # JaxMARL's own classes when installed
    agent_space, planner_space = menv.action_space("0"), menv.action_space("p")
    assert isinstance(agent_space, lib.Discrete) and agent_space.n == menv.unwrapped.agent_actions.n_actions
    assert isinstance(planner_space, lib.MultiDiscrete) and planner_space.shape == (7,)
    assert np.array_equal(getattr(planner_space, "num_categories", getattr(planner_space, "nvec", None)), [22] * 7)
    a, p = menv.observation_space("0"), menv.observation_space("p")
    assert isinstance(a, lib.Box) and a.dtype == np.float32 and a.shape == (np.size(a.low),)
    assert p.shape != a.shape and len(p.shape) == 1 and menv.observation_space("1").shape == a.shape
    assert menv.observation_spaces["p"] is p and menv.action_spaces["0"] is menv.action_space("0")


def test_step_dicts_auto_reset_and_masks(menv, run):
    obs0, out = run
    agents = menv.agents
    assert set(obs0) == set(agents) and set(out["rewards"]) == set(agents)
    assert set(out["dones"]) == set(agents) | {"__all__"}
    for a in agents:
        assert obs0[a].dtype == jnp.float32 and obs0[a].shape == menv.observation_space(a).shape
        assert out["rewards"][a].shape == (STEPS,)
        assert bool(jnp.all(jax.vmap(menv.observation_space(a).contains)(out["obs"][a])))
        np.testing.assert_array_equal(np.asarray(out["dones"][a]), np.asarray(out["dones"]["__all__"]))
    expected = np.zeros(STEPS, bool)
    expected[EPISODE - 1] = True
    np.testing.assert_array_equal(np.asarray(out["dones"]["__all__"]), expected)
    state = out["state"]
    assert int(state.timestep[EPISODE - 1]) == 0 and int(state.completions[EPISODE - 1]) == 1  # carried over
    # infos: by default one scalar per agent in every leaf (JaxMARL's baselines reshape them to NUM_ACTORS)
    assert out["infos"] and all(x.shape == (STEPS, menv.num_agents) for x in jax.tree.leaves(out["infos"]))
    # masks: mobile agents [n_actions]; the planner one row per tax bracket, its NO-OP first
    avail = out["avail"]
    n_actions = menv.unwrapped.agent_actions.n_actions
    assert avail["0"].shape == (STEPS, n_actions) and avail["p"].shape == (STEPS, 7, 22)
    assert avail["p"].dtype == jnp.bool_
    assert bool(jnp.all(avail["p"][..., 0])) and bool(jnp.all(avail["0"][..., 0]))
    rows = np.asarray(avail["p"].sum(axis=-1))
    # rates are open on the first day of a tax period (the reset, and after each reset), NO-OP only otherwise
    assert (rows[0] > 1).all() and (rows[1:EPISODE - 1] == 1).all() and (rows[EPISODE] > 1).all()
    assert out["actions"]["p"].shape == (STEPS, 7)


def test_a_trailing_singleton_action_axis_is_accepted(menv):
    """MPE and the IPPO feed-forward baselines pass Discrete actions as [1]."""
    obs, state = menv.reset(jax.random.key(0))
    acts = {a: jnp.zeros(menv.action_space(a).shape, jnp.int32) for a in menv.agents}
    acts["0"] = jnp.array(2, jnp.int32)
    ref = menv.step_env(jax.random.key(1), state, acts)
    got = menv.step_env(jax.random.key(1), state, {**acts, "0": jnp.array([2], jnp.int32)})
    jax.tree.map(np.testing.assert_array_equal, got[1], ref[1])
    with pytest.raises(ValueError, match=r"actions\['0'\] must be an integer array of shape \(\)"):
        menv.step_env(jax.random.key(1), state, {**acts, "0": jnp.array([2, 2], jnp.int32)})


def test_batched_actions_with_a_trailing_singleton_axis(small_env):
    """Under ``vmap`` over envs, IPPO's ``unbatchify`` hands each agent ``[num_envs, 1]``."""
    menv = MultiAgentEnv(small_env)
    n_envs = 3
    _, states = jax.eval_shape(jax.vmap(menv.reset), jax.random.split(jax.random.key(0), n_envs))
    keys = jax.random.split(jax.random.key(1), n_envs)
    acts = {a: jnp.zeros((n_envs, 1), jnp.int32) for a in menv.agents}
    obs, new_states, rewards, dones, _ = jax.eval_shape(jax.vmap(menv.step), keys, states, acts)
    assert obs["1"].shape == (n_envs,) + menv.observation_space("1").shape
    assert rewards["0"].shape == dones["__all__"].shape == (n_envs,)
    assert jax.tree.structure(new_states) == jax.tree.structure(states)
    with pytest.raises(ValueError, match=r"actions\['0'\] must be an integer array of shape \(\), got int32 \(2,\)"):
        jax.eval_shape(jax.vmap(menv.step), keys, states, {**acts, "0": jnp.zeros((n_envs, 2), jnp.int32)})


def test_infos_keep_scalars_unless_asked(small_env):
    """By default only one-scalar entries, one per agent; larger ones by ``info_keys``."""
    logged = LogWrapper(small_env)

    def infos(menv):
        _, state = jax.eval_shape(menv.reset, jax.random.key(0))
        acts = {a: jnp.zeros((), jnp.int32) for a in menv.agents}
        return jax.eval_shape(menv.step, jax.random.key(1), state, acts)[4]

    lean = infos(MultiAgentEnv(logged))
    assert {"returned_episode", "returned_episode_lengths", "timestep", "planner_reward"} <= set(lean)
    assert not {"returned_episode_returns", "episode_metrics"} & set(lean)
    assert all(x.shape == (2,) for x in jax.tree.leaves(lean))
    assert lean["timestep"].dtype == jnp.int32 and lean["returned_episode"].dtype == jnp.bool_
    asked = infos(MultiAgentEnv(logged, info_keys=["episode_metrics", "planner_reward"]))
    assert set(asked) == {"episode_metrics", "planner_reward"} and "social/productivity" in asked["episode_metrics"]
    assert asked["episode_metrics"]["social/productivity"].shape == (2,)
    full = infos(MultiAgentEnv(logged, info_keys="all"))
    assert set(full) > set(lean) and full["returned_episode_returns"]["a"].shape == (2, 2)
    with pytest.raises(ValueError, match=r"info_keys: unknown names \['obs'\]; allowed: \[.*'episode_metrics'"):
        MultiAgentEnv(logged, info_keys=["obs"])
    for bad in ("everything", 3, ["timestep", 1]):
        with pytest.raises(ValueError, match=r'info_keys must be None, "all" or a sequence of info entry names'):
            MultiAgentEnv(logged, info_keys=bad)
    with pytest.raises(ValueError, match=r"unknown names \['planner_reward'\]"):  # the planner is an agent here
        MultiAgentEnv(logged, planner_policy=None, info_keys=["planner_reward"])


def test_with_params_replaces_the_params(small_env):
    menv = MultiAgentEnv(small_env)
    p = small_env.default_params
    rich = p.replace(scenario=p.scenario.replace(starting_agent_coin=100.0))
    other = menv.with_params(rich)
    assert other.params is rich and menv.params is not rich and other.agents == menv.agents == ["0", "1"]
    o1, s1 = menv.reset(jax.random.key(0))
    o2, s2 = other.reset(jax.random.key(0))
    np.testing.assert_allclose(np.asarray(s2.inventory["Coin"]), 100.0)
    np.testing.assert_allclose(np.asarray(s1.inventory["Coin"]), 0.0)
    assert not np.allclose(np.asarray(o1["0"]), np.asarray(o2["0"]))


def test_by_default_the_planner_sends_noop_and_is_no_agent(small_env):
    menv = MultiAgentEnv(small_env)  # planner_policy="noop"
    assert menv.agents == ["0", "1"] and menv.num_agents == 2 and menv.agent_classes == {"mobile": ["0", "1"]}
    assert not menv.trains_planner
    with_planner = MultiAgentEnv(small_env, planner_policy=None)
    assert with_planner.agents == ["0", "1", "p"] and with_planner.trains_planner
    _, state = jax.eval_shape(menv.reset, jax.random.key(1))
    joint = menv.joint_actions(jax.random.key(0), state, {"0": jnp.int32(1), "1": jnp.int32(2)})
    np.testing.assert_array_equal(np.asarray(joint["p"]), np.zeros(menv.unwrapped.planner_actions.action_shape))
    np.testing.assert_array_equal(np.asarray(joint["a"]), [1, 2])


def test_fixed_planner_and_reset_state(small_env):
    menv = MultiAgentEnv(small_env, planner_policy="noop")
    with pytest.raises(ValueError, match=r"agent must be one of \['0', '1'\]"):
        menv.observation_space("p")
    _, state = jax.eval_shape(menv.reset, jax.random.key(1))
    acts = {"0": jnp.int32(0), "1": jnp.int32(0)}
    # traced only (no compile): JaxMARL's reset_state argument and the planner's reward in infos
    obs, new_state, rewards, dones, infos = jax.eval_shape(menv.step, jax.random.key(0), state, acts, state)
    assert jax.tree.structure(new_state) == jax.tree.structure(state) and set(rewards) == {"0", "1"}
    assert infos["planner_reward"].shape == (2,) and dones["__all__"].dtype == jnp.bool_
    with pytest.raises(ValueError, match=r"unknown: \['p'\], missing: \[\]"):
        jax.eval_shape(menv.step, jax.random.key(0), state, {**acts, "p": jnp.int32(0)})
    # checked before the jitted step: JAX cannot even sort keys of mixed types
    with pytest.raises(ValueError, match=r"unknown: \[0\], missing: \['0'\]"):
        menv.step(jax.random.key(0), state, {0: 0, "1": 0})
    for bad, got in ((jnp.zeros(2, jnp.int32), r"int32 \(2,\)"), (jnp.float32(1), r"float32 \(\)")):
        with pytest.raises(ValueError, match=r"actions\['1'\] must be an integer array of shape \(\), got " + got):
            jax.eval_shape(menv.step, jax.random.key(0), state, {**acts, "1": bad})


def test_bad_input(menv, small_env):
    with pytest.raises(TypeError, match="env must be a jaxecon functional environment"):
        MultiAgentEnv({"n_agents": 2})
    with pytest.raises(TypeError, match="auto-resets by itself"):
        MultiAgentEnv(AutoResetWrapper(small_env))
    with pytest.raises(ValueError, match=r"planner_policy must be one of \('noop', 'random'\)"):
        MultiAgentEnv(small_env, planner_policy="us-federal")
    with pytest.raises(ValueError, match=r"params belongs to another economy.*missing \[\".components\['PeriodicBracketTax'\]"):
        MultiAgentEnv(menv.unwrapped, params=small_env.default_params)
    with pytest.raises(TypeError, match="params must be the env's EnvParams"):
        menv.with_params({"isoelastic_eta": 0.23})
    for bad in ("agent_0", "a", 3):
        with pytest.raises(ValueError, match=r"agent must be one of \['0', '1', 'p'\]"):
            menv.action_space(bad)
        with pytest.raises(ValueError, match=r"agent must be one of"):
            menv.observation_space(bad)


def test_is_a_jaxmarl_env(menv):
    base = pytest.importorskip("jaxmarl.environments.multi_agent_env")
    assert isinstance(menv, base.MultiAgentEnv)


# ----------------------------------------------------------------------------
# IPPO in the shape of JaxMARL's baselines, over JaxMARL's LogWrapper
# ----------------------------------------------------------------------------


def make_train(config, env):
    """An IPPO training function (parameter-shared PPO over the agents), shaped
    like JaxMARL's ``baselines/IPPO/ippo_ff_*.py``: ``train(rng) -> {"runner_state",
    "metrics"}``, jittable, with the action masks of ``get_avail_actions``."""
    import flax.linen as nn
    import optax
    from flax.training.train_state import TrainState

    num_actors = env.num_agents * config["NUM_ENVS"]
    batch_size = num_actors * config["NUM_STEPS"]

    class ActorCritic(nn.Module):
        n_actions: int

        @nn.compact
        def __call__(self, x, mask):
            h = nn.tanh(nn.Dense(32)(x))
            logits = jnp.where(mask, nn.Dense(self.n_actions)(h), -1e9)
            return jax.nn.log_softmax(logits), nn.Dense(1)(nn.tanh(nn.Dense(32)(x)))[..., 0]

    def stack(tree):  # {agent: [E, ...]} -> [num_actors, ...], agent-major
        return jnp.concatenate([tree[a] for a in env.agents], axis=0)

    def unstack(x):  # [num_actors] -> {agent: [E, 1]}, as JaxMARL's unbatchify leaves the actions
        x = x.reshape((env.num_agents, config["NUM_ENVS"], -1))
        return {a: x[i] for i, a in enumerate(env.agents)}

    def train(rng):
        network = ActorCritic(env.action_space(env.agents[0]).n)
        rng, k_init, k_reset = jax.random.split(rng, 3)
        obs_dim = env.observation_space(env.agents[0]).shape
        params = network.init(k_init, jnp.zeros(obs_dim), jnp.ones(env.action_space(env.agents[0]).n, bool))
        tx = optax.chain(optax.clip_by_global_norm(config["MAX_GRAD_NORM"]), optax.adam(config["LR"]))
        train_state = TrainState.create(apply_fn=network.apply, params=params, tx=tx)
        obs, env_state = jax.vmap(env.reset)(jax.random.split(k_reset, config["NUM_ENVS"]))

        def update(runner, _):
            def env_step(runner, _):
                train_state, env_state, obs, rng = runner
                rng, k_act, k_step = jax.random.split(rng, 3)
                mask = stack(jax.vmap(env.get_avail_actions)(env_state.env_state))
                logp_all, value = network.apply(train_state.params, stack(obs), mask)
                action = jax.random.categorical(k_act, logp_all)
                logp = jnp.take_along_axis(logp_all, action[:, None], axis=-1)[:, 0]
                obs2, env_state, reward, done, info = jax.vmap(env.step)(
                    jax.random.split(k_step, config["NUM_ENVS"]), env_state, unstack(action))
                # as JaxMARL's x.reshape((NUM_ACTORS,)), which needs one scalar per agent, but agent-major
                info = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1).reshape((num_actors,)), info)
                tr = dict(obs=stack(obs), mask=mask, action=action, logp=logp, value=value,
                          reward=stack(reward), done=stack(done), info=info)
                return (train_state, env_state, obs2, rng), tr

            runner, traj = jax.lax.scan(env_step, runner, None, config["NUM_STEPS"])
            train_state, env_state, obs, rng = runner
            last_mask = stack(jax.vmap(env.get_avail_actions)(env_state.env_state))
            _, last_value = network.apply(train_state.params, stack(obs), last_mask)

            def gae(carry, tr):
                adv, next_value = carry
                nonterminal = 1.0 - tr["done"]
                delta = tr["reward"] + config["GAMMA"] * next_value * nonterminal - tr["value"]
                adv = delta + config["GAMMA"] * config["GAE_LAMBDA"] * nonterminal * adv
                return (adv, tr["value"]), adv

            _, advantages = jax.lax.scan(gae, (jnp.zeros_like(last_value), last_value), traj, reverse=True)
            targets = advantages + traj["value"]

            def loss_fn(params, batch, adv, target):
                logp_all, value = network.apply(params, batch["obs"], batch["mask"])
                logp = jnp.take_along_axis(logp_all, batch["action"][:, None], axis=-1)[:, 0]
                ratio = jnp.exp(logp - batch["logp"])
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                eps = config["CLIP_EPS"]
                actor = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - eps, 1 + eps) * adv).mean()
                critic = 0.5 * jnp.square(value - target).mean()
                entropy = -(jnp.exp(logp_all) * jnp.where(batch["mask"], logp_all, 0.0)).sum(-1).mean()
                return actor + config["VF_COEF"] * critic - config["ENT_COEF"] * entropy

            def epoch(carry, _):
                train_state, rng = carry
                rng, k_perm = jax.random.split(rng)
                perm = jax.random.permutation(k_perm, batch_size)
                data = jax.tree.map(lambda x: x.reshape((batch_size,) + x.shape[2:])[perm],
                                    ({k: traj[k] for k in ("obs", "mask", "action", "logp")}, advantages, targets))
                minibatches = jax.tree.map(
                    lambda x: x.reshape((config["NUM_MINIBATCHES"], -1) + x.shape[1:]), data)

                def minibatch(train_state, mb):
                    loss, grads = jax.value_and_grad(loss_fn)(train_state.params, *mb)
                    return train_state.apply_gradients(grads=grads), loss

                train_state, losses = jax.lax.scan(minibatch, train_state, minibatches)
                return (train_state, rng), losses

            (train_state, rng), losses = jax.lax.scan(epoch, (train_state, rng), None, config["UPDATE_EPOCHS"])
            metrics = {"loss": losses, "info": traj["info"], "reward": traj["reward"], "done": traj["done"]}
            return (train_state, env_state, obs, rng), metrics

        runner, metrics = jax.lax.scan(update, (train_state, env_state, obs, rng), None, config["NUM_UPDATES"])
        return {"runner_state": runner, "metrics": metrics, "initial_params": params}

    return train


IPPO_CONFIG = {"NUM_ENVS": 2, "NUM_STEPS": 8, "NUM_UPDATES": 2, "UPDATE_EPOCHS": 2, "NUM_MINIBATCHES": 2,
               "LR": 3e-4, "MAX_GRAD_NORM": 0.5, "GAMMA": 0.99, "GAE_LAMBDA": 0.95, "CLIP_EPS": 0.2,
               "VF_COEF": 0.5, "ENT_COEF": 0.01}


def test_ippo_trains_over_jaxmarl_log_wrapper(small_env):
    baselines = pytest.importorskip("jaxmarl.wrappers.baselines")
    env = baselines.LogWrapper(MultiAgentEnv(small_env))  # the planner sends NO-OP: agents look alike
    out = jit_fast(make_train(dict(IPPO_CONFIG), env))(jax.random.key(0))
    metrics = out["metrics"]
    loss = np.asarray(metrics["loss"])
    assert loss.shape == (2, 2, 2) and np.isfinite(loss).all()
    trained = jax.tree.leaves(out["runner_state"][0].params)
    initial = jax.tree.leaves(out["initial_params"])
    assert any(not np.allclose(np.asarray(a), np.asarray(b)) for a, b in zip(trained, initial))
    # JaxMARL's LogWrapper over our env: returned episode returns are the summed rewards.
    info = metrics["info"]
    reward = np.asarray(metrics["reward"]).reshape(-1, 2 * IPPO_CONFIG["NUM_ENVS"])  # [updates*steps, actors]
    done = np.asarray(metrics["done"]).reshape(reward.shape)
    returned = np.asarray(info["returned_episode_returns"]).reshape(reward.shape)
    lengths = np.asarray(info["returned_episode_lengths"]).reshape(reward.shape)
    ends = np.flatnonzero(done[:, 0])
    np.testing.assert_array_equal(ends, [4, 9, 14])  # 5-step episodes over 16 steps
    start = 0
    for t in ends:
        np.testing.assert_allclose(returned[t], reward[start:t + 1].sum(axis=0), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(lengths[t], EPISODE)
        start = t + 1
    assert info["returned_episode"].dtype == jnp.bool_


def test_remap_replaces_forbidden_actions_by_allowed_ones():
    import jaxecon

    econ = jaxecon.make(**two_agents(gather_build_config(), episode_length=5))
    menv = MultiAgentEnv(econ, invalid_actions="remap")
    _, state = menv.reset(jax.random.key(0))
    avail = menv.get_avail_actions(state)
    n_actions = menv.action_space("0").n
    forbidden = {a: int(np.flatnonzero(~np.asarray(m))[-1]) for a, m in avail.items()}
    allowed = {a: int(np.flatnonzero(np.asarray(m))[-1]) for a, m in avail.items()}
    for acts in (forbidden, {a: n_actions + 7 for a in menv.agents}):  # forbidden, then out of range
        joint = menv.joint_actions(jax.random.key(1), state, {a: jnp.int32(v) for a, v in acts.items()})
        for i, a in enumerate(menv.agents):
            assert bool(avail[a][int(joint["a"][i])]), (a, acts[a], int(joint["a"][i]))
    kept = menv.joint_actions(jax.random.key(1), state, {a: jnp.int32(v) for a, v in allowed.items()})
    assert [int(x) for x in kept["a"]] == [allowed[a] for a in menv.agents]
    noop = MultiAgentEnv(econ).joint_actions(jax.random.key(1), state, {a: jnp.int32(v) for a, v in forbidden.items()})
    assert [int(x) for x in noop["a"]] == [forbidden[a] for a in menv.agents]  # the default leaves them (NO-OP)
    with pytest.raises(ValueError, match=r"invalid_actions must be one of \('noop', 'remap'\), got 'random'"):
        MultiAgentEnv(econ, invalid_actions="random")
