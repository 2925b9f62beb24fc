"""PPO for agent groups, with the whole update (rollout, GAE, epochs of minibatch SGD) in one jit.

PureJaxRL's design (Lu et al. 2022, luchris429/purejaxrl ``ppo.py`` and
``ppo_rnn.py``) for the AI Economist's two-level setting: the mobile agents
share one policy (the agent index is a one-hot input), the planner has its own
(one masked head per tax bracket), and each trained policy has its own Adam
optimiser and PPO settings (``config.PolicyConfig``, RLlib's keys).

``PPO(cfg, env)`` builds the static parts; then::

    ppo = PPO(cfg, env)
    runner = ppo.init(jax.random.key(cfg.trainer.seed))
    update = jax.jit(ppo.update)
    for _ in range(cfg.num_updates):
        runner, metrics = update(runner)

``update(runner)``:

1. rollout: ``rollout_fragment_length`` steps of ``num_envs`` economies under
   ``jax.lax.scan``, each step sampling every group's actions from its policy
   (a group whose policy is not trained, e.g. the phase-1 planner, acts
   uniformly at random over its valid actions), stepping the vmapped,
   auto-resetting env (``env_adapters``) and recording the transition; LSTM
   states are carried across steps and restart at each episode's first step;
2. per trained group: GAE (``gae.gae``) on the scaled rewards, advantages
   standardised over the batch (as RLlib);
3. ``num_sgd_iter`` epochs of minibatch SGD on the PPO loss (``losses``),
   gradients clipped by global norm, Adam (eps 1e-5) with the learning rate
   and entropy coefficient of the schedules (``curriculum.piecewise_schedule``)
   at the update's env-step count. Feed-forward policies shuffle single
   samples; recurrent ones shuffle ``max_seq_len``-step sequences, each
   replayed from its stored LSTM state.

Everything in ``RunnerState`` is a pytree of arrays, so a run is a pure
function of the seed and the config: it can be checkpointed between updates
and resumed bit for bit (``checkpoint``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxecon.training.config import ConfigError, PolicyConfig, TrainConfig
from jaxecon.training.curriculum import piecewise_schedule
from jaxecon.training.distributions import MaskedCategorical
from jaxecon.training.env_adapters import GroupObs, PolicyGroup, make_adapter
from jaxecon.training.gae import gae
from jaxecon.training.losses import ppo_loss
from jaxecon.training.networks import ActorCritic, mlp_inputs

__all__ = ["ACT_MODES", "GroupSetup", "PPO", "PolicyState", "RunnerState"]

#: How a group picks its actions: from the policy (``"sample"``), its most
#: probable action (``"greedy"``), uniformly over valid actions
#: (``"random"``), or action 0 in every head (``"noop"``; jaxecon's NO-OP).
ACT_MODES = ("sample", "greedy", "random", "noop")

ADAM_EPS = 1e-5


@dataclass(frozen=True)
class GroupSetup:
    """A group, its policy settings, and its network (None: not trained, acts at random)."""

    group: PolicyGroup
    policy: PolicyConfig
    network: Optional[ActorCritic]

    @property
    def trained(self) -> bool:
        """Whether the group's policy learns."""
        return self.network is not None


@struct.dataclass
class PolicyState:
    """One trained policy: network ``params`` and the optimiser's ``opt_state``."""

    params: Any
    opt_state: Any


@struct.dataclass
class RunnerState:
    """Everything an update reads and writes (``B`` = num_envs, ``A`` = B x group size).

    Attributes:
        policies: ``{group: PolicyState}`` of the trained groups.
        env_state: the adapter's env state, batched ``[B]``.
        obs: ``{group: GroupObs}`` ``[B, n, ...]``, the next step's observations.
        carry: ``{group: LSTM state}`` ``[A, ...]`` (``{}`` for feed-forward).
        first: bool ``[B]``, ``obs`` is an episode's first observation.
        key: PRNG key.
        env_steps: int32 [], env steps sampled so far (B per step).
        updates: int32 [], updates done.
    """

    policies: dict
    env_state: Any
    obs: dict
    carry: dict
    first: jax.Array
    key: jax.Array
    env_steps: jax.Array
    updates: jax.Array


def _merge(x):
    """``[B, n, ...] -> [B * n, ...]``."""
    return x.reshape((x.shape[0] * x.shape[1],) + x.shape[2:])


