"""Evaluate trained policies: whole episodes of fresh economies, compiled once per economy.

``evaluate(run_dir)`` loads a training run's latest checkpoint
(``checkpoint``) and runs whole episodes of ``num_envs`` economies for each
row of the table:

- agents' policy (the planner as trained: the learned one in phase 2, none
  in a phase-1 economy without taxes): ``trained (sampled)`` (actions drawn
  from the policy), ``trained (greedy)`` (its most probable action),
  ``random`` (uniform over valid actions) and ``no-op`` (Foundation's NO-OP,
  action 0, every step);
- with ``schedules`` (default for a checkpoint that trained the planner): the
  trained agents (sampled) under each fixed tax schedule of the
  PeriodicBracketTax component: ``free market`` (``disable_taxes``), ``US
  federal`` (``tax_model: us-federal-single-filer-2018-scaled``) and ``Saez``
  (``tax_model: saez``, after enough warm-up episodes to fill its income
  buffer, which persists across episodes as in Foundation), beside the learned
  planner. (These agents trained beside the learned planner; the planner
  comparison of ``comparison`` evaluates each planner with the agents trained
  under it.)

The evaluation economy is the checkpoint's with its warm-ups finished: full
labor cost (``energy_warmup_constant: 0``) and the final maximum tax rate
(no ``tax_annealing_schedule``), ``evaluation_env_config``. Each row reports
means and standard errors over ``num_envs x episodes`` episodes of the
agents' return (per agent, mean over agents), productivity, equality,
equality x productivity (the planner's objective,
``coin_eq_times_productivity``), the inverse-income-weighted utility, tax
revenue and the planner's return.

Compilation: every row runs on its economy's ``shared_economy_config``: the
economy with PeriodicBracketTax's tax models all compiled in
(``tax_model_in_params``), the row's own tax model, rates and limits given as
its ``EnvParams`` (``row_env_params``), under which it steps exactly as the
economy built with that tax model. ``episode_runner(cfg, env_cfg, num_envs)``
is cached per shared economy, network settings and batch size, and its
``EpisodeRunner`` compiles one episode function whose arguments are the env
params, the policies' parameters and every group's acting mode (an int32
index into ``ppo.ACT_MODES``, selected with ``lax.switch`` inside the scan).
The phase-1 agents, the four planners and their agents, over every seed and
training run, therefore share one compiled program, and JAX's persistent
compilation cache (on as for the trainer) keeps it for the next process.
The actions are
``PPO.group_act``'s, step for step and key for key, so a row equals what
``PPO.rollout`` with that mode would give.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import time
from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

import jaxecon
from jaxecon.components.periodic_bracket_tax import TAX_MODELS
from jaxecon.components.saez import SAEZ_BUFFER_SIZE
from jaxecon.compile_notice import CompileNotice
from jaxecon.training import checkpoint as ckpt
from jaxecon.training.config import TrainConfig, TrainerConfig, config_from_dict
from jaxecon.training.curriculum import tax_component_kwargs
from jaxecon.training.ppo import ACT_MODES, PPO
from jaxecon.wrappers.base import replace_inner_state, unwrap_state

__all__ = ["AGENT_ROWS", "BRIEF_METRICS", "COLUMNS", "SCHEDULES", "EpisodeRunner", "brief", "episode_runner",
           "evaluate", "evaluation_env_config", "format_table", "restore_policies", "row_env_params", "run_rows",
           "saez_warmup_episodes", "shared_economy_config", "shown", "summarize_samples"]

TAX = "PeriodicBracketTax"

#: The saved path of the saez tax model's memory inside a runner's economies
#: (``checkpoint.restore_subtree``).
SAEZ_MARKER = f".components['{TAX}'].saez"

#: (row label, agents' mode) of the policy comparison.
AGENT_ROWS = (("trained (sampled)", "sample"), ("trained (greedy)", "greedy"),
              ("random", "random"), ("no-op", "noop"))

#: Fixed tax schedules: row label -> PeriodicBracketTax kwargs.
SCHEDULES = {
    "free market": {"disable_taxes": True},
    "US federal": {"tax_model": "us-federal-single-filer-2018-scaled"},
    "Saez": {"tax_model": "saez"},
}

#: (name, metric key, unit) of a row's one-line summary (``brief``); equality in %.
BRIEF_METRICS = (
    ("equality x productivity", "episode/social_welfare/coin_eq_times_productivity", "coin"),
    ("productivity", "episode/social/productivity", "coin"),
    ("equality", "episode/social/equality", "%"),
)

#: (column title, key of a row's ``metrics``).
COLUMNS = (
    ("agent return", "a/episode_return"),
    ("productivity", "episode/social/productivity"),
    ("equality", "episode/social/equality"),
    ("eq x prod", "episode/social_welfare/coin_eq_times_productivity"),
    ("inv-income utility", "episode/social_welfare/inv_income_weighted_utility"),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes"),
    ("planner return", "p/episode_return"),
)


def evaluation_env_config(env: dict, schedule: Optional[dict] = None) -> dict:
    """``env`` with its warm-ups finished and, optionally, a fixed tax schedule.

    Sets ``energy_warmup_constant: 0`` and removes ``tax_annealing_schedule``;
    ``schedule`` (``SCHEDULES`` values) updates the PeriodicBracketTax kwargs.

    Raises:
        ValueError: a ``schedule`` for an economy without PeriodicBracketTax.
    """
    env = copy.deepcopy(env)
    env["energy_warmup_constant"] = 0
    tax = tax_component_kwargs(env)
    if tax is not None:
        tax.pop("tax_annealing_schedule", None)
        if schedule is not None:
            tax.update(schedule)
            if schedule.get("tax_model", "model_wrapper") != "model_wrapper":
                tax["disable_taxes"] = False
    elif schedule is not None:
        raise ValueError("a tax schedule needs a PeriodicBracketTax component in the economy")
    return env


def shared_economy_config(env_cfg: dict) -> dict:
    """The economy that runs ``env_cfg``'s episodes: with a PeriodicBracketTax, the
    same economy with every tax model compiled in (``tax_model="model_wrapper"``,
    ``disable_taxes`` False, ``tax_model_in_params``; ``row_env_params`` selects
    ``env_cfg``'s model), so that economies that differ only in their tax model
    share one compiled program; a copy of ``env_cfg`` otherwise."""
    shared = copy.deepcopy(env_cfg)
    tax = tax_component_kwargs(shared)
    if tax is not None and not tax.get("tax_model_in_params", False):
        tax.update(disable_taxes=False, tax_model="model_wrapper", tax_model_in_params=True)
        tax.pop("fixed_bracket_rates", None)
    return shared


def saez_warmup_episodes(env_cfg: dict) -> int:
    """Episodes that fill the saez income buffer of an economy (0 unless its tax model is saez).

    Each tax period adds ``n_agents`` (income, rate) entries; the buffer holds
    ``SAEZ_BUFFER_SIZE``; until it is full the saez rates are random.
    """
    tax = tax_component_kwargs(copy.deepcopy(env_cfg))
    if tax is None or tax.get("disable_taxes", False) or tax.get("tax_model") != "saez":
        return 0
    env = jaxecon.make_from_config(env_cfg)
    period = env.get_component("PeriodicBracketTax").period
    per_episode = env.n_agents * max(1, env.episode_length // period)
    return math.ceil(SAEZ_BUFFER_SIZE / per_episode)


@struct.dataclass
class EvalState:
    """An evaluation's carried state between episodes (``B`` = num_envs).

    Attributes:
        env_state: the adapter's batched env state (with Foundation's
            carry-over: completions, the saez buffer).
        obs: ``{group: GroupObs}`` ``[B, n, ...]``.
        carry: ``{group: LSTM state}`` (``{}`` for feed-forward policies).
        first: bool ``[B]``.
        key: PRNG key.
    """

    env_state: Any
    obs: dict
    carry: dict
    first: jax.Array
    key: jax.Array


class EpisodeRunner:
    """One economy's evaluation episode, compiled once for every policy and mode.

    Args:
        cfg: the training config whose networks act (``agent_policy``,
            ``planner_policy``, ``general.train_planner``).
        env: the economy: a jaxecon env (``episode_runner`` builds it from
            ``evaluation_env_config(cfg.env)``), or any env ``PPO`` accepts.
        num_envs: economies per episode batch.
        episode_length: steps per episode (default ``env.episode_length``; an
            episode must end on its last step, as Foundation's do).

    ``groups`` lists the economy's agent groups and ``trained`` those with a
    network (whose parameters ``run`` takes). ``compile_s`` is the compile
    time once compiled (None before).
    """

    def __init__(self, cfg: TrainConfig, env, num_envs: int, episode_length: Optional[int] = None):
        self.episode_length = int(env.episode_length if episode_length is None else episode_length)
        self.num_envs = int(num_envs)
        # one rollout of an episode per "update"; no SGD here, so one minibatch of any size
        ecfg = cfg.replace(trainer=TrainerConfig(num_envs=self.num_envs, rollout_fragment_length=self.episode_length,
                                                 sgd_minibatch_size=2**62))
        self.ppo = PPO(ecfg, env)
        self.groups = tuple(s.group.name for s in self.ppo.setups)
        self.trained = tuple(s.group.name for s in self.ppo.setups if s.trained)
        self._start = self._compiled = self._policy_shapes = None
        self._start_saez = None
        self.compile_s = None

    @property
    def default_env_params(self):
        """The economy's ``EnvParams`` (None for an env without them)."""
        return getattr(self.ppo.adapter, "params", None)

    def _env_kwargs(self, env_params) -> dict:
        return {} if env_params is None else {"params": env_params}

    def _start_fn(self, key, env_params, saez=None) -> EvalState:
        # the keys of PPO.init: the same seed gives the economies and actions of ppo.init(key)
        _, k_env, k_run = jax.random.split(key, 3)
        adapter, kw = self.ppo.adapter, self._env_kwargs(env_params)
        obs, env_state = adapter.reset(k_env, **kw)
        if saez is not None:  # continue the saez memory of a trained run's economies
            inner = unwrap_state(env_state)
            tax = inner.components[TAX].replace(saez=saez)
            inner = inner.replace(components={**inner.components, TAX: tax})
            obs, env_state = adapter.reset(k_env, prev_state=replace_inner_state(env_state, inner), **kw)
        return EvalState(env_state, obs, self.ppo.init_carry(), jnp.ones((self.num_envs,), bool), k_run)

    def saez_template(self):
        """The ``ShapeDtypeStruct``s of one economy's saez memory (``SaezState``), or None
        when the economy's tax model is not saez."""
        state = jax.eval_shape(self.ppo.adapter.reset, jax.random.key(0))[1]
        saez = getattr(unwrap_state(state).components.get(TAX), "saez", None)
        return None if saez is None else jax.tree.map(
            lambda x: jax.ShapeDtypeStruct(x.shape[1:], x.dtype), saez)

    def _act(self, params: dict, modes: dict, st: EvalState, key):
        """PPO.act with traced modes: per group, ``lax.switch`` over ``ACT_MODES``."""
        ppo = self.ppo
        keys = jax.random.split(key, len(ppo.setups))
        carry, actions = {}, {}
        for s, k in zip(ppo.setups, keys):
            g = s.group.name

            def branch(mode, p, c, o, first, k_, s=s):
                c, a, _, _ = ppo.group_act(s, p, c, o, first, k_, mode)
                return c, a

            c, actions[g] = jax.lax.switch(modes[g], [functools.partial(branch, m) for m in ACT_MODES],
                                           params.get(g), st.carry.get(g, {}), st.obs[g], st.first, k)
            if g in st.carry:
                carry[g] = c
        return carry, actions

    def _episode_fn(self, params: dict, modes: dict, st: EvalState, env_params):
        kw = self._env_kwargs(env_params)

        def step(st: EvalState, _):
            key, k_act, k_env = jax.random.split(st.key, 3)
            carry, actions = self._act(params, modes, st, k_act)
            obs, env_state, _, done, info = self.ppo.adapter.step(k_env, st.env_state, actions, **kw)
            return EvalState(env_state, obs, carry, done, key), info

        st, info = jax.lax.scan(step, st, None, length=self.episode_length)
        last = jax.tree.map(lambda x: x[-1], info)  # the episode ended on the last step
        out = {f"{g}/episode_return": r.mean(axis=-1) for g, r in last["returned_episode_returns"].items()}
        out.update({f"episode/{k}": v for k, v in last["episode_metrics"].items()})
        return st, out

    def policy_shapes(self) -> "_PolicyShapes":
        """The ``_PolicyShapes`` of this runner's networks (traced once)."""
        if self._policy_shapes is None:
            self._policy_shapes = _PolicyShapes(self.ppo)
        return self._policy_shapes

    def _zero_params(self, group: str):
        """Zeros shaped as ``group``'s network parameters (for a group that acts at random)."""
        return jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), self.policy_shapes().shapes[group].params)

    def compile(self, params: dict, log: Optional[Callable] = None, economy: str = "",
                saez: bool = False) -> float:
        """Compile the reset (continuing a saez memory when ``saez``) and the episode
        for these parameters' shapes (once each; later calls return at once).

        Returns the compile time in seconds (0 when already compiled).
        """
        if self._compiled is not None and (self._start_saez if saez else self._start) is not None:
            return 0.0
        what = (("the saez reset and " if saez else "the reset and ") if self._compiled is None else
                ("the saez reset of " if saez else "the reset of "))
        what += f"the evaluation episode{' of ' + economy if economy else ''} " \
                f"({self.num_envs} economies x {self.episode_length} steps)"
        with CompileNotice(what, log) as notice:
            key, env_params = jax.random.key(0), self.default_env_params
            if saez:
                template = jax.tree.map(lambda x: jax.ShapeDtypeStruct((self.num_envs,) + x.shape, x.dtype),
                                        self.saez_template())
                self._start_saez = jax.jit(self._start_fn).lower(key, env_params, template).compile()
            else:
                self._start = jax.jit(self._start_fn).lower(key, env_params).compile()
            if self._compiled is None:
                st = jax.eval_shape(self._start_fn, key, env_params)
                modes = {g: jnp.zeros((), jnp.int32) for g in self.groups}
                self._compiled = jax.jit(self._episode_fn).lower(params, modes, st, env_params).compile()
        self.compile_s = (self.compile_s or 0.0) + notice.seconds
        return notice.seconds

    def run(self, params: dict, modes: dict, *, seed: int, episodes: int, warmup: int = 0,
            log: Optional[Callable] = None, economy: str = "", saez=None, env_params=None) -> dict:
        """``warmup`` + ``episodes`` episodes from fresh economies; the last ``episodes`` measured.

        Args:
            params: ``{group: network parameters}`` of ``trained`` groups; a
                trained group without parameters here acts at random, as an
                untrained one (e.g. the planner of a run that did not train it).
            modes: ``{group: mode}`` (``ACT_MODES``); a missing group samples.
                A group without a network acts at random.
            seed: the evaluation's PRNG seed (economies and actions).
            episodes, warmup: measured and warm-up episodes (the economies'
                carry-over, e.g. the saez buffer, continues across them).
            log, economy: where to report compiling, and the economy's name in it.
            saez: the saez tax model's memory (``SaezState`` arrays with a
                leading economy axis, e.g. ``checkpoint.restore_subtree`` of a
                trained run) that the economies continue, as after that run's
                last episode (economy i takes row i modulo their number); None:
                fresh economies.
            env_params: the economy's ``EnvParams`` (``row_env_params``);
                None: ``default_env_params``.
        Returns:
            ``{metric key: float64 [episodes * num_envs]}``: per measured
            episode the agents' mean return (``a/episode_return``), the
            planner's (``p/episode_return``, when it acts) and
            ``episode/<metric>`` for the logged metrics.
        Raises:
            KeyError: ``params`` names a group that is not trained;
                ValueError: a mode not in ``ACT_MODES``.
        """
        unknown = [g for g in params if g not in self.trained]
        if unknown:
            raise KeyError(f"params holds the trained groups {list(self.trained)}; got also {unknown}")
        bad = {g: m for g, m in modes.items() if m not in ACT_MODES}
        if bad:
            raise ValueError(f"modes must be in {ACT_MODES}, got {bad}")
        given = set(params)
        params = {g: params[g] if g in given else self._zero_params(g) for g in self.trained}
        self.compile(params, log, economy, saez=saez is not None)
        idx = {}
        for g in self.groups:
            mode = modes.get(g, "sample")
            if g not in given and mode != "noop":
                mode = "random"  # as PPO.act: a group without a network acts at random
            idx[g] = jnp.asarray(ACT_MODES.index(mode), jnp.int32)
        env_params = self.default_env_params if env_params is None else env_params
        if saez is None:
            st = self._start(jax.random.key(seed), env_params)
        else:
            rows = np.arange(self.num_envs) % len(jax.tree.leaves(saez)[0])
            st = self._start_saez(jax.random.key(seed), env_params,
                                  jax.tree.map(lambda x: jnp.asarray(x[rows]), saez))
        samples = {}
        for ep in range(warmup + episodes):
            st, out = self._compiled(params, idx, st, env_params)
            if ep >= warmup:
                for k, v in jax.device_get(out).items():
                    samples.setdefault(k, []).append(np.asarray(v, np.float64))
        return {k: np.concatenate(v) for k, v in samples.items()}


