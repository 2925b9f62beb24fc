"""Policy and value networks (flax linen): the AI Economist's conv-LSTM model and an MLP.

One ``ActorCritic`` module serves one policy group (``env_adapters.PolicyGroup``):
the mobile agents share one (with the agent index as a one-hot input), the
planner has its own. Inputs are a group's features for a batch of actors
``[A, ...]`` (a pytree: for jaxecon, the observation dict without its
``"action_mask"``), the one-hot agent index ``[A, n]`` (``n = 1``: omitted) and,
for recurrent models, the carried LSTM state and a reset flag ``[A]`` (True at
an episode's first step: the state restarts from zeros). Outputs are logits
``[A, H, K]`` (one row per action head) and the value ``[A]``.

Models (``ModelConfig.custom_model``, the reference's names where they exist):

- ``"keras_conv_lstm"``: the model of Zheng et al. (2022), "The AI Economist",
  as in Foundation's ``tutorials/rllib/tf_models.py`` (``KerasConvLSTM``): the
  spatial inputs (float maps ``[C, h, w]``, e.g. ``world-map``, and integer
  index maps, e.g. ``world-idx_map``, embedded with ``idx_emb_dim`` features
  per channel from a vocabulary of ``input_emb_vocab``) go through ``num_conv``
  3x3 stride-2 ReLU convolutions (16 filters, then 32), are flattened and
  concatenated with the non-spatial inputs; then ``num_fc`` ReLU layers of
  ``fc_dim``, a layer norm, an LSTM of ``lstm_cell_size`` and a linear head.
  Without spatial inputs (the planner with ``planner_gets_spatial_info=False``)
  it is FC + LSTM. Policy and value have separate towers, as the reference's
  ``vf_share_layers: false``.
- ``"mlp"`` (jaxecon; the default for speed): every input flattened and
  concatenated, ``num_fc`` tanh layers of ``fc_dim``, linear heads; no
  recurrent state. ``vf_share_layers: true`` shares the hidden layers between
  policy and value.

Initialisation follows PureJaxRL / CleanRL PPO: orthogonal weights (gain
sqrt(2) hidden, 0.01 policy head, 1 value head), zero biases.
"""

from __future__ import annotations

from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax.linen.initializers import constant, lecun_normal, orthogonal
from flax.linen.recurrent import DenseParams

from jaxecon.training.conv import PartsConv
from jaxecon.wrappers.flat import flatten_leaves

__all__ = ["ActorCritic", "mlp_inputs", "spatial_leaves"]

_SPATIAL_NDIM = 3  # [C, h, w] per actor


def spatial_leaves(features, batch_ndim: int = 1) -> tuple[list, list]:
    """Split a features pytree into (spatial, non-spatial) leaves, in pytree order.

    A leaf is spatial when it has ``batch_ndim + 3`` dimensions (``[..., C, h, w]``).
    """
    leaves = jax.tree_util.tree_leaves(features)
    spatial = [x for x in leaves if x.ndim == batch_ndim + _SPATIAL_NDIM]
    flat = [x for x in leaves if x.ndim != batch_ndim + _SPATIAL_NDIM]
    return spatial, flat


def mlp_inputs(features, index=None) -> jax.Array:
    """The ``"mlp"`` model's input layer: float32 ``[A, D]``.

    Every leaf of ``features`` (a pytree ``[A, ...]``, any numeric dtype)
    flattened and cast to float32, spatial leaves first (``spatial_leaves``),
    then the one-hot ``index`` ``[A, n]`` (None: omitted). ``ActorCritic``
    (``"mlp"``) given this array as its features and ``index=None`` computes
    exactly what it computes from ``features`` and ``index``: the trainer
    builds it once per step and stores it, so that SGD does not rebuild it.
    """
    spatial, flat = spatial_leaves(features)
    parts = [flatten_leaves(spatial + flat, 1)] + ([] if index is None else [index.astype(jnp.float32)])
    return jnp.concatenate(parts, axis=-1) if len(parts) > 1 else parts[0]


