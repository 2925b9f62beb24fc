"""The training config: dataclasses, YAML loading and validation.

A config file has the sections and keys of the AI Economist's RLlib configs
(salesforce/ai-economist ``tutorials/rllib/phase1/config.yaml`` and
``phase2/config.yaml``), with the same meaning where a key exists there:

- ``env``: the Foundation env config (the dict given to ``make_env_instance``;
  built by ``jaxecon.make_from_config``), or the name of one of
  ``jaxecon.configs.ECONOMIES`` (``env: default``, as ``phase2.yaml``),
  which stands for its config; its keyword names (the scenario's and each
  component's) are checked when the config loads, by the same rule
  (``jaxecon.factory.unknown_kwargs``).
- ``general``: ``episodes`` (training length: episodes of ``episode_length``
  steps summed over all envs, so env steps = episodes x episode_length),
  ``ckpt_frequency_steps`` (env steps between checkpoints), ``train_planner``
  (False: the planner acts uniformly at random over its valid actions, as the
  reference's ``random`` planner model), and jaxecon's ``name`` (the run's
  name: output goes to ``runs/<name>/phase1`` and
  ``runs/<name>/phase2-<planner>`` by default) and ``restore_agents`` (a
  jaxecon checkpoint whose agent policy starts this run: phase 2 starts from
  phase 1's, and a config with it is a phase-2 config; the reference's key,
  ``restore_tf_weights_agents``, names TF weights and must stay empty).
- ``agent_policy`` / ``planner_policy``: PPO settings per policy
  (``PolicyConfig``); ``model`` has ``custom_model``, ``custom_options`` and
  ``max_seq_len`` as in the reference.
- ``trainer``: ``num_envs`` (or the reference's ``num_workers`` x
  ``num_envs_per_worker``), ``rollout_fragment_length`` (steps per env per
  update), ``train_batch_size`` (if given, must equal num_envs x fragment),
  ``sgd_minibatch_size`` (samples of one policy per minibatch: agent-steps
  for the agents, env steps for the planner, as RLlib counts them),
  ``num_sgd_iter`` (epochs per update), ``seed``, and jaxecon's
  ``random_planner_envs`` (``TrainerConfig``).

A key the trainer does not understand is an error naming it. The reference's
RLlib runtime keys (``cpus``, ``gpus``, ``tf_session_args``, ``num_gpus``,
...) are accepted and ignored, so the reference's own files load; a reference
key whose value selects behaviour jaxecon does not implement (``kl_coeff`` !=
0, ``use_gae: false``, ``batch_mode`` other than ``truncate_episodes``, ...)
is an error naming the key and the supported value.

A file is read as ``jaxecon run --config`` reads one (YAML or JSON,
``jaxecon.config_files.read_config_file``), and ``ConfigError`` is the same
class as ``jaxecon.cli.config.ConfigError``.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import pathlib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Optional

from jaxecon.config_files import ConfigError, named_economy, parse_config_text, read_config_file

__all__ = [
    "BUILTIN_CONFIGS",
    "ConfigError",
    "GeneralConfig",
    "ModelConfig",
    "PolicyConfig",
    "TrainConfig",
    "TrainerConfig",
    "config_from_dict",
    "load_train_config",
]

#: Names accepted by ``load_train_config`` for the configs shipped in
#: ``jaxecon/training/configs/``.
BUILTIN_CONFIGS = ("default", "one_step", "phase1", "phase2")

MODELS = ("mlp", "keras_conv_lstm", "random")


# RLlib runtime keys of the reference configs that have no meaning here.
_IGNORED = {
    "general": {"cpus", "gpus"},
    "trainer": {"local_tf_session_args", "tf_session_args", "num_gpus", "num_gpus_per_worker",
                "metrics_smoothing_episodes", "env_config", "multiagent"},
    "policy": {"kl_target"},
}


@dataclass(frozen=True)
class ModelConfig:
    """A policy's network (``networks.ActorCritic``).

    Attributes:
        custom_model: ``"mlp"`` (default), ``"keras_conv_lstm"`` (the paper's
            model) or ``"random"`` (no network: uniformly random valid actions;
            a policy with it cannot be trained).
        fc_dim, num_fc: hidden layers (``custom_options``).
        lstm_cell_size, num_conv, idx_emb_dim, input_emb_vocab: the conv-LSTM's
            ``custom_options``.
        max_seq_len: recurrent models are trained on sequences of this many
            steps, each starting from its stored LSTM state (RLlib's
            truncated back-propagation); must divide ``rollout_fragment_length``.
    """

    custom_model: str = "mlp"
    fc_dim: int = 128
    num_fc: int = 2
    lstm_cell_size: int = 128
    num_conv: int = 2
    idx_emb_dim: int = 4
    input_emb_vocab: int = 100
    max_seq_len: int = 25


_MODEL_OPTIONS = {
    "mlp": ("fc_dim", "num_fc"),
    "keras_conv_lstm": ("fc_dim", "num_fc", "lstm_cell_size", "num_conv", "idx_emb_dim",
                        "input_emb_vocab"),
    "random": (),
}


@dataclass(frozen=True)
class PolicyConfig:
    """PPO settings of one policy (the reference's ``agent_policy`` / ``planner_policy``).

    Attributes:
        clip_param: PPO ratio clip (0.3).
        entropy_coeff: entropy bonus (0.025); ``entropy_coeff_schedule``
            (``[[env_step, value], ...]``, linear in between, the last value
            after) overrides it when given.
        gamma, lambda_: discount and GAE lambda (YAML key ``lambda``).
        grad_clip: global gradient-norm clip (10).
        lr: Adam learning rate (3e-4); ``lr_schedule`` as the entropy schedule.
        vf_clip_param: value clip around the rollout's value (50).
        vf_loss_coeff: value-loss weight (0.05).
        vf_share_layers: policy and value share the hidden layers (mlp only).
        model: ``ModelConfig``.
        reward_scale: jaxecon: rewards are multiplied by it before GAE (1).
    """

    clip_param: float = 0.3
    entropy_coeff: float = 0.025
    entropy_coeff_schedule: Optional[tuple] = None
    gamma: float = 0.998
    grad_clip: float = 10.0
    lambda_: float = 0.98
    lr: float = 3e-4
    lr_schedule: Optional[tuple] = None
    vf_clip_param: float = 50.0
    vf_loss_coeff: float = 0.05
    vf_share_layers: bool = False
    model: ModelConfig = field(default_factory=ModelConfig)
    reward_scale: float = 1.0


@dataclass(frozen=True)
class GeneralConfig:
    """Run length, checkpoints, the planner switch and the phase-1 checkpoint (see module docstring)."""

    name: str = "default"
    episodes: int = 25000
    ckpt_frequency_steps: int = 750000
    train_planner: bool = False
    restore_agents: Optional[str] = None


@dataclass(frozen=True)
class TrainerConfig:
    """Batch shape and SGD (see module docstring).

    Attributes:
        num_envs: economies stepped in parallel (30 = the reference's 15
            workers x 2 envs).
        rollout_fragment_length: steps per env per update (200).
        sgd_minibatch_size: samples per minibatch, per policy (1500).
        num_sgd_iter: epochs over the batch per update (1).
        seed: PRNG seed (0; the reference's ``null`` also means 0).
        random_planner_envs: economies of the batch (the first ones) whose
            planner acts uniformly at random over its valid actions instead
            of by its policy (0; jaxecon's, not the reference's): their steps
            train the agents, not the planner, so that the agents keep
            answering every tax schedule while the planner learns. Only with
            a trained planner (``general.train_planner``); ``0 <= n <
            num_envs``.
    """

    num_envs: int = 30
    rollout_fragment_length: int = 200
    sgd_minibatch_size: int = 1500
    num_sgd_iter: int = 1
    seed: int = 0
    random_planner_envs: int = 0

    @property
    def train_batch_size(self) -> int:
        """Env steps per update: ``num_envs * rollout_fragment_length``."""
        return self.num_envs * self.rollout_fragment_length


@dataclass(frozen=True)
class TrainConfig:
    """A whole training run: ``env`` (Foundation env config dict) and the four sections."""

    env: dict
    general: GeneralConfig = field(default_factory=GeneralConfig)
    agent_policy: PolicyConfig = field(default_factory=PolicyConfig)
    planner_policy: PolicyConfig = field(default_factory=PolicyConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)

    @property
    def phase(self) -> int:
        """The curriculum's phase: 2 if the run trains the planner or starts from
        phase 1's agents (``general.restore_agents``: phase 2 under any planner,
        ``curriculum.planner_of``), else 1."""
        return 2 if self.general.train_planner or self.general.restore_agents is not None else 1

    @property
    def episode_length(self) -> int:
        """``env["episode_length"]`` (Foundation's default 1000 when absent)."""
        return int(self.env.get("episode_length", 1000))

    @property
    def total_env_steps(self) -> int:
        """``general.episodes * episode_length``."""
        return self.general.episodes * self.episode_length

    @property
    def num_updates(self) -> int:
        """PPO updates in the run: total env steps / train batch size, rounded up (>= 1)."""
        b = self.trainer.train_batch_size
        return max(1, -(-self.total_env_steps // b))

    def replace(self, **sections) -> "TrainConfig":
        """A copy with whole sections replaced (``dataclasses.replace``)."""
        return dataclasses.replace(self, **sections)

    def to_dict(self) -> dict:
        """The config as the nested dict a YAML file holds (``config_from_dict`` inverts it)."""
        out = {"env": copy.deepcopy(self.env), "general": dataclasses.asdict(self.general),
               "trainer": dataclasses.asdict(self.trainer)}
        for name in ("agent_policy", "planner_policy"):
            p = getattr(self, name)
            d = {f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "model"}
            d["lambda"] = d.pop("lambda_")
            for k in ("entropy_coeff_schedule", "lr_schedule"):
                if d[k] is not None:
                    d[k] = [list(x) for x in d[k]]
            m = p.model
            d["model"] = {"custom_model": m.custom_model, "max_seq_len": m.max_seq_len,
                          "custom_options": {k: getattr(m, k) for k in _MODEL_OPTIONS[m.custom_model]}}
            out[name] = d
        return out


# ----------------------------------------------------------------- validation
def _where(path: str) -> str:
    return f"'{path}'"


def _check_keys(d: Any, path: str, allowed, ignored=()) -> dict:
    if d is None:
        return {}
    if not isinstance(d, dict):
        raise ConfigError(f"{_where(path)} must be a mapping, got {type(d).__name__}")
    unknown = [k for k in d if k not in allowed and k not in ignored]
    if unknown:
        raise _unknown_key(path, unknown[0], allowed)
    return {k: v for k, v in d.items() if k in allowed}


def _unknown_key(path: str, key, allowed) -> ConfigError:
    """The error for ``key`` under ``path``: its dotted path, the closest allowed key, all of them."""
    close = difflib.get_close_matches(str(key), [str(a) for a in allowed], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"unknown key {_where(path + '.' + str(key))} in the training config{hint}; "
                       f"the keys of {_where(path)} are {sorted(allowed)}")


def _env(env) -> dict:
    """A copy of the ``env`` section (a named economy's config for a name), its keyword names
    checked as ``jaxecon.make_from_config`` checks them (``jaxecon.factory.unknown_kwargs``),
    without building the economy."""
    from jaxecon.factory import unknown_kwargs

    if isinstance(env, str):
        env = named_economy(env)
    if not isinstance(env, dict) or "scenario_name" not in env:
        raise ConfigError("'env' must be a Foundation env config with a 'scenario_name', or the name "
                          "of an economy of jaxecon.configs.ECONOMIES")

    try:
        unknown = unknown_kwargs(env)
    except KeyError as exc:  # an unknown scenario or component name
        raise ConfigError(f"'env': {exc.args[0]}") from None
    except ValueError as exc:  # components of the wrong shape
        raise ConfigError(f"'env': {exc}") from None
    if unknown:
        where, key, allowed = unknown[0]
        raise _unknown_key("env" + (f".{where}" if where else ""), key, allowed)
    return copy.deepcopy(env)


def _int(path, v, minimum=None):
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            v = int(v)
        else:
            raise ConfigError(f"{_where(path)} must be an integer, got {v!r}")
    if minimum is not None and v < minimum:
        raise ConfigError(f"{_where(path)} must be >= {minimum}, got {v}")
    return int(v)


def _float(path, v, lo=None, hi=None):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ConfigError(f"{_where(path)} must be a number, got {v!r}")
    v = float(v)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ConfigError(f"{_where(path)} must be in [{lo}, {hi}], got {v}")
    return v


def _bool(path, v):
    if not isinstance(v, bool):
        raise ConfigError(f"{_where(path)} must be true or false, got {v!r}")
    return v


def _fixed(path, v, allowed):
    if v != allowed:
        raise ConfigError(f"{_where(path)}: only {allowed!r} is supported, got {v!r}")


def _schedule(path, v):
    if v is None:
        return None
    if not isinstance(v, (list, tuple)) or not v:
        raise ConfigError(f"{_where(path)} must be null or a list of [env_step, value] pairs, got {v!r}")
    out = []
    for i, pair in enumerate(v):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ConfigError(f"{_where(f'{path}[{i}]')} must be a pair [env_step, value], got {pair!r}")
        t = _int(f"{path}[{i}][0]", pair[0], minimum=0)
        out.append((t, _float(f"{path}[{i}][1]", pair[1])))
    if any(b[0] <= a[0] for a, b in zip(out, out[1:])):
        raise ConfigError(f"{_where(path)}: env steps must increase, got {[t for t, _ in out]}")
    return tuple(out)


def _model(path, d) -> ModelConfig:
    d = _check_keys(d, path, {"custom_model", "custom_options", "max_seq_len"})
    name = d.get("custom_model", "mlp")
    if name not in MODELS:
        raise ConfigError(f"{_where(path + '.custom_model')} must be one of {list(MODELS)}, got {name!r}")
    opts = _check_keys(d.get("custom_options"), path + ".custom_options", set(_MODEL_OPTIONS[name]))
    kw = {k: _int(f"{path}.custom_options.{k}", v, minimum=1) for k, v in opts.items()}
    seq = _int(path + ".max_seq_len", d.get("max_seq_len", 25), minimum=1)
    return ModelConfig(custom_model=name, max_seq_len=seq, **kw)


def _policy(path, d) -> PolicyConfig:
    names = {f.name for f in dataclasses.fields(PolicyConfig)} - {"lambda_"}
    names |= {"lambda", "kl_coeff", "use_gae"}
    d = _check_keys(d, path, names, _IGNORED["policy"])
    if "kl_coeff" in d:
        _fixed(path + ".kl_coeff", float(d.pop("kl_coeff")), 0.0)
    if "use_gae" in d:
        _fixed(path + ".use_gae", d.pop("use_gae"), True)
    kw = {}
    for k, lo, hi in (("clip_param", 0.0, None), ("entropy_coeff", 0.0, None), ("gamma", 0.0, 1.0),
                      ("grad_clip", 0.0, None), ("lambda", 0.0, 1.0), ("lr", 0.0, None),
                      ("vf_clip_param", 0.0, None), ("vf_loss_coeff", 0.0, None),
                      ("reward_scale", 0.0, None)):
        if k in d:
            kw["lambda_" if k == "lambda" else k] = _float(f"{path}.{k}", d[k], lo, hi)
    for k in ("entropy_coeff_schedule", "lr_schedule"):
        if k in d:
            kw[k] = _schedule(f"{path}.{k}", d[k])
    if "vf_share_layers" in d:
        kw["vf_share_layers"] = _bool(path + ".vf_share_layers", d["vf_share_layers"])
    kw["model"] = _model(path + ".model", d.get("model"))
    if kw["model"].custom_model == "keras_conv_lstm" and kw.get("vf_share_layers"):
        raise ConfigError(f"{_where(path + '.vf_share_layers')}: only false with keras_conv_lstm "
                          "(separate policy and value towers, as the reference)")
    return PolicyConfig(**kw)


def _general(d) -> GeneralConfig:
    allowed = {f.name for f in dataclasses.fields(GeneralConfig)}
    allowed |= {"restore_tf_weights_agents", "restore_tf_weights_planner"}
    d = _check_keys(d, "general", allowed, _IGNORED["general"])
    for k in ("restore_tf_weights_agents", "restore_tf_weights_planner"):
        if d.pop(k, "") not in ("", None):
            raise ConfigError(
                f"'general.{k}' names TensorFlow weights, which jaxecon cannot load; "
                "leave it empty and set 'general.restore_agents' to a jaxecon checkpoint"
            )
    kw = {}
    if "name" in d:
        if not isinstance(d["name"], str) or not d["name"] or "/" in d["name"]:
            raise ConfigError(f"'general.name' must be a non-empty string without '/', got {d['name']!r}")
        kw["name"] = d["name"]
    if "episodes" in d:
        kw["episodes"] = _int("general.episodes", d["episodes"], minimum=1)
    if "ckpt_frequency_steps" in d:
        kw["ckpt_frequency_steps"] = _int("general.ckpt_frequency_steps", d["ckpt_frequency_steps"], 1)
    if "train_planner" in d:
        kw["train_planner"] = _bool("general.train_planner", d["train_planner"])
    if d.get("restore_agents") not in (None, ""):
        if not isinstance(d["restore_agents"], str):
            raise ConfigError(f"'general.restore_agents' must be a path or null, got {d['restore_agents']!r}")
        kw["restore_agents"] = d["restore_agents"]
    return GeneralConfig(**kw)


def _trainer(d) -> TrainerConfig:
    allowed = {f.name for f in dataclasses.fields(TrainerConfig)}
    allowed |= {"num_workers", "num_envs_per_worker", "train_batch_size", "batch_mode",
                "no_done_at_end", "observation_filter", "shuffle_sequences"}
    d = _check_keys(d, "trainer", allowed, _IGNORED["trainer"])
    for k, v in (("batch_mode", "truncate_episodes"), ("no_done_at_end", False),
                 ("observation_filter", "NoFilter"), ("shuffle_sequences", True)):
        if k in d:
            _fixed("trainer." + k, d[k], v)
    kw = {}
    if "num_envs" in d:
        if "num_workers" in d or "num_envs_per_worker" in d:
            raise ConfigError("give 'trainer.num_envs' or 'trainer.num_workers' x "
                              "'trainer.num_envs_per_worker', not both")
        kw["num_envs"] = _int("trainer.num_envs", d["num_envs"], 1)
    elif "num_workers" in d or "num_envs_per_worker" in d:
        kw["num_envs"] = (_int("trainer.num_workers", d.get("num_workers", 1), 1)
                          * _int("trainer.num_envs_per_worker", d.get("num_envs_per_worker", 1), 1))
    for k in ("rollout_fragment_length", "sgd_minibatch_size", "num_sgd_iter"):
        if k in d:
            kw[k] = _int("trainer." + k, d[k], 1)
    if d.get("seed") is not None:
        kw["seed"] = _int("trainer.seed", d["seed"], 0)
    if "random_planner_envs" in d:
        kw["random_planner_envs"] = _int("trainer.random_planner_envs", d["random_planner_envs"], 0)
    t = TrainerConfig(**kw)
    if t.random_planner_envs >= t.num_envs:
        raise ConfigError(f"'trainer.random_planner_envs' ({t.random_planner_envs}) must be less than "
                          f"trainer.num_envs ({t.num_envs}): the planner needs economies of its own to learn from")
    if d.get("train_batch_size") is not None:
        tb = _int("trainer.train_batch_size", d["train_batch_size"], 1)
        if tb != t.train_batch_size:
            raise ConfigError(
                f"'trainer.train_batch_size' ({tb}) must equal num_envs x rollout_fragment_length "
                f"({t.num_envs} x {t.rollout_fragment_length} = {t.train_batch_size})"
            )
    return t


def config_from_dict(data: dict) -> TrainConfig:
    """Validate a nested config dict (a parsed YAML file) into a ``TrainConfig``.

    Raises:
        ConfigError: an unknown key (named with its path, e.g.
            ``'agent_policy.model.custom_options.fc_size'`` or
            ``'env.episode_lenght'``, with the closest allowed key and the
            allowed ones), a bad value, a missing ``env.scenario_name``, an
            unknown scenario or component, or a recurrent ``max_seq_len`` that
            does not divide ``rollout_fragment_length``.
    """
    if not isinstance(data, dict):
        raise ConfigError(f"a training config must be a mapping, got {type(data).__name__}")
    d = _check_keys(data, "<config>",
                    {"env", "general", "agent_policy", "planner_policy", "trainer"})
    cfg = TrainConfig(
        env=_env(d.get("env")),
        general=_general(d.get("general")),
        agent_policy=_policy("agent_policy", d.get("agent_policy")),
        planner_policy=_policy("planner_policy", d.get("planner_policy")),
        trainer=_trainer(d.get("trainer")),
    )
    if cfg.agent_policy.model.custom_model == "random":
        raise ConfigError("'agent_policy.model.custom_model': the agents' policy is always trained; "
                          "use 'mlp' or 'keras_conv_lstm'")
    if cfg.general.train_planner and cfg.planner_policy.model.custom_model == "random":
        raise ConfigError("'general.train_planner' is true but 'planner_policy.model.custom_model' "
                          "is 'random' (untrainable); use 'mlp' or 'keras_conv_lstm'")
    frag = cfg.trainer.rollout_fragment_length
    for name in ("agent_policy", "planner_policy"):
        m = getattr(cfg, name).model
        if m.custom_model == "keras_conv_lstm" and frag % m.max_seq_len:
            raise ConfigError(
                f"'{name}.model.max_seq_len' ({m.max_seq_len}) must divide "
                f"'trainer.rollout_fragment_length' ({frag})"
            )
    return cfg


def load_train_config(source) -> TrainConfig:
    """A ``TrainConfig`` from a YAML (or JSON) file path or a built-in name (``BUILTIN_CONFIGS``).

    Raises:
        ConfigError: no such file or built-in name, a file that cannot be read
            (``jaxecon.config_files.read_config_file``: an extension other
            than .yaml, .yml or .json, unparsable content, not a mapping), or
            an invalid config (see ``config_from_dict``).
    """
    name = str(source)
    if name in BUILTIN_CONFIGS:
        where = f"built-in config {name!r}"
        text = resources.files("jaxecon.training").joinpath("configs").joinpath(f"{name}.yaml").read_text()
        data = parse_config_text(text, where, ".yaml")
    elif pathlib.Path(name).is_file():
        where, data = f"config file {name!r}", read_config_file(name)
    else:
        raise ConfigError(
            f"training config {name!r} is neither a file nor a built-in name {list(BUILTIN_CONFIGS)}"
        )
    try:
        return config_from_dict(data)
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
