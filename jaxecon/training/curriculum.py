"""The AI Economist's two-phase curriculum and the hyperparameter schedules.

Zheng et al. (2022), "The AI Economist: Taxation policy design via two-level
deep multiagent reinforcement learning" (Science Advances), trains in two
phases (salesforce/ai-economist ``tutorials/rllib/phase1|2/config.yaml`` and
``two_level_curriculum_learning_with_rllib.md``):

- Phase 1: the agents learn in a world without taxes
  (``PeriodicBracketTax.disable_taxes``), with the labor cost phased in by the
  "auto" energy warm-up (the cost weight is ``1 - exp(-x / constant)`` with
  ``x`` the number of steps so far whose mean agent reward was positive;
  jaxecon carries ``x`` across episodes through ``env.reset(prev_state=...)``,
  which ``AutoResetWrapper`` calls). The planner does not learn.
- Phase 2: from phase 1's agent weights (``general.restore_agents``), taxes
  on, full labor cost (warm-up constant 0), the planner learns
  (``general.train_planner``); the maximum tax rate is annealed by the tax
  component's ``tax_annealing_schedule`` (in the env, from each economy's
  completed-episode count) and the planner's entropy bonus follows
  ``planner_policy.entropy_coeff_schedule``.

Phase 2 runs once per *planner* (``PLANNERS``), all from the same phase-1
checkpoint and otherwise identical (annealing, labor cost, budget): the
paper's comparison of the learned planner with the Saez formula, the US
federal schedule and the free market. ``learned`` is the planner above; for
the fixed schedules (``saez``, ``us-federal``, ``free-market``) the
PeriodicBracketTax sets the rates, the planner has no actions and does not
learn, and the agents still train under those taxes.

``apply_phase(cfg, phase, planner=...)`` turns any training config into that
phase's config (what ``jaxecon train --phase N [--planner P]`` does);
``planner_of(cfg)`` reads the planner back from a config (a run's
``config.yaml``); ``run_dir_name`` is a run's directory name (``phase1``,
``phase2-<planner>``). The built-in ``phase1.yaml`` and ``phase2.yaml`` are
the reference's two configs. ``piecewise_schedule``
is RLlib's ``PiecewiseSchedule`` (linear interpolation between
``[env_step, value]`` points, the last value after the last point).
"""

from __future__ import annotations

import copy
import dataclasses

import jax.numpy as jnp

from jaxecon.training.config import ConfigError, TrainConfig

__all__ = ["PLANNERS", "PLANNER_TAXES", "TAX_COMPONENT", "apply_phase", "default_restore_path",
           "is_one_step", "piecewise_schedule", "planner_of", "run_dir_name", "run_label", "tax_component_kwargs"]

TAX_COMPONENT = "PeriodicBracketTax"


def is_one_step(env: dict) -> bool:
    """Whether a training config's ``env`` is the one-step economy (it has no curriculum)."""
    return env.get("scenario_name") == "one-step-economy"

#: The phase-2 planners, in the order of the comparison (the learned one first).
PLANNERS = ("learned", "saez", "us-federal", "free-market")

#: PeriodicBracketTax kwargs each planner sets in phase 2.
PLANNER_TAXES = {
    "learned": {"tax_model": "model_wrapper", "disable_taxes": False},
    "saez": {"tax_model": "saez", "disable_taxes": False},
    "us-federal": {"tax_model": "us-federal-single-filer-2018-scaled", "disable_taxes": False},
    "free-market": {"disable_taxes": True},
}


def piecewise_schedule(schedule, default: float, env_step) -> jnp.ndarray:
    """float32 []: the scheduled value at ``env_step`` (jittable; ``env_step`` may be traced).

    Args:
        schedule: None (constant ``default``) or ``((step, value), ...)`` with
            increasing steps; before the first point its value, after the last
            the last value, linear in between.
        default: the value without a schedule.
        env_step: env steps sampled so far (int or float, [] ).
    """
    if schedule is None:
        return jnp.asarray(default, jnp.float32)
    steps = jnp.asarray([s for s, _ in schedule], jnp.float32)
    values = jnp.asarray([v for _, v in schedule], jnp.float32)
    return jnp.interp(jnp.asarray(env_step, jnp.float32), steps, values)


def _components(env: dict) -> list:
    comps = env.get("components")
    if not isinstance(comps, list):
        raise ConfigError("'env.components' must be a list of {name: kwargs}")
    return comps


def tax_component_kwargs(env: dict):
    """The kwargs dict of ``env``'s PeriodicBracketTax entry (the object inside ``env``), or None."""
    for c in _components(env):
        if isinstance(c, dict) and TAX_COMPONENT in c:
            if c[TAX_COMPONENT] is None:
                c[TAX_COMPONENT] = {}
            return c[TAX_COMPONENT]
        if isinstance(c, (list, tuple)) and c and c[0] == TAX_COMPONENT:
            return c[1]
    return None


def default_restore_path(name: str) -> str:
    """Where ``apply_phase(cfg, 2)`` looks for phase 1's checkpoints: ``runs/<name>/phase1``."""
    return f"runs/{name}/phase1"


