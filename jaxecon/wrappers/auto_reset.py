"""Auto-reset inside jit, carrying over what Foundation keeps across episodes.

Foundation's environment object outlives its episodes: ``env.reset()`` keeps
the completed-episode count (which drives energy warm-up and tax annealing),
the "auto" energy warm-up integrator, and the saez tax buffers.
jaxecon's functional ``reset(key, params, prev_state=state)`` carries the same
things over from the previous episode's last state (``docs/architecture.md``,
"One reset, one step"). ``AutoResetWrapper`` calls it inside ``step`` when the
episode ends, so a ``jax.lax.scan`` over many episodes behaves like a Foundation
training loop that calls ``env.reset()`` whenever ``done["__all__"]`` is set.

Terminated vs truncated (gymnax 1.0, Gymnasium): a Foundation episode ends
only by its time limit (``timestep >= episode_length``), so every end is a
truncation: ``info["truncated"] = done`` and ``info["terminated"] = False``.
A learner should bootstrap from the value of ``info["final_observation"]``
at a truncation.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxecon.wrappers.base import Wrapper, contains_wrapper

__all__ = ["AutoResetWrapper"]


class AutoResetWrapper(Wrapper):
    """Reset on ``done`` inside ``step``, with ``prev_state`` carry-over.

    Args:
        env: a jaxecon functional env or a ``Wrapper`` that does not already
            auto-reset.
    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper, or already contains an
            ``AutoResetWrapper``.

    ``step(key, state, actions, params)`` returns ``(obs, state, reward, done,
    info)`` like the wrapped env, except that when ``done``:

    - ``state`` is ``env.reset(k_reset, params, prev_state=final_state)``, and
      ``obs`` is the new episode's first observation;
    - ``reward`` and ``done`` are the last step's.

    The key is split as ``k_step, k_reset = jax.random.split(key)``; ``k_step``
    drives the step, ``k_reset`` the reset (used only when ``done``).
    ``info`` adds:

    - ``"terminated"``: bool [], always False (no Foundation episode ends
      before its time limit);
    - ``"truncated"``: bool [], ``done`` (the time limit was reached);
    - ``"final_observation"``: the observation pytree of the step, before any
      reset (equal to ``obs`` when not ``done``).

    The reset runs under ``jax.lax.cond``: skipped on steps that do not end an
    episode unless the predicate is batched (under ``jax.vmap`` both branches
    run and one is selected, as in gymnax). Pure, jittable and vmappable.
    """

    def __init__(self, env):
        super().__init__(env)
        if contains_wrapper(env, AutoResetWrapper):
            raise TypeError(
                "env already contains an AutoResetWrapper; wrap the environment only once"
            )

    def step(self, key, state, actions, params):
        """One step, then a carry-over reset if the episode ended (see the class docstring).

        Returns:
            ``(obs, state, reward, done, info)``; ``reward = {"a": float [n],
            "p": float []}``, ``done`` bool [].
        """
        k_step, k_reset = jax.random.split(key)
        obs_st, state_st, reward, done, info = self._env.step(k_step, state, actions, params)
        obs, state = jax.lax.cond(
            done,
            lambda: self._env.reset(k_reset, params, prev_state=state_st),
            lambda: (obs_st, state_st),
        )
        info = {
            **info,
            "terminated": jnp.zeros((), bool),
            "truncated": jnp.asarray(done, bool),
            "final_observation": obs_st,
        }
        return obs, state, reward, done, info
