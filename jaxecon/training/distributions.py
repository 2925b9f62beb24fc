"""Masked categorical distributions over one or more action heads, written with ``jax.nn``.

A policy's output for one agent is a logits array ``[..., H, K]``: ``H`` action
heads (1 for a single ``Discrete`` action; one per subspace for a
``MultiDiscrete`` action, e.g. one per tax bracket for the planner) of ``K``
logits each, and a mask of the same shape (``> 0`` = valid). Heads with fewer
than ``K`` actions are padded with masked entries. The heads are independent:
the joint log-probability and entropy are sums over heads.

Masking follows Foundation's RLlib models (``tutorials/rllib/tf_models.py``,
``apply_logit_mask``): invalid logits are pushed to a large negative value, so
their probability is exactly 0 in float32 and sampling never picks them. A head whose mask is all
zero (never produced by a jaxecon economy, whose NO-OP is always valid) falls
back to the unmasked logits instead of returning NaN.

No distrax (its TensorFlow-Probability dependency is heavy); the functions
are the usual ones of PureJaxRL's ``distrax.Categorical`` use, plus masks.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

__all__ = ["MASKED_LOGIT", "MaskedCategorical"]

#: The logit given to invalid actions (float32; exp(MASKED_LOGIT - max) == 0).
MASKED_LOGIT = -1e9


@struct.dataclass
class MaskedCategorical:
    """Independent masked categoricals, one per head.

    Attributes:
        logits: float32 ``[..., H, K]``, the masked logits (invalid entries are
            ``MASKED_LOGIT``), as built by ``from_logits``.
        valid: bool ``[..., H, K]``, the mask actually applied.
    """

    logits: jax.Array
    valid: jax.Array

    @classmethod
    def from_logits(cls, logits: jax.Array, mask: jax.Array) -> "MaskedCategorical":
        """Mask ``logits`` (float ``[..., H, K]``) with ``mask`` (any dtype, same shape; > 0 = valid).

        Raises:
            ValueError: the shapes differ.
        """
        if logits.shape != mask.shape:
            raise ValueError(f"logits {logits.shape} and mask {mask.shape} must have the same shape")
        valid = mask > 0
        any_valid = jnp.any(valid, axis=-1, keepdims=True)
        valid = jnp.where(any_valid, valid, True)
        return cls(logits=jnp.where(valid, logits.astype(jnp.float32), MASKED_LOGIT), valid=valid)

    def log_probs(self) -> jax.Array:
        """float32 ``[..., H, K]``: log-probabilities (``MASKED_LOGIT``-sized at invalid entries)."""
        return jax.nn.log_softmax(self.logits, axis=-1)

    def sample(self, key: jax.Array) -> jax.Array:
        """int32 ``[..., H]``: one valid action per head.

        Inverse-CDF sampling with one uniform number per head (Gumbel-max, as
        ``jax.random.categorical``, draws one per action: 50x the random bits
        for a mobile agent, a large share of a CPU rollout's time). With ``u``
        in (0, 1] the pick is the first action whose cumulative probability
        reaches ``u`` x the total, which is never a zero-probability (masked)
        action.
        """
        p = jnp.exp(self.log_probs())
        cdf = jnp.cumsum(p, axis=-1)
        u = 1.0 - jax.random.uniform(key, cdf.shape[:-1] + (1,), jnp.float32)
        idx = jnp.sum(cdf < u * cdf[..., -1:], axis=-1)
        return jnp.minimum(idx, p.shape[-1] - 1).astype(jnp.int32)

    def mode(self) -> jax.Array:
        """int32 ``[..., H]``: the most probable valid action per head (the greedy policy)."""
        return jnp.argmax(self.logits, axis=-1).astype(jnp.int32)

    def log_prob(self, actions: jax.Array) -> jax.Array:
        """float32 ``[...]``: log-probability of ``actions`` (int ``[..., H]``), summed over heads."""
        logp = jnp.take_along_axis(self.log_probs(), actions[..., None].astype(jnp.int32), axis=-1)
        return jnp.sum(logp[..., 0], axis=-1)

    def entropy(self) -> jax.Array:
        """float32 ``[...]``: entropy in nats, summed over heads (0 for a head with one valid action)."""
        logp = self.log_probs()
        p = jnp.exp(logp)
        return -jnp.sum(jnp.where(self.valid, p * logp, 0.0), axis=(-2, -1))
