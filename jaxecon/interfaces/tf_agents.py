"""A jaxecon economy as a TF-Agents ``PyEnvironment`` (numpy in, numpy out).

Follows TF-Agents' ``tf_agents.environments.py_environment.PyEnvironment``
(v0.19): ``reset()``/``step(action)`` return ``TimeStep(step_type, reward,
discount, observation)``; specs describe every array; a batched environment
adds a leading batch axis that is not part of the specs; with
``handle_auto_reset`` the base class resets after a ``LAST`` step.

When ``tf_agents`` is importable (``BACKEND == "tf_agents"``), ``PyEnvironment``
subclasses the real ``tf_agents.environments.PyEnvironment`` and uses
TF-Agents' own ``ArraySpec``, ``BoundedArraySpec``, ``TimeStep`` and
``StepType`` (so TF-Agents' drivers, wrappers and ``TFPyEnvironment`` take
it). Otherwise (``BACKEND == "jaxecon"``) it subclasses a numpy-only base
class with the same public behaviour, on ``jaxecon.interfaces.specs``. The
choice is made once, at import time; this module's ``ArraySpec``,
``BoundedArraySpec``, ``TimeStep`` and ``StepType`` are the chosen classes.

Example::

    from jaxecon.interfaces.tf_agents import PyEnvironment
    import jaxecon.configs
    env = PyEnvironment(jaxecon.configs.gather_build_config(), batch_size=8)
    ts = env.reset()                       # ts.observation["a"]["flat"]: [8, 4, ...]
    ts = env.step({"a": np.zeros((8, 4), np.int32), "p": np.zeros((8, 1), np.int32)})

Agents, specs and arrays are keyed by agent group (``env.group_names``): a
mobile-agent group's arrays have a leading axis of its ``count`` agents, a
planner's none. Foundation's groups are ``"a"`` (``count`` = n_agents) and
``"p"``; an economy with ``mobile_agent_groups`` has one key per type, one
with ``n_planners=0`` no planner key, one with ``planner_groups`` one key per
planner. (``c`` = a group's count, ``B`` = batch size, only when batched.)

- ``observation_spec()``: ``{mobile group: {field: spec [c, ...]}, planner:
  {field: spec}}``, the fields of Foundation's observations (``flat``,
  ``world-map``, ``world-idx_map``, ``time``, ``action_mask``, the planner's
  ``agents``...). Derived from ``env.observation_space(group)``: a bounded
  quantity gets a ``BoundedArraySpec``, an unbounded one an ``ArraySpec``.
- ``action_spec()``: ``{mobile group: BoundedArraySpec int32 [c] or [c,
  n_subspaces], planner: BoundedArraySpec int32 [] or [n_planner_subspaces]}``
  (from ``env.action_space(group)``: ``0..n_actions-1``, or ``0..dims-1`` per
  subspace in multi-action mode).
- ``reward_spec()``: ``{mobile group: float32 [c], planner: float32 []}``;
  ``discount_spec()``: the same shapes, bounded to ``[0, 1]``.
- ``time_step_spec()``: ``TimeStep(step_type int32 [], reward_spec(),
  discount_spec(), observation_spec())``.

Episodes: ``FIRST`` after a reset (reward 0, discount 1), ``MID``, then
``LAST`` at ``episode_length`` steps. Foundation's episodes end only by the
time limit, which TF-Agents calls a truncation: the discount stays 1.0 at
``LAST``. The step after ``LAST`` starts a new episode and ignores its
action, whether the base class (``handle_auto_reset=True``) or the
environment itself resets; a new episode carries over what Foundation keeps
across episodes.
"""

from __future__ import annotations

import abc
import copy
from typing import Mapping

import numpy as np

from jaxecon import checkpoint, spaces
from jaxecon.core import validators
from jaxecon.interfaces import specs as _native
from jaxecon.interfaces.host import HostEconomy, as_env, check_action, spaces_of