def _check_planner(planner) -> str:
    if planner not in PLANNERS:
        raise ConfigError(f"planner must be one of {list(PLANNERS)}, got {planner!r}")
    return planner


def apply_phase(cfg: TrainConfig, phase: int, planner: str = "learned") -> TrainConfig:
    """``cfg`` switched to curriculum phase 1 or 2 (the module docstring's differences).

    Phase 1: taxes disabled, ``energy_warmup_method: auto`` (the config's
    ``energy_warmup_constant`` is kept), ``train_planner`` false, no
    ``restore_agents``. Phase 2: ``energy_warmup_constant`` 0,
    ``restore_agents`` the config's or ``default_restore_path(general.name)``,
    the PeriodicBracketTax kwargs of ``PLANNER_TAXES[planner]``, and
    ``train_planner`` true for ``"learned"`` only (the tax annealing and every
    other setting are the config's, whatever the planner).
    ``trainer.random_planner_envs`` is kept for the learned planner only
    (set to 0 in phase 1 and under a fixed planner: no planner learns there).

    Args:
        cfg: any ``TrainConfig`` with a PeriodicBracketTax component for phase 2.
        phase: 1 or 2.
        planner: one of ``PLANNERS`` (phase 2 only; phase 1's planner is random).
    Raises:
        ConfigError: ``phase`` is not 1 or 2; ``planner`` not in ``PLANNERS``
            (or other than ``"learned"`` in phase 1); phase 2 without a
            PeriodicBracketTax component, or ``"learned"`` with an untrainable
            planner model.
    """
    if phase not in (1, 2):
        raise ConfigError(f"phase must be 1 or 2, got {phase!r}")
    if is_one_step(cfg.env):
        raise ConfigError("the one-step economy has no curriculum phases (its planner learns beside the agents "
                          "from the start): train it with 'jaxecon train --config one_step', score runs with "
                          "'jaxecon evaluate RUN [RUN ...]' or 'python benchmarks/one_step_planner.py'")
    _check_planner(planner)
    env = copy.deepcopy(cfg.env)
    tax = tax_component_kwargs(env)
    general = cfg.general
    if phase == 1:
        if planner != "learned":
            raise ConfigError(f"phase 1 has no planner choice (its planner acts at random, without taxes); "
                              f"got planner {planner!r}: use phase 2")
        if tax is not None:
            tax["disable_taxes"] = True
        env["energy_warmup_method"] = "auto"
        general = dataclasses.replace(general, train_planner=False, restore_agents=None)
        trainer = dataclasses.replace(cfg.trainer, random_planner_envs=0)
    else:
        if tax is None:
            raise ConfigError(f"phase 2 compares tax policies: 'env.components' needs {TAX_COMPONENT}")
        learned = planner == "learned"
        if learned and cfg.planner_policy.model.custom_model == "random":
            raise ConfigError("phase 2 with the learned planner trains it: "
                              "'planner_policy.model.custom_model' must be 'mlp' or 'keras_conv_lstm', "
                              "not 'random'")
        tax.update(PLANNER_TAXES[planner])
        env["energy_warmup_constant"] = 0
        general = dataclasses.replace(
            general, train_planner=learned,
            restore_agents=general.restore_agents or default_restore_path(general.name),
        )
        trainer = cfg.trainer if learned else dataclasses.replace(cfg.trainer, random_planner_envs=0)
    return cfg.replace(env=env, general=general, trainer=trainer)


def planner_of(cfg: TrainConfig):
    """The planner of a run's config: None in phase 1, else a ``PLANNERS`` name.

    Read from the config alone (a run's ``config.yaml``): a run that trains
    the planner is ``"learned"``; a phase-2 run (``cfg.phase``) with taxes
    disabled or no tax component ``"free-market"``; otherwise its
    ``tax_model`` names it (``"saez"``, ``"us-federal"``). A phase-2 config
    outside ``PLANNERS`` (e.g. ``fixed-bracket-rates``, or ``model_wrapper``
    with an untrained, random planner) gives its ``tax_model`` or ``"random"``.
    """
    if cfg.phase == 1:
        return None
    if cfg.general.train_planner:
        return "learned"
    tax = tax_component_kwargs(copy.deepcopy(cfg.env))
    if tax is None or tax.get("disable_taxes", False):
        return "free-market"
    model = tax.get("tax_model", "model_wrapper")
    for name, kwargs in PLANNER_TAXES.items():
        if kwargs.get("tax_model") == model and name != "learned":
            return name
    return "random" if model == "model_wrapper" else model


def run_dir_name(cfg: TrainConfig) -> str:
    """A run's directory name: ``phase1``, or ``phase2-<planner>`` (``planner_of``)."""
    planner = planner_of(cfg)
    return "phase1" if planner is None else f"phase2-{planner}"


def run_label(cfg: TrainConfig) -> str:
    """A run's description for titles and logs: ``"<name>, phase 2, planner saez, seed 0"``."""
    planner = planner_of(cfg)
    return (f"{cfg.general.name}, phase {cfg.phase}" + (f", planner {planner}" if planner else "")
            + f", seed {cfg.trainer.seed}")
