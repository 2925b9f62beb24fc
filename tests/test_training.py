"""jaxecon.training: distributions, GAE, configs, a short learning run, checkpoints, other envs.

The learning run uses a tiny Gather-Build economy (2 agents, 8x8 map,
20-step episodes) so that its one compiled update serves several tests
(module-scoped fixtures); the JaxMARL-interface test uses a toy env defined
here. Nothing is timed.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon import checkpoint_files
from jaxecon.core.action_layout import ActionLayout
from jaxecon.training import checkpoint as ckpt
from jaxecon.training.config import (
    ConfigError,
    ModelConfig,
    TrainerConfig,
    config_from_dict,
    load_train_config,
)
from jaxecon.training.curriculum import apply_phase, piecewise_schedule
from jaxecon.training.distributions import MaskedCategorical
from jaxecon.training.gae import gae
from jaxecon.training.ppo import PPO
from jaxecon.training.trainer import train
from jaxecon.wrappers.flat import mask_heads

from common import RUN_OFTEN

TINY_ENV = {
    "scenario_name": "uniform/simple_wood_and_stone",
    "components": [
        {"Build": {"payment": 10, "build_labor": 1}},
        {"Gather": {"move_labor": 1, "collect_labor": 1}},
    ],
    "n_agents": 2,
    "world_size": [8, 8],
    "episode_length": 20,
    "mobile_agent_observation_range": 2,
    "planner_gets_spatial_info": False,
    "energy_cost": 0.21,
}


def tiny_config(**trainer) -> "jaxecon.training.config.TrainConfig":
    cfg = config_from_dict({
        "env": TINY_ENV,
        "general": {"name": "tiny", "episodes": 64, "ckpt_frequency_steps": 10**9},
        "agent_policy": {"lr": 1e-3, "entropy_coeff": 0.01, "vf_share_layers": True,
                         "model": {"custom_model": "mlp", "custom_options": {"fc_dim": 32, "num_fc": 1}}},
        "trainer": {"num_envs": 8, "rollout_fragment_length": 20, "sgd_minibatch_size": 80,
                    "num_sgd_iter": 2, "seed": 0},
    })
    return cfg.replace(trainer=dataclasses.replace(cfg.trainer, **trainer)) if trainer else cfg


# ------------------------------------------------------------ distributions, GAE
def test_masked_categorical_never_samples_masked_actions():
    rng = np.random.default_rng(0)
    logits = jnp.asarray(5.0 * rng.normal(size=(64, 3, 9)), jnp.float32)
    mask = (rng.random((64, 3, 9)) < 0.3).astype(np.float32)
    mask[:, :, 4] = 1.0  # every head keeps one valid action
    dist = MaskedCategorical.from_logits(logits, jnp.asarray(mask))
    samples = np.asarray(jax.jit(jax.vmap(dist.sample))(jax.random.split(jax.random.key(0), 500)))
    picked = np.take_along_axis(np.broadcast_to(mask, (500,) + mask.shape), samples[..., None], -1)
    assert np.all(picked == 1.0) and samples.shape == (500, 64, 3)
    assert np.all(np.take_along_axis(mask, np.asarray(dist.mode())[..., None], -1) == 1.0)
    p = np.exp(np.asarray(dist.log_probs()))
    assert np.allclose(p.sum(-1), 1.0, atol=1e-5)
    ref_h = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0), axis=(-2, -1))
    assert np.all(p[mask == 0] == 0.0)
    assert np.allclose(np.asarray(dist.entropy()), ref_h, atol=1e-4)
    a = dist.mode()
    ref_lp = np.log(np.take_along_axis(p, np.asarray(a)[..., None], -1)[..., 0]).sum(-1)
    assert np.allclose(np.asarray(dist.log_prob(a)), ref_lp, atol=1e-4)


def test_masked_categorical_samples_at_the_policys_frequencies():
    """Inverse-CDF sampling draws each action of a
    50-way masked head at its probability (within 4 standard errors)."""
    rng = np.random.default_rng(1)
    mask = (rng.random((1, 50)) < 0.5).astype(np.float32)
    mask[0, [0, 49]] = 1.0
    dist = MaskedCategorical.from_logits(jnp.asarray(rng.normal(size=(1, 50)), jnp.float32), jnp.asarray(mask))
    n = 40000
    samples = np.asarray(jax.jit(jax.vmap(dist.sample))(jax.random.split(jax.random.key(2), n)))[:, 0]
    freq = np.bincount(samples, minlength=50) / n
    p = np.exp(np.asarray(dist.log_probs()))[0]
    assert np.all(freq[mask[0] == 0] == 0.0)
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12), np.abs(freq - p).max()


def test_mask_heads_splits_by_sizes_or_layout():
    # the one splitter of the fronts and the trainer: heads of 3 and 4, padded with False
    flat = jnp.asarray([1, 0, 2, 0, 1, 1, 0.5], jnp.float32)
    assert np.asarray(mask_heads(flat, (3, 4))).tolist() == [[1, 0, 1, 0], [0, 1, 1, 1]]
    assert np.asarray(mask_heads(flat[None, :6], (3, 3))).tolist() == [[[1, 0, 1], [0, 1, 1]]]  # equal heads
    multi = ActionLayout(("A", "B"), (2, 3), True)  # dims 3 and 4: the same split
    assert np.asarray(mask_heads(flat, multi)).tolist() == [[1, 0, 1, 0], [0, 1, 1, 1]]
    single = ActionLayout(("A", "B"), (2, 4), False)  # no heads: [n_actions]
    assert np.asarray(mask_heads(flat, single)).tolist() == [1, 0, 1, 0, 1, 1, 1]


def test_gae_matches_numpy_recomputation():
    rng = np.random.default_rng(0)
    t, a, gamma, lam = 37, 5, 0.97, 0.9
    r = rng.normal(size=(t, a)).astype(np.float32)
    v = rng.normal(size=(t, a)).astype(np.float32)
    d = rng.random((t, a)) < 0.15
    last = rng.normal(size=a).astype(np.float32)
    adv, tgt = gae(jnp.asarray(r), jnp.asarray(v), jnp.asarray(d), jnp.asarray(last), gamma, lam)
    ref = np.zeros((t, a))
    nxt_adv, nxt_v = np.zeros(a), last.astype(np.float64)
    for i in reversed(range(t)):
        m = 1.0 - d[i]
        delta = r[i] + gamma * m * nxt_v - v[i]
        nxt_adv = delta + gamma * lam * m * nxt_adv
        ref[i], nxt_v = nxt_adv, v[i]
    assert np.allclose(np.asarray(adv), ref, atol=1e-4)
    assert np.allclose(np.asarray(tgt), ref + v, atol=1e-4)


def test_piecewise_schedule_is_rllibs():
    sched = ((0, 2.0), (100, 0.5))
    assert [float(piecewise_schedule(sched, 9.0, s)) for s in (0, 50, 100, 1000)] == [2.0, 1.25, 0.5, 0.5]
    assert float(piecewise_schedule(None, 0.3, 7)) == pytest.approx(0.3)


# ------------------------------------------------------------------ configs
@pytest.mark.parametrize("path, bad", [
    (("agent_policy", "model", "custom_options"), {"fc_size": 3}),
    (("trainer",), {"num_env": 4}),
    (("general",), {"episode": 4}),
    ((), {"trainr": {}}),
])
def test_config_unknown_key_is_an_error_naming_it(path, bad):
    d = load_train_config("default").to_dict()
    node = d
    for p in path:
        node = node[p]
    node.update(bad)
    name = ".".join(path + (next(iter(bad)),)) if path else next(iter(bad))
    with pytest.raises(ConfigError, match=name.replace(".", r"\.")):
        config_from_dict(d)


def test_config_bad_values_and_reference_runtime_keys():
    d = load_train_config("phase1").to_dict()
    d["trainer"].update(num_gpus=0, tf_session_args={"x": 1}, num_workers=15, num_envs_per_worker=2)
    d["trainer"].pop("num_envs")
    d["general"].update(cpus=15, restore_tf_weights_agents="")
    cfg = config_from_dict(d)  # the reference's RLlib runtime keys load and are ignored
    assert cfg.trainer.num_envs == 30 and cfg.trainer.train_batch_size == 6000
    for section, key, value, match in [
        ("agent_policy", "kl_coeff", 0.2, "kl_coeff"),
        ("trainer", "train_batch_size", 5000, "train_batch_size"),
        ("agent_policy", "gamma", 1.5, "gamma"),
        ("general", "restore_tf_weights_agents", "x.tf", "restore_tf_weights_agents"),
    ]:
        bad = load_train_config("phase1").to_dict()
        bad[section][key] = value
        with pytest.raises(ConfigError, match=match):
            config_from_dict(bad)


def test_a_training_config_file_is_read_as_jaxecon_runs_config_file(tmp_path):
    import json

    from jaxecon.cli.config import ConfigError as CliConfigError
    from jaxecon.config_files import ConfigError as SharedConfigError

    assert ConfigError is CliConfigError is SharedConfigError  # one error type under its three names
    (tmp_path / "c.json").write_text(json.dumps(load_train_config("default").to_dict()))
    assert load_train_config(tmp_path / "c.json") == load_train_config("default")
    for name, text, match in [("c.txt", "{}", r"must end in \.yaml, \.yml or \.json, got '\.txt'"),
                              ("list.yaml", "[1, 2]", "must hold a mapping, got list"),
                              ("bad.yaml", "a: [", "cannot parse config file"),
                              ("env.yaml", "env: nonesuch", "config file .*env.yaml': 'env': economy must be one of")]:
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError, match=match):
            load_train_config(tmp_path / name)
    with pytest.raises(ConfigError, match="neither a file nor a built-in name"):
        load_train_config(tmp_path / "missing.yaml")


def test_builtin_phase_configs_follow_the_curriculum():
    p1, p2, small = (load_train_config(n) for n in ("phase1", "phase2", "default"))
    assert p1.total_env_steps == 25_000_000 and p1.phase == 1 and p2.phase == 2
    assert p2.planner_policy.entropy_coeff_schedule == ((0, 2.0), (50_000_000, 0.125))
    s2 = apply_phase(small, 2)
    tax = next(c["PeriodicBracketTax"] for c in s2.env["components"] if "PeriodicBracketTax" in c)
    assert tax["disable_taxes"] is False and s2.env["energy_warmup_constant"] == 0
    assert s2.general.train_planner and s2.general.restore_agents == "runs/default/phase1"
    back = apply_phase(s2, 1)
    assert back.phase == 1 and back.general.restore_agents is None
    assert back.env["energy_warmup_method"] == "auto"
    assert all(c["PeriodicBracketTax"]["disable_taxes"] for c in back.env["components"]
               if "PeriodicBracketTax" in c)
    with pytest.raises(ConfigError, match="random"):
        apply_phase(p1, 2)  # the reference's phase-1 planner model is "random"


# --------------------------------------------------------- a short learning run
@pytest.fixture(scope="module")
def tiny():
    cfg = tiny_config()
    env = jaxecon.make_from_config(cfg.env)
    ppo = PPO(cfg, env)
    update = jax.jit(jax.vmap(ppo.update), compiler_options=RUN_OFTEN)
    runners = jax.jit(jax.vmap(ppo.init))(jax.random.split(jax.random.key(0), 2))  # two seeds at once
    return cfg, env, ppo, update, runners


def test_loss_falls_and_return_rises_over_fixed_seeds(tiny):
    _, _, _, update, runners = tiny
    rows = []
    for _ in range(14):
        runners, m = update(runners)
        rows.append(jax.device_get(m))
    first, last = rows[0], rows[-1]
    late = {k: np.mean([r[k] for r in rows[-3:]], axis=0) for k in ("a/reward_mean", "a/value_loss")}
    # per seed: mean reward per step up from the initial (random-like) policy,
    # value loss down from the first update's
    assert np.all(late["a/reward_mean"] > first["a/reward_mean"] + 0.02), (first, late)
    assert np.all(late["a/value_loss"] < first["a/value_loss"]), (first, late)
    assert np.all(np.isfinite(last["a/episode_return"]))


def test_a_config_saved_before_a_key_existed_matches_that_keys_default():
    cfg = tiny_config()
    saved = cfg.to_dict()
    del saved["trainer"]["random_planner_envs"]  # a run written before the key existed
    assert ckpt.config_differences(saved, cfg.to_dict()) == []
    other = cfg.to_dict()
    other["trainer"]["random_planner_envs"] = 3
    assert ckpt.config_differences(saved, other) == ["trainer.random_planner_envs"]


def test_resume_continues_bit_for_bit(tmp_path):
    env = MatchingGame()  # the trainer's host loop, on a toy env that compiles fast
    cfg = tiny_config(num_envs=4, rollout_fragment_length=10, sgd_minibatch_size=40)
    cfg = cfg.replace(general=dataclasses.replace(cfg.general, episodes=8))  # 8 x 20 steps = 4 updates of 4 x 10
    whole = train(cfg, tmp_path / "whole", env=env, progress=False)
    assert list((tmp_path / "whole" / "tb").glob("events.out.tfevents.*"))
    assert (tmp_path / "whole" / "learning_curves.png").stat().st_size > 0
    train(cfg, tmp_path / "split", env=env, progress=False, tensorboard=False, plot=False, max_updates=2)
    resumed = train(cfg, resume=tmp_path / "split", env=env, progress=False, tensorboard=False,
                    plot=False)
    assert int(resumed["runner"].updates) == 4
    a = jax.tree_util.tree_leaves(jax.tree.map(_raw, whole["runner"]))
    b = jax.tree_util.tree_leaves(jax.tree.map(_raw, resumed["runner"]))
    assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))
    rows_whole = (tmp_path / "whole" / "metrics.csv").read_text().splitlines()
    rows_split = (tmp_path / "split" / "metrics.csv").read_text().splitlines()
    strip = lambda rows: [",".join(r.split(",")[:2] + r.split(",")[4:]) for r in rows]  # noqa: E731
    assert strip(rows_whole) == strip(rows_split)  # same metrics (wall times aside)
    with pytest.raises(ConfigError, match="already holds the checkpoints"):  # not over a finished run
        train(cfg, tmp_path / "whole", env=env, progress=False)

    other = cfg.replace(agent_policy=dataclasses.replace(cfg.agent_policy, lr=0.5))
    with pytest.raises(ConfigError, match="agent_policy.lr"):
        ckpt.restore_runner(tmp_path / "whole", PPO(other, env), other)
    wider = cfg.replace(agent_policy=dataclasses.replace(cfg.agent_policy, model=ModelConfig(fc_dim=8, num_fc=1)))
    with pytest.raises(ConfigError, match="model"):
        ckpt.restore_agent_policy(tmp_path / "whole", PPO(wider, env), "agent_0")

    # each step is a checkpoint of jaxecon's one format, held to its guarantees
    step = tmp_path / "whole" / "checkpoints" / "4" / "run"
    doc = checkpoint_files.read_index(str(step))
    assert doc["kind"] == "jaxecon.training" and doc["config"] == cfg.to_dict()
    paths = [m["path"] for m in doc["arrays"]["runner"]]
    assert paths == [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(whole["runner"])[0]]
    arrays = step / doc["arrays_file"]
    arrays.write_bytes(arrays.read_bytes()[:100])
    with pytest.raises(ValueError, match=rf"checkpoint '.*run': {arrays.name} is truncated or not an .npz"):
        ckpt.restore_runner(tmp_path / "whole", PPO(cfg, env), cfg)


def _raw(x):
    x = jax.random.key_data(x) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key) else x
    return np.asarray(x)


def test_phase2_without_phase1_checkpoint_is_a_clear_error(tmp_path):
    cfg = load_train_config("default")
    cfg = apply_phase(cfg, 2)
    cfg = cfg.replace(general=dataclasses.replace(cfg.general, restore_agents=str(tmp_path / "nothing")))
    with pytest.raises(ConfigError, match="phase 1"):
        train(cfg, tmp_path / "p2", env=MatchingGame(), progress=False)


# ------------------------------------------------------ a JaxMARL-interface env
class MatchingGame:
    """A toy env with JaxMARL's MultiAgentEnv interface: each agent sees a target
    index (one-hot) and earns 1 for choosing it; the last action is never
    available (``get_avail_actions``); episodes last 5 steps and auto-reset."""

    def __init__(self, n_actions=4, length=5):
        self.agents = ["agent_0", "agent_1"]
        self.num_agents = 2
        self.k, self.length = n_actions, length

    def observation_space(self, agent):
        return type("Box", (), {"shape": (self.k,)})()

    def action_space(self, agent):
        return type("Discrete", (), {"n": self.k})()

    def _obs(self, state):
        return {a: jax.nn.one_hot(state["target"][i], self.k) for i, a in enumerate(self.agents)}

    def reset(self, key):
        state = {"target": jax.random.randint(key, (2,), 0, self.k - 1), "t": jnp.zeros((), jnp.int32)}
        return self._obs(state), state

    def get_avail_actions(self, state):
        return {a: jnp.arange(self.k) < self.k - 1 for a in self.agents}

    def step(self, key, state, actions):
        k1, k2 = jax.random.split(key)
        reward = {a: (actions[a] == state["target"][i]).astype(jnp.float32) for i, a in enumerate(self.agents)}
        t = state["t"] + 1
        done = t >= self.length
        nxt = {"target": jax.random.randint(k1, (2,), 0, self.k - 1), "t": t}
        _, fresh = self.reset(k2)
        state = jax.tree.map(lambda f, n: jnp.where(done, f, n), fresh, nxt)
        dones = {a: done for a in self.agents} | {"__all__": done}
        return self._obs(state), state, reward, dones, {}


def test_trainer_runs_on_a_jaxmarl_interface_env():
    env = MatchingGame()
    cfg = tiny_config(num_envs=16, rollout_fragment_length=10, sgd_minibatch_size=80, num_sgd_iter=4)
    cfg = cfg.replace(agent_policy=dataclasses.replace(cfg.agent_policy, lr=3e-3))
    ppo = PPO(cfg, env)
    assert [g.agents for g in ppo.groups] == [("agent_0", "agent_1")]
    runner = ppo.init(jax.random.key(1))
    update = jax.jit(ppo.update)
    rets = []
    for _ in range(30):
        runner, m = update(runner)
        rets.append(float(m["agent_0/episode_return"]))
    # random valid play scores 5/3 per episode; the masked action is never taken
    assert np.mean(rets[:2]) < 2.5 and np.mean(rets[-3:]) > 4.0, rets


def test_sgd_replays_the_rollout_exactly():
    """Before the first gradient step the recomputed log-probs are the rollout's
    (approx KL 0): for the feed-forward policy in a whole update; for the LSTM,
    the minibatches' sequences (10 steps, across 5-step episodes' boundaries)
    replayed from their stored states."""
    cfg = tiny_config(num_envs=4, rollout_fragment_length=20, sgd_minibatch_size=80, num_sgd_iter=1)
    d = cfg.to_dict()
    d["trainer"]["sgd_minibatch_size"] = 160
    ppo = PPO(config_from_dict(d), MatchingGame())
    _, m = jax.jit(ppo.update)(ppo.init(jax.random.key(3)))
    assert abs(float(m["agent_0/approx_kl"])) < 1e-6 and float(m["agent_0/clip_fraction"]) == 0.0

    d["trainer"]["sgd_minibatch_size"] = 80
    d["agent_policy"].update(vf_share_layers=False, model={
        "custom_model": "keras_conv_lstm", "max_seq_len": 10,
        "custom_options": {"fc_dim": 16, "num_fc": 1, "lstm_cell_size": 8}})
    ppo = PPO(config_from_dict(d), MatchingGame())
    s = ppo.setups[0]
    assert s.network.recurrent and ppo.num_minibatches["agent_0"] == 2

    def replay(runner):
        runner, traj = ppo.rollout(runner, 20, {"agent_0": "sample"})
        batch = ppo._batch(s, traj, jnp.zeros((8,)))
        mbs = ppo._minibatches(s, batch, jax.random.key(0))
        logits, _ = jax.vmap(lambda mb: ppo._apply_batch(s, runner.policies["agent_0"].params, mb))(mbs)
        logp = MaskedCategorical.from_logits(logits, mbs["mask"]).log_prob(mbs["action"])
        return logp, mbs["log_prob"], traj["first"]

    new, old, first = jax.jit(replay)(ppo.init(jax.random.key(3)))
    assert new.shape == (2, 10, 8)  # minibatches x steps x sequences
    assert np.asarray(first).sum() == 4 * 4  # episodes start inside the replayed sequences
    assert np.allclose(np.asarray(new), np.asarray(old), atol=1e-5)


def test_trainer_runs_on_a_jaxmarl_multiagentenv_subclass():
    mae = pytest.importorskip("jaxmarl.environments.multi_agent_env")

    class Sub(mae.MultiAgentEnv):
        def __init__(self):
            super().__init__(num_agents=2)
            self.game = MatchingGame()
            self.agents = self.game.agents

        def reset(self, key):
            return self.game.reset(key)

        def step_env(self, key, state, actions):
            obs, state, rew, dones, info = self.game.step(key, state, actions)
            return obs, state, rew, dones, info

        def get_obs(self, state):
            return self.game._obs(state)

        def get_avail_actions(self, state):
            return self.game.get_avail_actions(state)

        def observation_space(self, agent):
            return self.game.observation_space(agent)

        def action_space(self, agent):
            return self.game.action_space(agent)

    cfg = tiny_config(num_envs=4, rollout_fragment_length=10, sgd_minibatch_size=40)
    ppo = PPO(cfg, Sub())
    runner, traj = jax.jit(lambda r: ppo.rollout(r, 12, {"agent_0": "sample"}))(ppo.init(jax.random.key(0)))
    actions = np.asarray(traj["action"]["agent_0"])  # [T, B, 2 agents, 1 head]
    assert actions.shape == (12, 4, 2, 1) and actions.max() < 3  # action 3 is never available
    assert np.asarray(traj["done"]).sum() == 2 * 4  # JaxMARL's auto-reset ends episodes at t = 5, 10
    assert int(runner.env_steps) == 48


def test_trainer_takes_jaxecons_own_jaxmarl_front(tiny):
    from jaxecon.wrappers import MultiAgentEnv

    _, env, _, _, _ = tiny
    ppo = PPO(tiny_config(), MultiAgentEnv(env, planner_policy=None))
    assert [g.agents for g in ppo.groups] == [("0", "1"), ("p",)]
    runner = jax.eval_shape(ppo.init, jax.random.key(0))
    _, metrics = jax.eval_shape(ppo.update, runner)  # traces the whole update
    assert "0/value_loss" in metrics and "p/value_loss" in metrics


def test_trainer_config_rejects_a_minibatch_that_does_not_split(tiny):
    _, env, _, _, _ = tiny
    with pytest.raises(ConfigError, match="sgd_minibatch_size"):
        PPO(tiny_config(num_envs=7, sgd_minibatch_size=100), env)
    assert isinstance(TrainerConfig().train_batch_size, int)


def test_an_adapters_batch_size_and_params_are_checked_at_construction():
    """``num_envs`` -2 (JAX's slice error at reset), 0 (empty batches), 2.7 (2), True
    or "3" were taken; params for a JaxMARL-interface env were ignored."""
    from jaxecon.training.env_adapters import BatchedEnv, JaxeconAdapter, MultiAgentAdapter, make_adapter

    env = jaxecon.make_from_config(TINY_ENV)
    for bad in (-2, 0, 2.7, True, "3"):
        for make in (lambda n: JaxeconAdapter(env, num_envs=n), lambda n: BatchedEnv(env, n),
                     lambda n: MultiAgentAdapter(MatchingGame(), n)):
            with pytest.raises(ValueError) as exc:
                make(bad)
            assert str(exc.value) == f"num_envs must be an int >= 1 (the economies in the batch), got {bad!r}"
    assert JaxeconAdapter(env, np.int64(2)).num_envs == 2
    with pytest.raises(ValueError) as exc:
        make_adapter(MatchingGame(), 2, env.default_params)
    assert str(exc.value) == ("params are a jaxecon env's EnvParams; MatchingGame is not a jaxecon env (it has "
                              "JaxMARL's interface, whose env holds its own parameters): pass params=None")