try:
    from tf_agents.environments import py_environment as _tfa_py_environment
    from tf_agents.specs import array_spec as _tfa_array_spec
    from tf_agents.trajectories import time_step as _tfa_time_step
except ImportError:
    _tfa_py_environment = None

__all__ = [
    "BACKEND", "ArraySpec", "BoundedArraySpec", "PyEnvironment", "StepType", "TimeStep",
]

_KIND = "tf_agents.PyEnvironment"


class _NativePyEnvironment(abc.ABC):
    """TF-Agents' ``PyEnvironment`` base class without TensorFlow (the public
    behaviour of tf_agents v0.19's): subclasses implement ``observation_spec``,
    ``action_spec``, ``_reset`` and ``_step``; ``reset`` and ``step`` cache the
    current ``TimeStep`` and may not be overridden (``TypeError`` at class
    creation, where TF-Agents raises at construction)."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        overridden = [m for m in ("reset", "step") if m in vars(cls)]
        if overridden:
            raise TypeError(
                f"{cls.__name__} overrides {overridden}; implement _reset/_step instead"
            )

    def __init__(self, handle_auto_reset: bool = False):
        self._handle_auto_reset = handle_auto_reset
        self._current_time_step = None

    @property
    def batched(self) -> bool:
        """Whether arrays carry a leading batch axis (False here)."""
        return False

    @property
    def batch_size(self):
        """The batch size, or None when not batched.

        Raises:
            RuntimeError: a subclass marked itself batched without overriding this.
        """
        if self.batched:
            raise RuntimeError(f"{type(self).__name__} is batched but does not define batch_size")
        return None

    def should_reset(self, current_time_step) -> bool:
        """Whether ``step`` resets instead: ``handle_auto_reset`` and every step type is LAST."""
        return bool(self._handle_auto_reset and np.all(current_time_step.is_last()))

    @abc.abstractmethod
    def observation_spec(self):
        """The observations' spec (a nest of ``ArraySpec``)."""

    @abc.abstractmethod
    def action_spec(self):
        """The actions' spec (a nest of ``ArraySpec``)."""

    def reward_spec(self):
        """float32 scalar reward by default."""
        return _native.ArraySpec((), np.float32, name="reward")

    def discount_spec(self):
        """float32 scalar discount in [0, 1] by default."""
        return _native.BoundedArraySpec((), np.float32, 0.0, 1.0, name="discount")

    def time_step_spec(self):
        """``TimeStep`` of specs (scalar discount by default, as TF-Agents')."""
        return _native.TimeStep(
            step_type=_native.ArraySpec((), np.int32, name="step_type"),
            reward=self.reward_spec(),
            discount=_native.BoundedArraySpec((), np.float32, 0.0, 1.0, name="discount"),
            observation=self.observation_spec(),
        )

    def current_time_step(self):
        """The last ``TimeStep`` returned.

        Raises:
            ValueError: before the first ``reset`` or ``step``.
        """
        if self._current_time_step is None:
            raise ValueError("Current timestep not initialized.")
        return self._current_time_step

    def reset(self):
        """Start an episode; returns its FIRST ``TimeStep`` (also kept as the current one)."""
        self._current_time_step = self._reset()
        return self._current_time_step

    def step(self, action):
        """Advance with ``action``; resets instead (ignoring it) before the first
        reset or when ``should_reset(current_time_step())``."""
        if self._current_time_step is None or self.should_reset(self._current_time_step):
            return self.reset()
        self._current_time_step = self._step(action)
        return self._current_time_step

    def close(self) -> None:
        """Free resources (nothing by default)."""

    def __enter__(self):
        return self

    def __exit__(self, unused_exception_type, unused_exc_value, unused_traceback):
        self.close()

    def render(self, mode: str = "rgb_array"):
        """Raises NotImplementedError unless a subclass renders."""
        raise NotImplementedError("No rendering support.")

    def seed(self, seed):
        """Raises NotImplementedError unless a subclass seeds."""
        raise NotImplementedError("No seed support for this environment.")

    def get_info(self):
        """Raises NotImplementedError unless a subclass keeps info."""
        raise NotImplementedError("No support of get_info for this environment.")

    def get_state(self):
        """Raises NotImplementedError unless a subclass saves state."""
        raise NotImplementedError("This environment has not implemented `get_state()`.")

    def set_state(self, state) -> None:
        """Raises NotImplementedError unless a subclass restores state."""
        raise NotImplementedError("This environment has not implemented `set_state()`.")

    @abc.abstractmethod
    def _step(self, action):
        """One step (see ``step``)."""

    @abc.abstractmethod
    def _reset(self):
        """A new episode's first ``TimeStep`` (see ``reset``)."""


