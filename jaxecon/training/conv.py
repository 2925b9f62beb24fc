"""A 2-D convolution (``conv_valid``, and the flax layer ``PartsConv``) whose
gradient XLA:CPU runs at full speed inside loops.

The conv-LSTM's SGD runs inside ``lax.scan`` (minibatches, epochs). There,
XLA:CPU lowers the two convolutions of JAX's own transpose rule (the input
gradient, an ``lhs_dilation`` conv against the kernel as ``01oi``, and the
kernel gradient, a conv with the examples as the contracted feature axis, as
``f01b_i01o->01bf``) with its generic loop emitter instead of Eigen's
convolution, several times slower than at the top level of a jit and most
of the SGD's time of ``--config phase1`` (measured with
``benchmarks/profile_training.py``: docs/training.md, "The paper's model on
the CPU: where an update's time goes"). ``conv_valid`` computes the same
forward convolution with a gradient that XLA:CPU runs fast anywhere: the
kernel gradient as a conv in the canonical ``NHWC x HWIO -> NHWC`` form
(Eigen's), summed over chunks of ``DK_CHUNK`` examples; the input gradient
as one matmul and strided adds (``_input_grad``). The values are those of
``lax.conv_general_dilated`` and its gradient up to float rounding
(summation order; ``tests/test_training.py``).

``PartsConv`` is ``flax.linen.Conv`` (VALID; the same parameters and
initialisation) over an input given as channel parts, e.g. an embedded index
map and a float map: a sum of one ``conv_valid`` per part, so that the parts
are never concatenated and a part that needs no gradient (an observation)
gets none computed.
"""

from __future__ import annotations

from functools import partial

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
from flax.linen.initializers import zeros_init

__all__ = ["DK_CHUNK", "PartsConv", "conv_valid"]

_DN = ("NHWC", "HWIO", "NHWC")

#: Examples per kernel-gradient convolution: a conv that contracts over many
#: examples is slower per example on the CPU (docs/training.md), so larger
#: batches are summed chunk by chunk.
DK_CHUNK = 64


@partial(jax.custom_vjp, nondiff_argnums=(2,))
def conv_valid(x, kernel, strides: tuple):
    """``lax.conv_general_dilated(x, kernel, strides, "VALID")`` in NHWC x HWIO -> NHWC.

    Args:
        x: float ``[N, H, W, C]``; kernel: float ``[kh, kw, C, O]``;
        strides: ``(sh, sw)`` (static).
    Returns:
        ``[N, (H - kh) // sh + 1, (W - kw) // sw + 1, O]``.
    """
    return jax.lax.conv_general_dilated(x, kernel, strides, "VALID", dimension_numbers=_DN)


def _fwd(x, kernel, strides):
    return conv_valid(x, kernel, strides), (x, kernel)


def _bwd(strides, res, g):
    x, kernel = res
    return _input_grad(g, kernel, strides, x.shape), _kernel_grad(x, g, strides, kernel.shape[:2])


def _input_grad(g, kernel, strides, x_shape):
    """The input gradient ``[N, H, W, C]``: each output's ``g @ kernel^T`` (one matmul), its
    ``kh x kw`` taps added back at their input positions (``lax.pad`` with the strides as
    interior padding). Faster on the CPU than the lhs-dilated conv, which XLA also swaps
    into a slow layout for small outputs (docs/training.md)."""
    kh, kw, c, o = kernel.shape
    n, ho, wo, _ = g.shape
    (sh, sw), (h, w) = strides, x_shape[1:3]
    cols = (g.reshape(-1, o) @ kernel.reshape(-1, o).T).reshape(n, ho, wo, kh, kw, c)
    zero = jnp.zeros((), g.dtype)
    return sum(jax.lax.pad(cols[:, :, :, dy, dx], zero,
                           ((0, 0, 0), (dy, h - dy - (ho - 1) * sh - 1, sh - 1),
                            (dx, w - dx - (wo - 1) * sw - 1, sw - 1), (0, 0, 0)))
               for dy in range(kh) for dx in range(kw))


def _kernel_grad(x, g, strides, size):
    """The kernel gradient ``[kh, kw, C, O]``, summed over chunks of about ``DK_CHUNK`` examples."""
    n = x.shape[0]
    chunk = max((c for c in range(1, DK_CHUNK + 1) if n % c == 0), default=1)
    if chunk < DK_CHUNK // 2:  # no divisor near DK_CHUNK: pad with zero examples (they add 0)
        chunk = DK_CHUNK
        pad = -n % chunk
        x = jnp.pad(x, ((0, pad),) + ((0, 0),) * 3)
        g = jnp.pad(g, ((0, pad),) + ((0, 0),) * 3)
    if x.shape[0] == chunk:
        return _kernel_grad_conv(x, g, strides, size)
    xs = x.reshape((-1, chunk) + x.shape[1:])
    gs = g.reshape((-1, chunk) + g.shape[1:])
    zero = jnp.zeros(size + (x.shape[-1], g.shape[-1]), x.dtype)
    step = lambda acc, xg: (acc + _kernel_grad_conv(*xg, strides, size), None)  # noqa: E731
    return jax.lax.scan(step, zero, (xs, gs))[0]


def _kernel_grad_conv(x, g, strides, size):
    """One conv: the channels as the batch, the examples as the contracted feature axis."""
    dk = jax.lax.conv_general_dilated(x.transpose(3, 1, 2, 0), g.transpose(1, 2, 0, 3), (1, 1), "VALID",
                                      rhs_dilation=strides, dimension_numbers=_DN)
    return dk[:, :size[0], :size[1]].transpose(1, 2, 0, 3)


conv_valid.defvjp(_fwd, _bwd)


class PartsConv(nn.Module):
    """``flax.linen.Conv(features, kernel_size, strides, padding="VALID")`` over channel parts.

    ``__call__(parts) -> [N, H', W', features]``: ``parts`` is a list of NHWC
    arrays ``[N, H, W, C_i]`` whose channels, concatenated in order, are the
    layer's input; the parameters are ``Conv``'s (``kernel [kh, kw, sum C_i,
    features]``, ``bias [features]``, same names and initialisers), the
    result ``Conv``'s on the concatenated input up to float rounding (a sum
    over the parts).

    Attributes:
        features: output channels; kernel_size, strides: ``(kh, kw)``, ``(sh, sw)``;
        kernel_init, bias_init: as ``Conv``'s.
    """

    features: int
    kernel_size: tuple
    strides: tuple
    kernel_init: nn.initializers.Initializer = nn.linear.default_kernel_init
    bias_init: nn.initializers.Initializer = zeros_init()

    @nn.compact
    def __call__(self, parts: list) -> jax.Array:
        sizes = [p.shape[-1] for p in parts]
        kernel = self.param("kernel", self.kernel_init, tuple(self.kernel_size) + (sum(sizes), self.features),
                            jnp.float32)
        bias = self.param("bias", self.bias_init, (self.features,), jnp.float32)
        edges = np.cumsum([0] + sizes)
        y = sum(conv_valid(p, kernel[:, :, a:b], tuple(self.strides))
                for p, a, b in zip(parts, edges[:-1], edges[1:]))
        return y + bias
