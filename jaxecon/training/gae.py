"""Generalised advantage estimation (Schulman et al. 2016), as RLlib's ``use_gae: true``.

For one actor's trajectory of ``T`` steps: ``done[t]`` means the episode ended
with step ``t`` (the next observation belongs to a new episode), so nothing is
bootstrapped across it; ``last_value`` is the value of the observation after
the last step. With ``m_t = 1 - done[t]``::

    delta_t = r_t + gamma * m_t * V_{t+1} - V_t        (V_T = last_value)
    A_t     = delta_t + gamma * lambda * m_t * A_{t+1}
    target_t = A_t + V_t                                (the value target)

A time-limit end is a terminal step, as RLlib's ``no_done_at_end: false`` (the
reference's setting): jaxecon's observations include the time, so the value
function can tell that the episode is about to end.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

__all__ = ["gae"]


def gae(rewards, values, dones, last_value, gamma, lam):
    """Advantages and value targets, float32 ``[T, ...]`` each.

    Args:
        rewards: float ``[T, ...]`` (any trailing actor axes).
        values: float ``[T, ...]``, the critic's values of each step's observation.
        dones: bool ``[T, ...]``, broadcastable to ``rewards``.
        last_value: float ``[...]``, the value after the last step.
        gamma, lam: discount and GAE lambda (floats or traced scalars).
    Returns:
        ``(advantages, targets)``.
    """
    not_done = 1.0 - jnp.broadcast_to(dones, rewards.shape).astype(jnp.float32)
    next_values = jnp.concatenate([values[1:], last_value[None]], axis=0)
    deltas = rewards + gamma * not_done * next_values - values

    def back(adv, x):
        delta, m = x
        adv = delta + gamma * lam * m * adv
        return adv, adv

    _, adv = jax.lax.scan(back, jnp.zeros_like(last_value, jnp.float32),
                          (deltas.astype(jnp.float32), not_done), reverse=True)
    return adv, adv + values
