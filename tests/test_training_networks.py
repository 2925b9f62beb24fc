"""jaxecon.training's networks compute what flax's layers compute: the conv with the
CPU-friendly gradient (``conv.conv_valid``, ``conv.PartsConv``) and the conv-LSTM
replaying a whole sequence in one call. Small shapes; values compared to float rounding.
"""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon.training.conv import DK_CHUNK, PartsConv, conv_valid
from jaxecon.training.networks import ActorCritic

DN = ("NHWC", "HWIO", "NHWC")


@pytest.mark.parametrize("n, hw, c, o, strides", [
    (6, (11, 11), 15, 16, (2, 2)),             # the paper's first layer
    (DK_CHUNK * 2 + 5, (5, 5), 16, 32, (2, 2)),  # its second, a batch padded into kernel-gradient chunks
    (3, (7, 6), 2, 3, (1, 2)),
])
def test_conv_valid_and_its_gradient_are_laxs(n, hw, c, o, strides):
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(n,) + hw + (c,)), jnp.float32)
    k = jnp.asarray(rng.normal(size=(3, 3, c, o)), jnp.float32)
    ref = lambda x, k: jax.lax.conv_general_dilated(  # noqa: E731
        x, k, strides, "VALID", dimension_numbers=DN)
    ours = lambda x, k: conv_valid(x, k, strides)  # noqa: E731
    np.testing.assert_array_equal(np.asarray(ours(x, k)), np.asarray(ref(x, k)))
    loss = lambda f: lambda x, k: jnp.sum(jnp.sin(f(x, k)))  # noqa: E731
    # inside a scan, where XLA:CPU lowers JAX's own conv gradients slowly (jaxecon.training.conv)
    scanned = lambda f: jax.jit(lambda x, k: jax.lax.scan(  # noqa: E731
        lambda _, xi: (None, jax.grad(loss(f), (0, 1))(xi, k)), None, x[None])[1])
    for a, b in zip(scanned(ours)(x, k), scanned(ref)(x, k)):  # to float rounding of sums over the batch
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=1e-6 * float(jnp.abs(b).max()))


def test_parts_conv_is_flax_conv_on_the_concatenated_parts():
    rng = np.random.default_rng(1)
    parts = [jnp.asarray(rng.normal(size=(4, 11, 11, c)), jnp.float32) for c in (8, 7)]
    ours = PartsConv(16, (3, 3), (2, 2))
    flax_conv = nn.Conv(16, (3, 3), strides=(2, 2), padding="VALID")
    p_ours = ours.init(jax.random.key(0), parts)
    p_flax = flax_conv.init(jax.random.key(0), jnp.concatenate(parts, -1))
    assert jax.tree.map(np.shape, p_ours) == jax.tree.map(np.shape, p_flax)
    assert all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(p_ours), jax.tree.leaves(p_flax)))
    np.testing.assert_allclose(np.asarray(ours.apply(p_flax, parts)),
                               np.asarray(flax_conv.apply(p_flax, jnp.concatenate(parts, -1))),
                               rtol=1e-5, atol=1e-5)


def test_conv_lstm_replays_a_sequence_as_its_steps():
    """The SGD's one-call replay of [L, A] sequences (encoder on all L x A inputs,
    LSTM scanned) equals L single steps, resets included; gradients too."""
    net = ActorCritic(heads=(5, 3), model="keras_conv_lstm", fc_dim=16, num_fc=1, lstm_cell_size=8,
                      num_conv=2, idx_emb_dim=4, input_emb_vocab=10, vf_share_layers=False)
    rng = np.random.default_rng(2)
    length, a = 6, 4
    feats = {"flat": jnp.asarray(rng.normal(size=(length, a, 5)), jnp.float32),
             "world-idx_map": jnp.asarray(rng.integers(0, 12, (length, a, 2, 11, 11)), jnp.int16),
             "world-map": jnp.asarray(rng.random((length, a, 3, 11, 11)), jnp.float32)}
    index = jnp.asarray(np.tile(np.eye(a), (length, 1, 1)), jnp.float32)
    reset = jnp.asarray(rng.random((length, a)) < 0.3)
    carry = jax.tree.map(lambda z: jnp.asarray(rng.normal(size=z.shape), jnp.float32), net.initial_carry(a))
    shapes = jax.eval_shape(net.init, jax.random.key(0), carry, jax.tree.map(lambda x: x[0], feats), index[0],
                            reset[0])  # random values: net.init's orthogonal initialisers compile for seconds
    params = jax.tree.map(lambda s: jnp.asarray(0.3 * rng.normal(size=s.shape), s.dtype), shapes)

    def stepped(params):
        def step(c, x):
            c, logits, value = net.apply(params, c, *x)
            return c, (logits, value)
        return jax.lax.scan(step, carry, (feats, index, reset))

    def both(params):  # one compilation for all four
        return (stepped(params), net.apply(params, carry, feats, index, reset),
                jax.grad(lambda p: jnp.sum(stepped(p)[1][1]))(params),
                jax.grad(lambda p: jnp.sum(net.apply(p, carry, feats, index, reset)[2]))(params))

    (c1, (l1, v1)), (c2, l2, v2), g1, g2 = jax.jit(both)(params)
    assert l2.shape == (length, a, 2, 5) and v2.shape == (length, a)
    for x, y in zip(jax.tree.leaves((c1, l1, v1)), jax.tree.leaves((c2, l2, v2))):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-5, atol=1e-5)
    for x, y in zip(jax.tree.leaves(g1), jax.tree.leaves(g2)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-4, atol=1e-5)
