"""The PPO loss of one minibatch, as RLlib 0.8's ``PPOLoss`` (the reference's trainer).

With ``r = exp(log pi(a|s) - log pi_old(a|s))`` and standardised advantages ``A``::

    policy_loss  = -mean(min(r A, clip(r, 1 - clip_param, 1 + clip_param) A))
    v_clipped    = V_old + clip(V - V_old, -vf_clip_param, vf_clip_param)
    value_loss   = mean(max((V - target)^2, (v_clipped - target)^2))
    total        = policy_loss + vf_loss_coeff * value_loss - entropy_coeff * mean(entropy)

(no 0.5 factor on the value loss and no KL penalty: the reference sets
``kl_coeff: 0``). Schulman et al. (2017), "Proximal Policy Optimization
Algorithms".
"""

from __future__ import annotations

import jax.numpy as jnp

__all__ = ["ppo_loss"]


def ppo_loss(log_prob, entropy, value, old_log_prob, old_value, advantages, targets, *,
             clip_param, vf_clip_param, vf_loss_coeff, entropy_coeff):
    """``(total, aux)`` for arrays of one shape (the minibatch's samples).

    Args:
        log_prob, entropy, value: the current policy's, float32 ``[...]``.
        old_log_prob, old_value: the rollout policy's.
        advantages: standardised advantages; targets: value targets.
        clip_param, vf_clip_param, vf_loss_coeff, entropy_coeff: floats or traced scalars.
    Returns:
        ``total`` float32 [] and ``aux`` = dict of float32 []: ``policy_loss``,
        ``value_loss``, ``entropy``, ``approx_kl`` (mean of old - new log-prob),
        ``clip_fraction`` (share of samples whose ratio was clipped).
    """
    ratio = jnp.exp(log_prob - old_log_prob)
    surrogate = jnp.minimum(ratio * advantages,
                            jnp.clip(ratio, 1.0 - clip_param, 1.0 + clip_param) * advantages)
    policy_loss = -jnp.mean(surrogate)
    v_clipped = old_value + jnp.clip(value - old_value, -vf_clip_param, vf_clip_param)
    value_loss = jnp.mean(jnp.maximum(jnp.square(value - targets), jnp.square(v_clipped - targets)))
    mean_entropy = jnp.mean(entropy)
    total = policy_loss + vf_loss_coeff * value_loss - entropy_coeff * mean_entropy
    aux = {
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": mean_entropy,
        "approx_kl": jnp.mean(old_log_prob - log_prob),
        "clip_fraction": jnp.mean((jnp.abs(ratio - 1.0) > clip_param).astype(jnp.float32)),
    }
    return total, aux