class _ConvTorso(nn.Module):
    """The reference's spatial encoder: embed index maps, conv 16@3x3/2 -> 32@3x3/2, flatten.

    The convolutions are ``conv.PartsConv`` (``flax.linen.Conv``'s parameters,
    a gradient XLA:CPU runs fast inside the SGD's loops); the index maps are
    moved to NHWC before they are embedded, so that no float array is transposed.
    """

    num_conv: int
    idx_emb_dim: int
    input_emb_vocab: int

    @nn.compact
    def __call__(self, spatial: list) -> jax.Array:
        parts = []  # NHWC, never concatenated: conv 0 sums one conv per part (PartsConv)
        for x in spatial:  # [A, C, h, w] -> [A, h, w, C']
            if jnp.issubdtype(x.dtype, jnp.integer) or x.dtype == jnp.bool_:
                idx = jnp.clip(jnp.moveaxis(x, 1, -1).astype(jnp.int32), 0, self.input_emb_vocab - 1)
                emb = nn.Embed(self.input_emb_vocab, self.idx_emb_dim)(idx)  # [A, h, w, C, E]
                parts.append(emb.reshape(emb.shape[:3] + (-1,)))
            else:
                parts.append(jnp.moveaxis(x.astype(jnp.float32), 1, -1))
        for i in range(self.num_conv):
            h = PartsConv(16 if i == 0 else 32, (3, 3), (2, 2), kernel_init=orthogonal(np.sqrt(2)),
                          bias_init=constant(0.0), name=f"Conv_{i}")(parts)
            parts = [nn.relu(h)]
        return parts[0].reshape(parts[0].shape[0], -1)


class _LSTM(nn.Module):
    """flax's ``OptimizedLSTMCell`` (the same parameters, names and initialisers,
    so checkpoints carry over) with a reset flag, over one step or a sequence.

    ``__call__(carry, x, reset) -> (carry, h)``, ``carry = (c, h)`` float32
    ``[A, F]``: one step takes ``x`` ``[A, D]`` and ``reset`` bool ``[A]`` and
    returns ``h`` ``[A, F]``; a sequence of ``L`` steps takes ``x`` ``[L, A, D]``
    and ``reset`` ``[L, A]`` and returns ``h`` ``[L, A, F]`` (the carry after
    the last step). ``reset`` restarts the state from zeros before its step.
    A sequence's input projection is one matmul over all its steps; only the
    recurrent projection runs step by step (``lax.scan``).
    """

    features: int

    @nn.compact
    def __call__(self, carry, x, reset):
        gates = ("i", "f", "g", "o")
        w_x = jnp.concatenate([DenseParams(self.features, use_bias=False, kernel_init=lecun_normal(),
                                           name=f"i{c}")(x)[0] for c in gates], axis=-1)
        w_h, b_h = zip(*(DenseParams(self.features, kernel_init=orthogonal(), name=f"h{c}")(carry[1])
                         for c in gates))
        w_h, b_h = jnp.concatenate(w_h, axis=-1), jnp.concatenate(b_h, axis=-1)

        def step(carry, inputs):
            xw, r = inputs
            c, h = (jnp.where(r[:, None], 0.0, v) for v in carry)
            i, f, g, o = jnp.split((h @ w_h + b_h) + xw, 4, axis=-1)
            c = nn.sigmoid(f) * c + nn.sigmoid(i) * jnp.tanh(g)
            h = nn.sigmoid(o) * jnp.tanh(c)
            return (c, h), h

        if reset.ndim == 1:
            return step(carry, (x @ w_x, reset))
        return jax.lax.scan(step, carry, (x @ w_x, reset))


class _Tower(nn.Module):
    """Encoder -> hidden layers (-> layer norm -> LSTM): the body of the policy or the value."""

    model: str
    fc_dim: int
    num_fc: int
    lstm_cell_size: int
    num_conv: int
    idx_emb_dim: int
    input_emb_vocab: int

    @nn.compact
    def __call__(self, carry, features, index, reset):
        if self.model == "keras_conv_lstm":
            # a sequence ([L, A] resets): everything before the LSTM runs on all L x A inputs at once
            merge = lambda x: x.reshape((-1,) + x.shape[reset.ndim:])  # noqa: E731
            features = jax.tree.map(merge, features)
            index = None if index is None else merge(index)
            spatial, flat = spatial_leaves(features)
            parts = [] if not flat else [flatten_leaves(flat, 1)]
            if spatial:
                parts.insert(0, _ConvTorso(self.num_conv, self.idx_emb_dim, self.input_emb_vocab)(spatial))
            if index is not None:
                parts.append(index)
            h = jnp.concatenate(parts, axis=-1)
            for _ in range(self.num_fc):
                h = nn.relu(nn.Dense(self.fc_dim, kernel_init=orthogonal(np.sqrt(2)),
                                     bias_init=constant(0.0))(h))
            h = nn.LayerNorm()(h).reshape(reset.shape + (-1,))
            return _LSTM(self.lstm_cell_size, name="OptimizedLSTMCell_0")(carry, h, reset)
        h = mlp_inputs(features, index)
        for _ in range(self.num_fc):
            h = nn.tanh(nn.Dense(self.fc_dim, kernel_init=orthogonal(np.sqrt(2)),
                                 bias_init=constant(0.0))(h))
        return carry, h