def _runner_key(cfg: TrainConfig, env_cfg: dict, num_envs: int) -> str:
    nets = {name: {k: v for k, v in cfg.to_dict()[name].items() if k in ("model", "vf_share_layers")}
            for name in ("agent_policy", "planner_policy")}
    return json.dumps({"env": env_cfg, "nets": nets, "train_planner": cfg.general.train_planner,
                       "num_envs": int(num_envs)}, sort_keys=True, default=str)


_RUNNERS: dict = {}


def episode_runner(cfg: TrainConfig, env_cfg: dict, num_envs: int) -> EpisodeRunner:
    """The ``EpisodeRunner`` that runs the episodes of ``env_cfg`` (a Foundation env
    config) with ``cfg``'s networks: the runner of its ``shared_economy_config``,
    networks and batch size, built once per process (pass it
    ``row_env_params(runner, env_cfg)``).

    With a PeriodicBracketTax the planner always has a network slot (a run that
    did not train one leaves it to act at random). Two training runs whose
    configs differ only in what does not act (seed, learning rates, run
    length, the tax model, ...) share the runner, and so its compiled episode.
    """
    shared = shared_economy_config(env_cfg)
    if tax_component_kwargs(shared) is not None and not cfg.general.train_planner:
        cfg = cfg.replace(general=dataclasses.replace(cfg.general, train_planner=True))
    key = _runner_key(cfg, shared, num_envs)
    if key not in _RUNNERS:
        _RUNNERS[key] = EpisodeRunner(cfg, jaxecon.make_from_config(shared), num_envs)
    return _RUNNERS[key]


