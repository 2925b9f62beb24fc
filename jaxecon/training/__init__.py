"""End-to-end jitted PPO for the AI Economist's mobile agents and planner.

    from jaxecon.training import load_train_config, apply_phase, train
    cfg = load_train_config("default")            # or a YAML file, or "phase1" / "phase2"
    train(cfg)                                     # phase 1 -> runs/default/phase1
    train(apply_phase(cfg, 2))                     # phase 2 from phase 1's checkpoint -> .../phase2-learned
    train(apply_phase(cfg, 2, planner="saez"))     # the agents under the Saez formula -> .../phase2-saez

One job per module: ``config`` (the YAML config, the reference's keys),
``curriculum`` (the two phases, schedules), ``env_adapters`` (economies and
JaxMARL envs as groups of agents sharing a policy), ``networks`` (conv-LSTM and
MLP actor-critics), ``distributions`` (masked categoricals), ``gae``,
``losses`` (PPO), ``ppo`` (the jitted update), ``distributed`` (the update
data-parallel over devices and hosts), ``trainer`` (the host loop),
``checkpoint`` (orbax steps in ``jaxecon.checkpoint_files``' format),
``logging`` (CSV, TensorBoard, PNG), ``evaluate`` (trained vs random, NO-OP
and fixed tax schedules; the compiled evaluation episode), ``comparison``
(the planners over training seeds: confidence intervals, the paper's table),
``plots`` (the protocol's learning curves over seeds), ``reproduce`` (the
whole protocol, resumable). See docs/training.md.
"""

from jaxecon.training.config import ConfigError, TrainConfig, config_from_dict, load_train_config
from jaxecon.training.curriculum import apply_phase
from jaxecon.training.ppo import PPO, RunnerState
from jaxecon.training.trainer import train

__all__ = ["PPO", "ConfigError", "RunnerState", "TrainConfig", "apply_phase", "config_from_dict",
           "load_train_config", "train"]
