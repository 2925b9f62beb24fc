"""``jaxecon.core.backend``: the unrolled Threefry keys draw JAX's default keys' numbers.

Every ``jax.random`` function the economies use (split, fold-in, uniform,
normal, integers, permutations, choices, categorical, gamma, raw bits of
each width), jitted and eagerly, batched and not, gives bit-identical
results from ``unrolled_threefry_impl()`` keys and from default keys of the
same key data; with JAX's settings that change the numbers, the shim falls
back to JAX's default keys.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon.core import backend
from jaxecon.core.backend import unrolled_threefry_impl


def _draws(key):
    k1, k2 = jax.random.split(key)
    grid = jax.random.split(k2, (3, 4))
    folded = jax.random.fold_in(k1, 7)
    return {
        "split": jax.random.key_data(grid), "split1": jax.random.key_data(jax.random.split(k1, 1)),
        "fold_in": jax.random.key_data(folded),
        "uniform": jax.random.uniform(k1, (5, 3)), "normal": jax.random.normal(folded, (7,)),
        "randint": jax.random.randint(k1, (9,), 0, 100), "permutation": jax.random.permutation(folded, 13),
        "choice": jax.random.choice(k2, 10, (4,), replace=False),
        "categorical": jax.random.categorical(k1, jnp.arange(6.0), shape=(11,)),
        "gamma": jax.random.gamma(k1, 2.0, (3,)),
        "bits8": jax.random.bits(k1, (5,), jnp.uint8), "bits16": jax.random.bits(k1, (3,), jnp.uint16),
        "bits32": jax.random.bits(k1, ()),
        "vmapped": jax.vmap(lambda k: jax.random.uniform(k, (2,)))(grid.reshape(-1)),
    }


@pytest.mark.parametrize("seed", [0, 12345, 2**31 + 5])
def test_unrolled_threefry_keys_draw_the_default_numbers(seed):
    impl = unrolled_threefry_impl()
    assert impl is not None
    kd = jax.random.key_data(jax.random.key(seed))
    default = jax.jit(lambda kd: _draws(jax.random.wrap_key_data(kd)))(kd)
    jitted = jax.jit(lambda kd: _draws(jax.random.wrap_key_data(kd, impl=impl)))(kd)
    eager = _draws(jax.random.wrap_key_data(kd, impl=impl))
    for name, want in default.items():
        np.testing.assert_array_equal(jitted[name], want, err_msg=name)
        np.testing.assert_array_equal(eager[name], want, err_msg=name)
    assert jax.random.key_data(jax.random.key(seed, impl=impl)).tolist() == kd.tolist()


def test_unrolled_threefry_falls_back_where_the_numbers_would_differ():
    with jax.threefry_partitionable(False):
        assert unrolled_threefry_impl() is None
    with jax.default_prng_impl("rbg"):
        assert unrolled_threefry_impl() is None


def test_as_unrolled_key_draws_what_the_key_draws():
    """Typed and raw default keys are rewrapped (same draws); other keys, key
    batches and non-keys come back unchanged."""
    typed, raw = jax.random.key(3), jax.random.PRNGKey(3)
    for key in (typed, raw):
        out = backend.as_unrolled_key(key)
        assert jax.random.key_impl(out) == unrolled_threefry_impl()
        want = jax.jit(_draws)(jax.random.wrap_key_data(jax.random.key_data(typed)))
        got = jax.jit(lambda k: _draws(backend.as_unrolled_key(k)))(key)
        for name, value in want.items():
            np.testing.assert_array_equal(got[name], value, err_msg=name)
    rbg = jax.random.key(3, impl="rbg")
    batch = jax.random.split(typed, 2)
    for other in (rbg, batch, jax.random.key_data(batch), None, 3, np.zeros(2, np.float32)):
        assert backend.as_unrolled_key(other) is other
    with jax.threefry_partitionable(False):
        assert backend.as_unrolled_key(typed) is typed


@pytest.mark.parametrize("n", [5, 300, 10_000])
def test_sort_floats_is_jnp_sort(n):
    """Bit for bit ``jnp.sort``'s values (no -0.0 here), long vectors as integer keys."""
    _check_sort(n, np.float32)


def test_sort_floats_float64_under_x64():
    with jax.enable_x64(True):
        _check_sort(1000, np.float64)


def _check_sort(n, dtype):
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.normal(size=n - 4) * 10.0 ** rng.integers(-30, 30, size=n - 4),
                        [np.inf, -np.inf, 0.0, 1e-45]]).astype(dtype)
    got, want = jax.jit(backend.sort_floats)(jnp.asarray(x)), jnp.sort(jnp.asarray(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got).view(np.uint8), np.asarray(want).view(np.uint8))


def test_sort_floats_zeros_nans_and_gradient():
    x = jnp.asarray(np.r_[np.linspace(-5, 5, 297), [0.0, -0.0, np.nan]].astype(np.float32))
    got = np.asarray(backend.sort_floats(x))  # a NaN with a clear sign bit: last, as jnp.sort
    assert np.isnan(got[-1]) and np.array_equal(got[:-1], np.sort(np.asarray(x))[:-1])
    zeros = np.flatnonzero(got == 0)
    assert np.signbit(got[zeros[0]]) and not np.signbit(got[zeros[-1]])  # -0.0 before +0.0
    w = jnp.arange(300.0)
    y = x[:-1] * 1.5  # no NaN: gradients compared with jnp.sort's
    g = jax.grad(lambda v: jnp.sum(backend.sort_floats(v) * w[:-1]))(y)
    np.testing.assert_array_equal(g, jax.grad(lambda v: jnp.sum(jnp.sort(v) * w[:-1]))(y))
    with pytest.raises(ValueError, match="1-D float32/float64"):
        backend.sort_floats(jnp.zeros((2, 300)))