_ROW_PARAMS: dict = {}


def row_env_params(runner: EpisodeRunner, env_cfg: dict):
    """The ``EnvParams`` under which ``runner``'s shared economy steps as ``env_cfg``'s
    own economy: its parameters, with its tax model as ``tax_model_index`` (the
    free market of ``disable_taxes`` as fixed rates of zero, as it is).
    ``runner.default_env_params`` for an economy without PeriodicBracketTax.

    Raises:
        ValueError: ``env_cfg`` is not an economy of ``runner`` (its parameters
            have other shapes).
    """
    shared = runner.default_env_params
    if shared is None or tax_component_kwargs(copy.deepcopy(env_cfg)) is None:
        return shared
    key = (id(runner), json.dumps(env_cfg, sort_keys=True, default=str))
    if key not in _ROW_PARAMS:
        own_env = jaxecon.make_from_config(env_cfg)
        own, comp = own_env.default_params, own_env.get_component(TAX)
        model = "fixed-bracket-rates" if comp.disable_taxes else comp.tax_model
        tax = own.components[TAX].replace(disc_rates=shared.components[TAX].disc_rates,
                                          tax_model_index=np.int32(TAX_MODELS.index(model)))
        params = own.replace(components={**own.components, TAX: tax})
        shapes = [jax.tree.map(lambda x: (np.shape(x), jnp.result_type(x)), p) for p in (params, shared)]
        if shapes[0] != shapes[1]:
            raise ValueError(f"env_cfg is not an economy of this runner: its parameters differ in shape "
                             f"({shapes[0]} against {shapes[1]})")
        _ROW_PARAMS[key] = params
    return _ROW_PARAMS[key]