if _tfa_py_environment is None:
    BACKEND = "jaxecon"
    ArraySpec = _native.ArraySpec
    BoundedArraySpec = _native.BoundedArraySpec
    TimeStep = _native.TimeStep
    StepType = _native.StepType
    _Base = _NativePyEnvironment
else:
    BACKEND = "tf_agents"
    ArraySpec = _tfa_array_spec.ArraySpec
    BoundedArraySpec = _tfa_array_spec.BoundedArraySpec
    TimeStep = _tfa_time_step.TimeStep
    StepType = _tfa_time_step.StepType
    _Base = _tfa_py_environment.PyEnvironment


def _spec_of(space, lead: tuple, name: str):
    """The (Bounded)ArraySpec nest of a ``jaxecon.spaces`` space, ``lead`` prepended."""
    if isinstance(space, spaces.Dict):
        return {k: _spec_of(v, lead, f"{name}/{k}") for k, v in space.spaces.items()}
    shape = lead + tuple(space.shape)
    dtype = np.dtype(space.dtype)
    if isinstance(space, spaces.MultiDiscrete):
        # both bounds at full shape: TF-Agents' sampler pairs their elements one to one
        high = np.broadcast_to(np.asarray(space.nvec) - 1, shape)
        return BoundedArraySpec(shape, dtype, np.zeros(shape, dtype), high, name)
    if isinstance(space, spaces.Discrete):
        return BoundedArraySpec(shape, dtype, 0, int(space.n) - 1, name)
    low = np.broadcast_to(np.asarray(space.low, np.float64), shape)
    high = np.broadcast_to(np.asarray(space.high, np.float64), shape)
    if np.all(np.isinf(low)) and np.all(np.isinf(high)):
        return ArraySpec(shape, dtype, name)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        low, high = np.clip(low, info.min, info.max), np.clip(high, info.min, info.max)
    return BoundedArraySpec(shape, dtype, low, high, name)


def _map(fn, tree, spec):
    """``fn(leaf, spec)`` over a nest of dicts (the observation/reward layout)."""
    if isinstance(spec, Mapping):
        return {k: _map(fn, tree[k], spec[k]) for k in spec}
    return fn(tree, spec)


