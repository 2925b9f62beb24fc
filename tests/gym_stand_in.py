"""A stand-in for the parts of ``gym`` Foundation's env wrappers use, for tests.

Foundation's WarpDrive wrapper (``ai_economist/foundation/env_wrapper.py``)
imports ``gym.spaces`` (``Box``, ``Dict``, ``Discrete``, ``MultiDiscrete``) and
its RLlib wrapper ``gym.utils.seeding``. ``gym`` is not a test dependency, so
when it is not installed :func:`install` registers this module's classes as
``gym``, ``gym.spaces``, ``gym.utils`` and ``gym.utils.seeding``; with gym
installed the real one is used. The classes follow gym 0.26's behaviour for
what the wrappers call: construction, ``shape``/``dtype``/``low``/``high``/
``n``/``nvec``, ``contains``, ``sample``, ``keys``/``[]`` of ``Dict``.
"""

from __future__ import annotations

import sys
import types

import numpy as np


class Space:
    """Base of the stand-in spaces: ``shape``, ``dtype`` and a ``np_random`` generator."""

    def __init__(self, shape=None, dtype=None, seed=None):
        self.shape = None if shape is None else tuple(shape)
        self.dtype = None if dtype is None else np.dtype(dtype)
        self.np_random = np.random.default_rng(seed)

    def __contains__(self, x) -> bool:
        return self.contains(x)


class Box(Space):
    """``Box(low, high, shape, dtype)``: arrays of ``shape`` with low <= x <= high."""

    def __init__(self, low, high, shape=None, dtype=np.float32, seed=None):
        dtype = np.dtype(dtype)
        shape = tuple(shape) if shape is not None else np.shape(low)
        super().__init__(shape, dtype, seed)
        with np.errstate(invalid="ignore", over="ignore"):
            self.low = np.full(shape, low).astype(dtype)
            self.high = np.full(shape, high).astype(dtype)

    def contains(self, x) -> bool:
        if not isinstance(x, np.ndarray):
            try:
                x = np.asarray(x, dtype=self.dtype)
            except (ValueError, TypeError):
                return False
        return bool(
            np.can_cast(x.dtype, self.dtype) and x.shape == self.shape
            and np.all(x >= self.low) and np.all(x <= self.high)
        )

    def sample(self):
        lo = np.maximum(self.low.astype(np.float64), -1e6)
        hi = np.minimum(self.high.astype(np.float64), 1e6)
        return self.np_random.uniform(lo, hi, self.shape).astype(self.dtype)


class Discrete(Space):
    """``Discrete(n)``: the integers 0..n-1."""

    def __init__(self, n, seed=None):
        super().__init__((), np.int64, seed)
        self.n = int(n)

    def contains(self, x) -> bool:
        if isinstance(x, (int, np.integer)) or (isinstance(x, np.ndarray) and x.shape == () and x.dtype.kind in "iu"):
            return 0 <= int(x) < self.n
        return False

    def sample(self):
        return np.int64(self.np_random.integers(self.n))


class MultiDiscrete(Space):
    """``MultiDiscrete(nvec)``: integer vectors with 0 <= x[i] < nvec[i]."""

    def __init__(self, nvec, dtype=np.int64, seed=None):
        self.nvec = np.asarray(nvec, dtype=np.int64)
        super().__init__(self.nvec.shape, dtype, seed)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return bool(x.shape == self.shape and x.dtype.kind in "iu" and np.all(x >= 0) and np.all(x < self.nvec))

    def sample(self):
        return (self.np_random.random(self.nvec.shape) * self.nvec).astype(self.dtype)


class Dict(Space):
    """``Dict({key: space})``: dicts with exactly those keys, each in its space."""

    def __init__(self, spaces=None, seed=None):
        super().__init__(None, None, seed)
        self.spaces = dict(spaces or {})

    def __getitem__(self, key):
        return self.spaces[key]

    def keys(self):
        return self.spaces.keys()

    def items(self):
        return self.spaces.items()

    def __iter__(self):
        return iter(self.spaces)

    def contains(self, x) -> bool:
        return isinstance(x, dict) and set(x) == set(self.spaces) and all(
            self.spaces[k].contains(v) for k, v in x.items()
        )

    def sample(self):
        return {k: s.sample() for k, s in self.spaces.items()}


def np_random(seed=None):
    """``(generator, seed)`` as ``gym.utils.seeding.np_random``."""
    if seed is None:
        seed = int(np.random.SeedSequence().entropy % 2**63)
    return np.random.default_rng(seed), int(seed)


def hash_seed(seed=None, max_bytes=8):
    """gym 0.21's ``hash_seed`` (a deterministic integer from ``seed``)."""
    return int(np.random.SeedSequence(int(seed or 0)).generate_state(1, np.uint64)[0]) % 2 ** (8 * max_bytes)


def install() -> None:
    """Register the stand-in as ``gym`` unless a real ``gym`` is importable."""
    try:
        import gym  # noqa: F401
        return
    except ImportError:
        pass
    gym = types.ModuleType("gym")
    spaces = types.ModuleType("gym.spaces")
    for cls in (Space, Box, Discrete, MultiDiscrete, Dict):
        setattr(spaces, cls.__name__, cls)
    utils = types.ModuleType("gym.utils")
    seeding = types.ModuleType("gym.utils.seeding")
    seeding.np_random, seeding.hash_seed = np_random, hash_seed
    gym.spaces, gym.utils, utils.seeding = spaces, utils, seeding
    sys.modules.update({"gym": gym, "gym.spaces": spaces, "gym.utils": utils, "gym.utils.seeding": seeding})