class _PolicyShapes:
    """What ``checkpoint.restore_agent_policy`` reads of a ``PPO`` (its config, its
    setups and the shapes of ``init_policies``), with the shapes traced once:
    ``PPO.init_policies`` traces an env reset, which would otherwise be traced
    again for every run and group restored."""

    def __init__(self, ppo: PPO):
        self.cfg, self.setup = ppo.cfg, ppo.setup
        self.shapes = jax.eval_shape(ppo.init_policies, jax.random.key(0))
        self.init_policies = lambda _key: jax.tree.map(lambda s: jnp.zeros(s.shape, s.dtype), self.shapes)


def restore_policies(run_dir, runner: EpisodeRunner) -> dict:
    """``{group: params}`` of the ``runner.trained`` groups that a run's latest
    checkpoint holds (``checkpoint.restore_agent_policy``, which checks the
    networks); a group the run did not train (the planner of a phase-1 or a
    fixed-schedule run) is left out and acts at random in ``EpisodeRunner.run``.

    Raises:
        FileNotFoundError: no checkpoint; ConfigError: the checkpoint's
            networks differ from the runner's.
    """
    saved = ckpt.policy_groups(run_dir)
    return {g: ckpt.restore_agent_policy(run_dir, runner.policy_shapes(), g) for g in runner.trained if g in saved}


