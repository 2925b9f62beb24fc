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

``apply_phase(cfg, phase)`` turns any training config into that phase's
config (what ``jaxecon train --phase N`` does); the built-in ``phase1.yaml``
and ``phase2.yaml`` are the reference's two configs. ``piecewise_schedule``
is RLlib's ``PiecewiseSchedule`` (linear interpolation between
``[env_step, value]`` points, the last value after the last point).
"""

from __future__ import annotations

import copy
import dataclasses

import jax.numpy as jnp

from jaxecon.training.config import ConfigError, TrainConfig

__all__ = ["TAX_COMPONENT", "apply_phase", "default_restore_path", "piecewise_schedule",
           "tax_component_kwargs"]

TAX_COMPONENT = "PeriodicBracketTax"


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


def apply_phase(cfg: TrainConfig, phase: int) -> TrainConfig:
    """``cfg`` switched to curriculum phase 1 or 2 (the module docstring's differences).

    Phase 1: taxes disabled, ``energy_warmup_method: auto`` (the config's
    ``energy_warmup_constant`` is kept), ``train_planner`` false, no
    ``restore_agents``. Phase 2: taxes enabled, ``energy_warmup_constant`` 0,
    ``train_planner`` true, ``restore_agents`` the config's or
    ``default_restore_path(general.name)``.

    Raises:
        ConfigError: ``phase`` is not 1 or 2; phase 2 without a
            PeriodicBracketTax component or with a ``tax_model`` other than
            ``model_wrapper`` (the planner would have nothing to learn), or with
            an untrainable planner model.
    """
    if phase not in (1, 2):
        raise ConfigError(f"phase must be 1 or 2, got {phase!r}")
    env = copy.deepcopy(cfg.env)
    tax = tax_component_kwargs(env)
    general = cfg.general
    if phase == 1:
        if tax is not None:
            tax["disable_taxes"] = True
        env["energy_warmup_method"] = "auto"
        general = dataclasses.replace(general, train_planner=False, restore_agents=None)
    else:
        if tax is None:
            raise ConfigError(f"phase 2 trains the planner's taxes: 'env.components' needs {TAX_COMPONENT}")
        if tax.get("tax_model", "model_wrapper") != "model_wrapper":
            raise ConfigError(f"phase 2: the planner sets the rates only with "
                              f"{TAX_COMPONENT}.tax_model 'model_wrapper', got {tax['tax_model']!r}")
        if cfg.planner_policy.model.custom_model == "random":
            raise ConfigError("phase 2 trains the planner: 'planner_policy.model.custom_model' "
                              "must be 'mlp' or 'keras_conv_lstm', not 'random'")
        tax["disable_taxes"] = False
        env["energy_warmup_constant"] = 0
        general = dataclasses.replace(
            general, train_planner=True,
            restore_agents=general.restore_agents or default_restore_path(general.name),
        )
    return cfg.replace(env=env, general=general)