def _index(group: PolicyGroup, batch: int):
    """One-hot agent index ``[B * n, n]`` (None for a single-agent group)."""
    if group.n == 1:
        return None
    return jnp.tile(jnp.eye(group.n, dtype=jnp.float32), (batch, 1))


class PPO:
    """PPO for every agent group of ``env`` (see the module docstring).

    Args:
        cfg: ``TrainConfig``.
        env: a jaxecon functional env (typically ``jaxecon.make_from_config(cfg.env)``)
            or any env with JaxMARL's ``MultiAgentEnv`` interface
            (``env_adapters``); its groups of role ``"agents"`` train with
            ``cfg.agent_policy`` (each group its own parameters), the planner
            with ``cfg.planner_policy`` when ``cfg.general.train_planner``.
        params: jaxecon ``EnvParams`` (default ``env.default_params``).
        shard_minibatch: ``(minibatch, recurrent) -> minibatch``, applied to each
            minibatch before its loss (``distributed.DataParallel.shard_minibatch``
            lays it out over devices); None for one device.
    Raises:
        ConfigError: a minibatch size that does not split the batch;
            ``trainer.random_planner_envs`` without a trained planner.
        TypeError: an env with neither interface.
    """

    def __init__(self, cfg: TrainConfig, env, params=None, shard_minibatch=None):
        self.cfg = cfg
        self.shard_minibatch = shard_minibatch
        self.num_envs = cfg.trainer.num_envs
        self.adapter = make_adapter(env, self.num_envs, params)
        self.n_steps = cfg.trainer.rollout_fragment_length
        setups = []
        for g in self.adapter.groups:
            policy = cfg.planner_policy if g.role == "planner" else cfg.agent_policy
            trained = g.role == "agents" or cfg.general.train_planner
            net = None
            if trained:
                m = policy.model
                net = ActorCritic(heads=g.heads, model=m.custom_model, fc_dim=m.fc_dim,
                                  num_fc=m.num_fc, lstm_cell_size=m.lstm_cell_size,
                                  num_conv=m.num_conv, idx_emb_dim=m.idx_emb_dim,
                                  input_emb_vocab=m.input_emb_vocab,
                                  vf_share_layers=policy.vf_share_layers)
            setups.append(GroupSetup(g, policy, net))
        self.setups = tuple(setups)
        self.random_planner_envs = cfg.trainer.random_planner_envs
        if self.random_planner_envs and not any(st.trained and st.group.role == "planner" for st in setups):
            raise ConfigError(f"'trainer.random_planner_envs' ({self.random_planner_envs}) sets economies aside "
                              "from a learning planner, but this run trains none (general.train_planner is "
                              "false, or the planner has no actions): set it to 0")
        self.tx = {s.group.name: optax.chain(optax.clip_by_global_norm(s.policy.grad_clip),
                                             optax.scale_by_adam(eps=ADAM_EPS))
                   for s in self.setups if s.trained}
        self.num_minibatches = {s.group.name: self._num_minibatches(s) for s in self.setups if s.trained}

    # ------------------------------------------------------------------ setup
    def _trained_envs(self, s: GroupSetup) -> int:
        """The economies whose steps train group ``s``: all but the
        ``random_planner_envs`` first ones for the planner, all for the agents."""
        return self.num_envs - (self.random_planner_envs if s.group.role == "planner" else 0)

    def _num_minibatches(self, s: GroupSetup) -> int:
        t, a = self.n_steps, self._trained_envs(s) * s.group.n
        samples = t * a
        k = max(1, round(samples / self.cfg.trainer.sgd_minibatch_size))
        units = (t // s.policy.model.max_seq_len) * a if s.network.recurrent else samples
        if units % k:
            what = "sequences" if s.network.recurrent else "samples"
            aside = self.num_envs - self._trained_envs(s)
            why = (f" (the {self._trained_envs(s)} economies left when 'trainer.random_planner_envs' sets "
                   f"{aside} aside)" if aside else "")
            raise ConfigError(
                f"'trainer.sgd_minibatch_size' ({self.cfg.trainer.sgd_minibatch_size}) splits group "
                f"{s.group.name!r}'s {samples} samples per update{why} into {k} minibatches, which does not "
                f"divide its {units} {what}; choose a size that gives a divisor of {units}"
            )
        return k

    @property
    def groups(self) -> tuple:
        """The adapter's ``PolicyGroup``s."""
        return self.adapter.groups

    def setup(self, name: str) -> GroupSetup:
        """The ``GroupSetup`` of group ``name`` (``KeyError`` listing the groups otherwise)."""
        for s in self.setups:
            if s.group.name == name:
                return s
        raise KeyError(f"no group {name!r}; groups: {[s.group.name for s in self.setups]}")

    def role_modes(self, agents: str = "sample", planner: str = "sample") -> dict:
        """``{group: mode}`` for ``act``: ``agents`` for every group of role
        ``"agents"``, ``planner`` for the planners (``ACT_MODES``)."""
        return {s.group.name: planner if s.group.role == "planner" else agents for s in self.setups}

    def init_policies(self, key) -> dict:
        """``{group: PolicyState}``: fresh network parameters and optimiser states."""
        obs, _ = jax.eval_shape(self.adapter.reset, jax.random.key(0))
        out = {}
        for s, k in zip(self.setups, jax.random.split(key, len(self.setups))):
            if not s.trained:
                continue
            feats = jax.tree.map(lambda x: jnp.zeros(x.shape[1:], x.dtype), obs[s.group.name].features)
            params = s.network.init(k, s.network.initial_carry(s.group.n), feats,
                                    _index(s.group, 1), jnp.zeros((s.group.n,), bool))
            out[s.group.name] = PolicyState(params, self.tx[s.group.name].init(params))
        return out

    def init_carry(self) -> dict:
        """``{group: zeros LSTM state [A, ...]}`` for the recurrent trained groups."""
        return {s.group.name: s.network.initial_carry(self.num_envs * s.group.n)
                for s in self.setups if s.trained and s.network.recurrent}

    def init(self, key) -> RunnerState:
        """The ``RunnerState`` before the first update, from one PRNG key."""
        k_pol, k_env, k_run = jax.random.split(key, 3)
        obs, env_state = self.adapter.reset(k_env)
        return RunnerState(
            policies=self.init_policies(k_pol), env_state=env_state, obs=obs,
            carry=self.init_carry(), first=jnp.ones((self.num_envs,), bool), key=k_run,
            env_steps=jnp.zeros((), jnp.int32), updates=jnp.zeros((), jnp.int32),
        )

    # ----------------------------------------------------------------- acting
    def group_act(self, s: GroupSetup, params, carry, gobs: GroupObs, first, key, mode: str):
        """One group's actions for a batch of economies.

        Args:
            s: the group's setup; params: its network parameters (ignored for
                ``"random"``/``"noop"`` or an untrained group).
            carry: its LSTM state ``[A, ...]`` (``{}`` if none); gobs:
                ``GroupObs [B, n, ...]``; first: bool ``[B]``; key: PRNG key.
            mode: one of ``ACT_MODES`` (an untrained group always acts at random).
        Returns:
            ``(carry, action int32 [B, n, H], log_prob [B, n], value [B, n])``
            (value 0 without a network).
        Raises:
            ValueError: an unknown ``mode``.
        """
        if mode not in ACT_MODES:
            raise ValueError(f"mode must be one of {ACT_MODES}, got {mode!r}")
        b, n = first.shape[0], s.group.n
        mask = _merge(gobs.mask)
        if s.trained and mode in ("sample", "greedy"):
            x, index = self._inputs(s, jax.tree.map(_merge, gobs.features), b)
            carry, logits, value = s.network.apply(params, carry, x, index, jnp.repeat(first, n))
        else:
            logits, value = jnp.zeros(mask.shape, jnp.float32), jnp.zeros(mask.shape[:1], jnp.float32)
        dist = MaskedCategorical.from_logits(logits, mask)
        if mode == "greedy":
            action = dist.mode()
        elif mode == "noop":
            action = jnp.zeros(mask.shape[:2], jnp.int32)
        else:
            action = dist.sample(key)
        split = lambda x: x.reshape((b, n) + x.shape[1:])  # noqa: E731
        return carry, split(action), split(dist.log_prob(action)), split(value)

    def _inputs(self, s: GroupSetup, features, batch: int):
        """A trained group's network inputs ``(x, index)`` from its features ``[batch * n, ...]``.

        ``"mlp"``: ``(networks.mlp_inputs(features, index) [batch * n, D], None)``,
        the flat input layer, which the rollout records in place of the
        observation; otherwise ``(features, one-hot index or None)``.
        """
        index = _index(s.group, batch)
        if s.network.recurrent:
            return features, index
        return mlp_inputs(features, index), None

    def _recorded_obs(self, obs: dict) -> dict:
        """What the trajectory keeps of ``obs`` for SGD: per trained group, its
        network inputs ``[B, n, ...]`` (``_inputs``) and its mask as bool."""
        out = {}
        for s in self.setups:
            if s.trained:
                g, n = s.group.name, s.group.n
                x, _ = self._inputs(s, jax.tree.map(_merge, obs[g].features), self.num_envs)
                split = lambda v: v.reshape((self.num_envs, n) + v.shape[1:])  # noqa: E731
                out[g] = GroupObs(jax.tree.map(split, x), obs[g].mask > 0)
        return out

    def act(self, policies: dict, carry: dict, obs: dict, first, key, modes: dict):
        """Every group's actions: ``(carry, actions {g: [B, n, H]}, log_probs, values)``.

        ``modes``: ``{group: mode}``; a group missing from ``policies`` acts at random.
        """
        keys = jax.random.split(key, len(self.setups))
        new_carry, actions, logps, values = {}, {}, {}, {}
        for s, k in zip(self.setups, keys):
            g = s.group.name
            params = policies[g].params if g in policies else None
            mode = modes[g] if params is not None or modes[g] == "noop" else "random"
            c, actions[g], logps[g], values[g] = self.group_act(
                s, params, carry.get(g, {}), obs[g], first, k, mode)
            if g in carry:
                new_carry[g] = c
        return new_carry, actions, logps, values

    # ----------------------------------------------------------------- update
    def rollout(self, runner: RunnerState, n_steps: int, modes: dict, record: bool = True):
        """``n_steps`` steps from ``runner`` under ``lax.scan``: ``(runner, trajectory)``.

        The trajectory (leading axis T) holds per group the actions, log-probs,
        values, rewards and LSTM state before each step and, per trained group,
        the observation as its network takes it (``_recorded_obs``: an MLP's
        flat input layer, a bool mask) (``record``), and for every step
        ``first``, ``done`` and the adapter's episode ``info``.
        """

        def step(r: RunnerState, _):
            key, k_act, k_env = jax.random.split(r.key, 3)
            carry, actions, logps, values = self.act(r.policies, r.carry, r.obs, r.first, k_act, modes)
            if self.random_planner_envs:
                actions = self._random_planner_share(r, actions, k_act)
            obs, env_state, reward, done, info = self.adapter.step(k_env, r.env_state, actions)
            out = {"first": r.first, "done": done, "info": info, "reward": reward}
            if record:
                out.update(obs=self._recorded_obs(r.obs), carry=r.carry, action=actions, log_prob=logps,
                           value=values)
            r = r.replace(env_state=env_state, obs=obs, carry=carry, first=done, key=key,
                          env_steps=r.env_steps + self.num_envs)
            return r, out

        return jax.lax.scan(step, runner, None, length=n_steps)

    def _random_planner_share(self, r: RunnerState, actions: dict, key) -> dict:
        """``actions`` with the planner's replaced by uniformly random valid ones
        in the first ``random_planner_envs`` economies (``TrainerConfig``)."""
        out = dict(actions)
        for s in self.setups:
            if s.trained and s.group.role == "planner":
                g = s.group.name
                _, rand, _, _ = self.group_act(s, None, {}, r.obs[g], r.first, jax.random.fold_in(key, 1), "random")
                share = (jnp.arange(self.num_envs) < self.random_planner_envs)[:, None, None]
                out[g] = jnp.where(share, rand, actions[g])
        return out

    def _batch(self, s: GroupSetup, traj, last_value):
        """One group's training batch ``[T, A, ...]`` with advantages and targets
        (the planner's without the ``random_planner_envs`` economies)."""
        g, n = s.group.name, s.group.n
        skip = self.num_envs - self._trained_envs(s)
        if skip:
            keep = lambda x: x[:, skip:]  # noqa: E731 - [T, B, ...]: by economy
            traj = {**traj, "done": keep(traj["done"]), "first": keep(traj["first"]),
                    **{k: {**traj[k], g: jax.tree.map(keep, traj[k][g])}
                       for k in ("reward", "value", "obs", "action", "log_prob") if g in traj[k]}}
            if g in traj["carry"]:  # [T, B x n, ...], economy-major
                traj["carry"] = {**traj["carry"], g: jax.tree.map(lambda x: x[:, skip * n:], traj["carry"][g])}
            last_value = last_value[skip * n:]
        p = s.policy
        m = lambda x: x.reshape(x.shape[:1] + (x.shape[1] * x.shape[2],) + x.shape[3:])  # noqa: E731
        rewards = m(traj["reward"][g]) * p.reward_scale
        values = m(traj["value"][g])
        dones = jnp.repeat(traj["done"], n, axis=1)
        adv, targets = gae(rewards, values, dones, last_value, p.gamma, p.lambda_)
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
        t = rewards.shape[0]
        batch = {
            "features": jax.tree.map(m, traj["obs"][g].features),
            "mask": m(traj["obs"][g].mask),
            "first": jnp.repeat(traj["first"], n, axis=1),
            "action": m(traj["action"][g]),
            "log_prob": m(traj["log_prob"][g]),
            "value": values,
            "advantage": adv,
            "target": targets,
        }
        if s.network.recurrent and n > 1:  # an MLP's recorded input holds the index
            envs = self._trained_envs(s)
            batch["index"] = jnp.broadcast_to(_index(s.group, envs)[None], (t, envs * n, n))
        if s.network.recurrent:
            batch["carry"] = traj["carry"][g]
        return batch

    def _minibatch_indices(self, s: GroupSetup, key):
        """A feed-forward group's shuffled samples: int32 ``[k, T * A / k]``, row i the
        indices into the ``[T * A]``-flattened batch of minibatch i."""
        k = self.num_minibatches[s.group.name]
        size = self.n_steps * self._trained_envs(s) * s.group.n
        return jax.random.permutation(key, size).reshape(k, size // k)

    def _minibatches(self, s: GroupSetup, batch, key):
        """A recurrent group's shuffled minibatches of sequences, with a leading minibatch axis."""
        k = self.num_minibatches[s.group.name]
        seq = s.policy.model.max_seq_len
        carry = batch.pop("carry")
        t, a = batch["value"].shape[:2]
        # [T, A, ...] -> [L, S, ...]: sequence j*A + i is steps j*L..(j+1)*L-1 of actor i
        to_seq = lambda x: jnp.moveaxis(x.reshape((t // seq, seq) + x.shape[1:]), 1, 0).reshape(  # noqa: E731
            (seq, (t // seq) * a) + x.shape[2:])
        seqs = jax.tree.map(to_seq, batch)
        starts = jax.tree.map(lambda c: c[::seq].reshape(((t // seq) * a,) + c.shape[2:]), carry)
        n_seq = (t // seq) * a
        perm = jax.random.permutation(key, n_seq)
        seqs = jax.tree.map(lambda x: jnp.moveaxis(
            x[:, perm].reshape((seq, k, n_seq // k) + x.shape[2:]), 1, 0), seqs)
        starts = jax.tree.map(lambda c: c[perm].reshape((k, n_seq // k) + c.shape[1:]), starts)
        return {**seqs, "carry": starts}

    def _apply_batch(self, s: GroupSetup, params, mb):
        """Logits and values of a minibatch (a recurrent policy replays its
        ``[L, S]`` sequences from their stored states in one call)."""
        _, logits, value = s.network.apply(params, mb.get("carry", {}), mb["features"], mb.get("index"),
                                           mb["first"])
        return logits, value

    def _sgd(self, s: GroupSetup, ps: PolicyState, batch, key, lr, entropy_coeff):
        """``num_sgd_iter`` epochs of minibatch SGD; ``(PolicyState, mean aux)``."""
        p = s.policy
        tx = self.tx[s.group.name]

        def loss_fn(params, mb):
            logits, value = self._apply_batch(s, params, mb)
            dist = MaskedCategorical.from_logits(logits, mb["mask"])
            entropy = dist.entropy()
            total, aux = ppo_loss(dist.log_prob(mb["action"]), entropy, value, mb["log_prob"],
                                  mb["value"], mb["advantage"], mb["target"], clip_param=p.clip_param,
                                  vf_clip_param=p.vf_clip_param, vf_loss_coeff=p.vf_loss_coeff,
                                  entropy_coeff=entropy_coeff)
            # the reported entropy: over the samples with a choice (the planner has
            # one only on the first step of each tax period)
            choice = (jnp.sum(mb["mask"] > 0, axis=-1) > 1).any(axis=-1)
            aux["entropy"] = jnp.sum(jnp.where(choice, entropy, 0.0)) / jnp.maximum(choice.sum(), 1)
            return total, aux

        def mb_step(ps: PolicyState, mb):
            if self.shard_minibatch is not None:
                mb = self.shard_minibatch(mb, s.network.recurrent)
            (total, aux), grads = jax.value_and_grad(loss_fn, has_aux=True)(ps.params, mb)
            updates, opt_state = tx.update(grads, ps.opt_state, ps.params)
            updates = jax.tree.map(lambda u: -lr * u, updates)
            aux = {**aux, "total_loss": total, "grad_norm": optax.tree.norm(grads)}
            return PolicyState(optax.apply_updates(ps.params, updates), opt_state), aux

        def epoch(ps, k):
            if s.network.recurrent:
                return jax.lax.scan(mb_step, ps, self._minibatches(s, dict(batch), k))
            # each step gathers its own rows: no shuffled copy of the whole batch
            flat = jax.tree.map(lambda x: x.reshape((-1,) + x.shape[2:]), batch)

            def gathered_step(ps, idx):
                mb = jax.tree.map(lambda x: x.at[idx].get(mode="promise_in_bounds", unique_indices=True),
                                  flat)
                return mb_step(ps, mb)

            return jax.lax.scan(gathered_step, ps, self._minibatch_indices(s, k))

        ps, aux = jax.lax.scan(epoch, ps, jax.random.split(key, self.cfg.trainer.num_sgd_iter))
        return ps, jax.tree.map(jnp.mean, aux)

    def update(self, runner: RunnerState):
        """One PPO update (rollout, GAE, SGD; module docstring): ``(runner, metrics)``.

        ``metrics`` is a flat dict of float32 [] (see ``metric_names``).
        """
        start_steps = runner.env_steps
        modes = {s.group.name: "sample" for s in self.setups}
        runner, traj = self.rollout(runner, self.n_steps, modes)
        key, k_sgd = jax.random.split(runner.key)
        runner = runner.replace(key=key)
        metrics = self._episode_metrics(traj)
        policies = dict(runner.policies)
        for s, k in zip(self.setups, jax.random.split(k_sgd, len(self.setups))):
            g = s.group.name
            metrics[f"{g}/reward_mean"] = jnp.mean(traj["reward"][g])
            if not s.trained:
                continue
            _, _, _, last_value = self.group_act(s, policies[g].params, runner.carry.get(g, {}),
                                                 runner.obs[g], runner.first, k, "greedy")
            batch = self._batch(s, traj, _merge(last_value))
            lr = piecewise_schedule(s.policy.lr_schedule, s.policy.lr, start_steps)
            ent = piecewise_schedule(s.policy.entropy_coeff_schedule, s.policy.entropy_coeff, start_steps)
            policies[g], aux = self._sgd(s, policies[g], batch, k, lr, ent)
            metrics.update({f"{g}/{name}": v for name, v in aux.items()})
            metrics[f"{g}/lr"] = lr
            metrics[f"{g}/entropy_coeff"] = ent
        metrics["env_steps"] = runner.env_steps.astype(jnp.float32)
        return runner.replace(policies=policies, updates=runner.updates + 1), metrics

    def _episode_metrics(self, traj) -> dict:
        """Means over the episodes that finished during the rollout (NaN if none),
        in the economies run by the planner's policy (not the ``random_planner_envs``)."""
        skip = self.random_planner_envs
        info = jax.tree.map(lambda x: x[:, skip:], traj["info"]) if skip else traj["info"]
        fin = info["returned_episode"].astype(jnp.float32)  # [T, B]
        count = fin.sum()
        mean = lambda x: jnp.where(count > 0, (x * fin).sum() / jnp.maximum(count, 1), jnp.nan)  # noqa: E731
        out = {"episodes": count}
        for g, r in info["returned_episode_returns"].items():
            out[f"{g}/episode_return"] = mean(r.mean(axis=-1))
        for k, v in info["episode_metrics"].items():
            out[f"episode/{k}"] = mean(v)
        return out

    def metric_names(self) -> list:
        """The keys of ``update``'s metrics, in a fixed order (``jax.eval_shape``, no compute)."""
        runner = jax.eval_shape(self.init, jax.random.key(0))
        return list(jax.eval_shape(self.update, runner)[1])