def summarize_samples(samples: dict) -> tuple:
    """``(means, standard errors)``: dicts of floats over each metric's episodes (s.e. NaN for one)."""
    means, errs = {}, {}
    for k, v in samples.items():
        means[k] = float(v.mean())
        errs[k] = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else math.nan
    return means, errs


def run_rows(cfg, policies, rows, *, num_envs: int, episodes: int, seed: int,
             log: Optional[Callable] = None) -> list:
    """Run ``rows`` = ``[(label, env config, {group: mode}, warm-up episodes)]``.

    ``policies``: ``{group: params or PolicyState}`` of the trained policies.
    Rows with the same economy share one compiled episode (``episode_runner``).

    Returns ``[{"label", "episodes", "metrics": {key: mean}, "stderr": {key: s.e.}}]``.
    """
    params = {g: getattr(p, "params", p) for g, p in policies.items()}
    out = []
    for label, env_cfg, modes, warmup in rows:
        runner = episode_runner(cfg, env_cfg, num_envs)
        t = time.perf_counter()
        samples = runner.run({g: params[g] for g in runner.trained if g in params}, modes, seed=seed,
                             episodes=episodes, warmup=warmup, log=log, economy=f"the {label!r} row's economy",
                             env_params=row_env_params(runner, env_cfg))
        means, errs = summarize_samples(samples)
        out.append({"label": label, "episodes": num_envs * episodes, "metrics": means, "stderr": errs})
        if log is not None:
            log(f"  {label}: {brief(means)} ({time.perf_counter() - t:.1f} s)")
    return out