class ActorCritic(nn.Module):
    """Policy logits and value for one agent group.

    Attributes:
        heads: number of actions per head (``PolicyGroup.heads``); logits are
            ``[A, H, K]`` with ``K = max(heads)``.
        model: ``"mlp"`` or ``"keras_conv_lstm"`` (module docstring).
        fc_dim, num_fc: hidden layer width and count.
        lstm_cell_size: LSTM width (``keras_conv_lstm``).
        num_conv, idx_emb_dim, input_emb_vocab: the conv encoder (``keras_conv_lstm``).
        vf_share_layers: one tower for policy and value (``mlp`` only).

    Every attribute is required: the trainer builds the module from a
    ``config.ModelConfig`` (and the policy's ``vf_share_layers``), whose
    defaults are the one place they are set.

    ``__call__(carry, features, index, reset) -> (carry, logits, value)``:
    ``carry`` is ``initial_carry(A)``'s pytree (empty for ``mlp``),
    ``features`` a pytree ``[A, ...]``, ``index`` float ``[A, n]`` or None,
    ``reset`` bool ``[A]``; ``logits`` float32 ``[A, H, K]``, ``value`` float32 ``[A]``.
    A recurrent model also takes a sequence of ``L`` steps from ``carry``:
    ``features`` ``[L, A, ...]``, ``index`` ``[L, A, n]``, ``reset`` ``[L, A]``,
    giving ``logits`` ``[L, A, H, K]`` and ``value`` ``[L, A]`` (what stepping
    ``L`` times gives, to float rounding; the layers before the LSTM run on
    all ``L x A`` inputs at once, which is how SGD replays sequences).
    """

    heads: tuple
    model: str
    fc_dim: int
    num_fc: int
    lstm_cell_size: int
    num_conv: int
    idx_emb_dim: int
    input_emb_vocab: int
    vf_share_layers: bool

    @property
    def recurrent(self) -> bool:
        """Whether the model carries an LSTM state."""
        return self.model == "keras_conv_lstm"

    def initial_carry(self, n_actors: int) -> Any:
        """Zeros: ``{"pi": (c, h), "vf": (c, h)}`` float32 ``[A, lstm_cell_size]`` (``{}`` for mlp)."""
        if not self.recurrent:
            return {}
        z = jnp.zeros((n_actors, self.lstm_cell_size), jnp.float32)
        return {"pi": (z, z), "vf": (z, z)}

    def _tower(self, name):
        return _Tower(self.model, self.fc_dim, self.num_fc, self.lstm_cell_size, self.num_conv,
                      self.idx_emb_dim, self.input_emb_vocab, name=name)

    @nn.compact
    def __call__(self, carry, features, index, reset):
        k, n_heads = max(self.heads), len(self.heads)
        new_carry = {}
        pi_c, h_pi = self._tower("pi")(carry.get("pi"), features, index, reset)
        if self.vf_share_layers and not self.recurrent:
            h_vf = h_pi
        else:
            vf_c, h_vf = self._tower("vf")(carry.get("vf"), features, index, reset)
            if self.recurrent:
                new_carry = {"pi": pi_c, "vf": vf_c}
        logits = nn.Dense(n_heads * k, kernel_init=orthogonal(0.01), bias_init=constant(0.0),
                          name="logits")(h_pi)
        value = nn.Dense(1, kernel_init=orthogonal(1.0), bias_init=constant(0.0), name="value")(h_vf)
        return new_carry, logits.reshape(logits.shape[:-1] + (n_heads, k)), value[..., 0]