class PyEnvironment(_Base):
    """A jaxecon economy (or ``batch_size`` of them, vmapped) as a TF-Agents ``PyEnvironment``.

    Args:
        env_or_config: a jaxecon env (``jaxecon.make(...)``) or a
            Foundation-style config dict (``jaxecon.make_from_config``).
        batch_size: None (one economy, ``batched`` False) or int >= 1 (that
            many economies with independent keys; every array of actions and
            time steps has a leading axis of that size).
        handle_auto_reset: let the base class reset after LAST (TF-Agents').
        params: ``EnvParams`` (default ``env.default_params``), shared by the batch.
        seed: int >= 0 (default: the env's ``seed``, else 0); see ``seed()``.

    Every spec and array is keyed by agent group (``env.group_names``; see
    the module docstring), with declared groups as with Foundation's.

    Raises:
        TypeError: ``env_or_config`` is neither an env nor a config dict.
        ValueError: a bad ``batch_size``, ``handle_auto_reset`` or ``seed``,
            or a bad config (a bad group declaration names the group).
    """

    def __init__(self, env_or_config, batch_size=None, handle_auto_reset=False, *,
                 params=None, seed=None):
        env = as_env(env_or_config)
        handle_auto_reset = validators.check_bool("handle_auto_reset", handle_auto_reset)
        self._economy = HostEconomy(env, params=params, batch_size=batch_size, seed=seed)
        of = spaces_of(env)
        # a mobile-agent group's arrays lead with its agents, a planner's with nothing
        agents = {g.name: () if g.is_planner else (g.count,) for g in env.agent_groups}
        self._observation_spec = {g: _spec_of(of[g][0], lead, f"observation/{g}") for g, lead in agents.items()}
        self._action_spec = {g: _spec_of(of[g][1], lead, f"action/{g}") for g, lead in agents.items()}
        self._reward_spec = {g: ArraySpec(lead, np.float32, f"reward/{g}") for g, lead in agents.items()}
        self._discount_spec = {g: BoundedArraySpec(lead, np.float32, 0.0, 1.0, f"discount/{g}")
                               for g, lead in agents.items()}
        super().__init__(handle_auto_reset=handle_auto_reset)

    # ---------------------------------------------------------------- properties
    @property
    def env(self):
        """The jaxecon env underneath."""
        return self._economy.env

    @property
    def params(self):
        """The ``EnvParams`` every step uses."""
        return self._economy.params

    @property
    def batched(self) -> bool:
        """True when built with a ``batch_size``."""
        return self._economy.batch_size is not None

    @property
    def batch_size(self):
        """The number of vmapped economies, or None."""
        return self._economy.batch_size

    # --------------------------------------------------------------------- specs
    def observation_spec(self) -> dict:
        """``{mobile group: {field: spec [count, ...]}, planner: {field: spec}}``
        (Foundation's: ``"a"``, ``"p"``; see the module docstring)."""
        return self._observation_spec

    def action_spec(self) -> dict:
        """``{mobile group: BoundedArraySpec int32 [count(, n_sub)], planner:
        BoundedArraySpec int32 [(n_sub_p)]}``."""
        return self._action_spec

    def reward_spec(self) -> dict:
        """``{mobile group: ArraySpec float32 [count], planner: ArraySpec float32 []}``."""
        return self._reward_spec

    def discount_spec(self) -> dict:
        """``{mobile group: BoundedArraySpec float32 [count] in [0, 1], planner: ... []}``."""
        return self._discount_spec

    def time_step_spec(self):
        """``TimeStep(step_type int32 [], reward_spec(), discount_spec(), observation_spec())``."""
        return TimeStep(
            step_type=ArraySpec((), np.int32, name="step_type"),
            reward=self._reward_spec, discount=self._discount_spec,
            observation=self._observation_spec,
        )

    # ------------------------------------------------------------------ stepping
    def _time_step(self, step_type, outputs):
        lead = () if self.batch_size is None else (self.batch_size,)
        reward = _map(lambda r, s: np.asarray(r, np.float32).reshape(lead + s.shape),
                      outputs.reward, self._reward_spec)
        discount = {k: np.ones(lead + s.shape, np.float32) for k, s in self._discount_spec.items()}
        obs = _map(lambda x, s: np.asarray(x, s.dtype), outputs.obs, self._observation_spec)
        return TimeStep(step_type=step_type, reward=reward, discount=discount, observation=obs)

    def _reset(self):
        outputs = self._economy.reset()
        first = (StepType.FIRST if self.batch_size is None
                 else np.full(self.batch_size, StepType.FIRST, np.int32))
        return self._time_step(first, outputs)

    def _step(self, action):
        if np.all(self._current_time_step.is_last()):
            return self._reset()
        outputs = self._economy.step(self._check_action(action))
        step_type = np.where(outputs.done, StepType.LAST, StepType.MID).astype(np.int32)
        return self._time_step(step_type if self.batched else StepType(step_type), outputs)

    def _check_action(self, action) -> dict:
        """``action`` checked against ``action_spec()`` (plus the batch axis), as int32 arrays.

        Raises:
            ValueError: not a dict with exactly the groups' keys (Foundation's:
                "a" and "p"; naming the missing and unknown ones), or an
                entry of the wrong dtype, shape or outside the spec's bounds
                (naming the group's entry, e.g. ``action["builders"]``).
        """
        groups = list(self._action_spec)
        if not isinstance(action, Mapping) or set(action) != set(groups):
            got = sorted(map(str, action)) if isinstance(action, Mapping) else type(action).__name__
            keys = " and ".join(filter(None, [", ".join(f'"{g}"' for g in groups[:-1]), f'"{groups[-1]}"']))
            wrong = ""
            if isinstance(action, Mapping):
                missing, unknown = [g for g in groups if g not in action], sorted(set(map(str, action)) - set(groups))
                wrong = "".join([f"; missing {missing}" if missing else "", f"; unknown {unknown}" if unknown else ""])
            raise ValueError(f"action must be a dict with keys {keys} (action_spec(), one per agent group), "
                             f"got {got}{wrong}")
        lead = () if self.batch_size is None else (self.batch_size,)
        return {k: check_action(action[k], lead + s.shape, s.minimum, s.maximum, f'action["{k}"]')
                for k, s in self._action_spec.items()}

    def get_info(self) -> dict:
        """The info of the last step (``{}`` after a reset): ``{key: numpy scalar or [B]}``.

        Raises:
            ValueError: before the first reset.
        """
        if self._economy.outputs is None:
            raise ValueError("get_info() before reset(): there is no step yet")
        return self._economy.outputs.info

    # ------------------------------------------------------------------- state
    def get_state(self) -> checkpoint.Snapshot:
        """An immutable token of everything that determines what follows:
        the ``EnvState`` (on the device), the params, the PRNG key, the
        current time step and info (read-only copies). ``set_state`` on this
        env, or on another ``PyEnvironment`` of the same configuration and
        batch size, continues bit for bit."""
        e = self._economy
        return checkpoint.snapshot(
            e.env, e.state, e.params, kind=_KIND,
            extra={"key": e.key, "batch_size": e.batch_size, "time_step": self._current_time_step,
                   "outputs": e.outputs})

    def set_state(self, state) -> None:
        """Restore a token from ``get_state``.

        Raises:
            TypeError: ``state`` is not such a token.
            ValueError: it comes from another kind of interface, another
                batch size, or an env of another configuration (names the
                differing keys).
        """
        snap = checkpoint.verify(state, self.env, kind=_KIND, argument="state")
        if snap.extra["batch_size"] != self.batch_size:
            raise ValueError(
                f"state comes from an env with batch_size={snap.extra['batch_size']}, "
                f"this one has batch_size={self.batch_size}"
            )
        e = self._economy
        e.state, e.params, e.key = snap.state, snap.params, snap.extra["key"]
        e.outputs = copy.deepcopy(snap.extra["outputs"])
        self._current_time_step = copy.deepcopy(snap.extra["time_step"])

    def seed(self, seed) -> None:
        """Re-key the environment with ``seed`` (int >= 0); the next reset
        (or step) draws from it, so equal seeds give equal episodes.

        Raises:
            ValueError: ``seed`` is not an int >= 0.
        """
        self._economy.seed(seed)

    # ---------------------------------------------------------------- rendering
    def render(self, mode: str = "rgb_array"):
        """``"rgb_array"``: the world as uint8 ``[H, W, 3]`` (``[B, H, W, 3]``
        when batched; ``jaxecon.render.render_world``); ``"human"``: shows it
        in a matplotlib figure and returns None.

        Raises:
            ValueError: an unknown ``mode`` (lists "rgb_array" and "human").
            RuntimeError: before the first reset.
        """
        return self._economy.render(mode)

    def close(self) -> None:
        """Close the ``"human"`` figure, if any."""
        self._economy.close()