def shown(value) -> float:
    """``value`` as printed: 0.0 within 1e-6 of zero, where a metric's float32
    rounding of an exact 0 (1 - Gini when one agent owns all the coin) would
    print as ``-2.98e-08``; else ``float(value)``."""
    value = float(value)
    return 0.0 if abs(value) < 1e-6 else value


def brief(means: dict) -> str:
    """A row's one-line summary, e.g. ``equality x productivity 90.03,
    productivity 662.1, equality 54.39%`` (the ``BRIEF_METRICS`` present in
    ``means``, metric key -> mean; values ``shown``)."""
    out = []
    for name, key, unit in BRIEF_METRICS:
        if key in means:
            v = shown(means[key]) * (100 if unit == "%" else 1)
            out.append(f"{name} {v:.4g}{'%' if unit == '%' else ''}")
    return ", ".join(out)


def evaluate(run_dir, *, num_envs: int = 32, episodes: int = 1, seed: int = 1000,
             schedules: Optional[bool] = None, log: Optional[Callable] = None) -> dict:
    """The evaluation table's rows for a training run's latest checkpoint.

    Args:
        run_dir: a run directory or its ``checkpoints/``.
        num_envs, episodes: economies and measured episodes per row.
        seed: the evaluation's PRNG seed (the policies' and economies' randomness).
        schedules: add the fixed-schedule rows (default: when the checkpoint
            trained the planner).
        log: called with a line of progress text (compiling, each row), e.g. ``print``.
    Returns:
        ``{"config": TrainConfig, "step": int, "seed", "rows": [...]}`` (rows as
        ``run_rows``).
    Raises:
        FileNotFoundError: no checkpoint.
    """
    cfg = config_from_dict(ckpt.read_config(run_dir))
    step = ckpt.latest_step(ckpt.resolve(run_dir))
    base = evaluation_env_config(cfg.env)
    runner = episode_runner(cfg, base, num_envs)
    policies = restore_policies(run_dir, runner)
    # the planner as trained: in the agents' mode when it samples or is greedy, else sampled
    rows = [(label, base, runner.ppo.role_modes(agents=mode, planner=mode if mode in ("sample", "greedy")
                                                else "sample"), 0)
            for label, mode in AGENT_ROWS]
    if schedules is None:
        schedules = cfg.general.train_planner
    if schedules:
        for label, kwargs in SCHEDULES.items():
            env_cfg = evaluation_env_config(cfg.env, kwargs)
            rows.append((label, env_cfg, runner.ppo.role_modes(), saez_warmup_episodes(env_cfg)))
    return {"config": cfg, "step": step, "seed": seed,
            "rows": run_rows(cfg, policies, rows, num_envs=num_envs, episodes=episodes, seed=seed, log=log)}


def format_table(rows: list) -> str:
    """The rows as a text table: ``mean +- standard error`` per column ('-' where absent).

    Besides ``COLUMNS``, every other agent group's return (an economy's
    mobile-agent types or planners, ``"<group>/episode_return"``) gets a
    column ``"<group> return"`` after the agents'.
    """
    known = {k for _, k in COLUMNS}
    others = sorted({k for r in rows for k in r["metrics"] if k.endswith("/episode_return") and k not in known})
    columns = COLUMNS[:1] + tuple((f"{k.split('/')[0]} return", k) for k in others) + COLUMNS[1:]
    present = [(t, k) for t, k in columns if any(k in r["metrics"] for r in rows)]
    head = ["policy"] + [t for t, _ in present] + ["episodes"]
    body = []
    for r in rows:
        line = [r["label"]]
        for _, k in present:
            if k not in r["metrics"]:
                line.append("-")
                continue
            m, e = shown(r["metrics"][k]), r["stderr"].get(k, math.nan)
            line.append(f"{m:.4g} +- {e:.2g}" if math.isfinite(e) else f"{m:.4g}")
        line.append(str(r["episodes"]))
        body.append(line)
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths)))]
    for b in body:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(b, widths))))
    return "\n".join(lines)
