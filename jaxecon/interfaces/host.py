"""One economy (or a vmapped batch of them) driven from the host: numpy in, numpy out.

The TF-Agents and RLHive interfaces are thin adapters over ``HostEconomy``, which
holds the PRNG key, the ``EnvState`` and the ``EnvParams`` of a jaxecon env and
calls its jitted ``reset`` and ``step`` (compiled once per env and batch
size, shared by every interface built on the same env object). Each call is
one jitted dispatch (the key is split inside it) and one transfer of the
observations, rewards, done flag and info back to the host; the state stays
on the device.

Episodes follow Foundation's env object: a reset after the first carries
over what Foundation keeps across episodes (``env.reset(..., prev_state=...)``:
completions, annealing, the energy warm-up, Saez buffers).
"""

from __future__ import annotations

import copy
import numbers
import weakref
from typing import Any, NamedTuple

import jax
import numpy as np

from jaxecon.core import validators
from jaxecon.core.env import Economy
from jaxecon.env_checks import env_type_error
from jaxecon.factory import make_from_config
from jaxecon.render import render_world
from jaxecon.wrappers.base import unwrap_state

__all__ = ["RENDER_MODES", "HostEconomy", "Outputs", "as_env", "check_action", "render_state", "spaces_of"]

#: The render modes every interface accepts.
RENDER_MODES = ("rgb_array", "human")


def as_env(env_or_config, argument: str = "env_or_config") -> Economy:
    """The jaxecon env for ``env_or_config``: the env itself, or one built
    from a Foundation-style config dict (``jaxecon.make_from_config``; the
    dict is copied, not consumed).

    Raises:
        TypeError: anything else (names ``argument``); a wrapper is told to
            pass its ``.unwrapped`` env, a Foundation shim env its ``.core``
            (the interface adds its own episode logic).
        ValueError / KeyError: a bad config, as ``jaxecon.make_from_config``
            (a bad group declaration: one line naming the group and the count).
    """
    if isinstance(env_or_config, dict):
        env_or_config = make_from_config(copy.deepcopy(env_or_config))
    if isinstance(env_or_config, Economy):
        return env_or_config
    raise env_type_error(
        env_or_config, argument,
        "a jaxecon env (jaxecon.make(...)) or a Foundation-style config dict with a 'scenario_name' key",
    )


def spaces_of(env: Economy) -> dict:
    """``{group: (observation space, action space)}`` per group of
    ``env.agent_groups``, of ONE agent of the group, from
    ``env.observation_space(group)`` and ``env.action_space(group)``
    (``jaxecon.spaces`` objects); Foundation's groups: ``{"a": ..., "p": ...}``,
    one mobile agent's and the planner's."""
    return {g: (env.observation_space(g), env.action_space(g)) for g in env.group_names}


#: How many bad entries an action's error lists by index (the rest are counted).
_SHOWN = 5


def check_action(value, shape: tuple, low, high, name: str) -> np.ndarray:
    """``value`` as an int32 array of ``shape`` with ``low <= value <= high``.

    Args:
        value: the action (a number or array-like of integers).
        shape: the required shape.
        low, high: inclusive bounds, broadcastable to ``shape``.
        name: how the error messages call the value, e.g. ``'action["a"]'``.
    Raises:
        ValueError: not an integer, wrong shape, or out of bounds (names
            ``name``, the first five bad entries and how many more, and the allowed range).
    """
    arr = np.asarray(value)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}: {value!r}")
    if arr.shape != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {arr.shape}")
    low = np.broadcast_to(low, shape)
    high = np.broadcast_to(high, shape)
    bad = (arr < low) | (arr > high)
    if np.any(bad):
        where = np.argwhere(bad).tolist() if arr.ndim else []
        more = f" and {len(where) - _SHOWN} more" if len(where) > _SHOWN else ""
        allowed = (f"0..{int(high.flat[0])}" if np.all(low == 0) and np.all(high == high.flat[0])
                   else f"per entry {low.tolist()}..{high.tolist()}")
        raise ValueError(
            f"{name} is outside the action space: {arr.tolist()}"
            + (f" (bad entries at {where[:_SHOWN]}{more})" if where else "") + f"; allowed: {allowed}"
        )
    return arr.astype(np.int32)


def render_state(state) -> np.ndarray:
    """The world of an ``EnvState`` as ``jaxecon.render.render_world`` draws it
    (the plain picture; ``jaxecon.video.world_frames`` draws an episode's
    annotated video frames, ``jaxecon.wrappers.rgb.render_frame`` this picture
    jitted).

    Used by every interface's ``render``: TF-Agents and RLHive pass their
    ``HostEconomy``'s state, PettingZoo and Gymnasium the Foundation shim's.

    Args:
        state: an ``EnvState`` (device or numpy leaves), or a wrapper's state
            holding one, with any leading batch axes ``B``; its maps, House
            owners and agent locations are fetched in one transfer.
    Returns:
        uint8 ``[*B, H * 16, W * 16, 3]``: resources, water, houses by owner
        and the mobile agents at their locations.
    Raises:
        TypeError: ``state`` is not one (batched) ``EnvState``: a tuple or
            list of states is refused, saying how to stack them.
    """
    if isinstance(state, (tuple, list)):
        raise TypeError(f"state must be one EnvState (several: one EnvState with a leading batch axis, "
                        f"jax.tree.map(lambda *x: jnp.stack(x), *states)), got a {type(state).__name__} "
                        f"of {len(state)}")
    state = unwrap_state(state)
    maps, owner, loc = jax.device_get((state.maps, state.owner, state.loc))
    lead = np.shape(loc)[:-2]
    frames = [
        render_world({k: np.asarray(v)[i] for k, v in maps.items()},
                     owner=None if "House" not in owner else np.asarray(owner["House"])[i],
                     loc=np.asarray(loc)[i])
        for i in np.ndindex(*lead)
    ]
    return np.stack(frames).reshape(lead + frames[0].shape)


class Outputs(NamedTuple):
    """Host copies (numpy) of what the last reset or step returned.

    Keyed by group (``env.group_names``; Foundation's ``"a"`` and ``"p"``): a
    mobile-agent group's entries have a leading axis of its ``count`` agents,
    a planner's none.

    Attributes:
        obs: ``{group: {field: [B?, count, ...] (a mobile group) or [B?, ...]
            (a planner)}}`` per group of ``env.agent_groups`` (Foundation's:
            ``{"a": {field: [B?, n, ...]}, "p": {field: [B?, ...]}}``).
        reward: ``{group: float [B?, count] or [B?]}`` likewise (Foundation's:
            ``{"a": float [B?, n], "p": float [B?]}``); zeros after a reset.
        done: bool [B?]: the episode reached ``episode_length``.
        info: the step's info dict (``{}`` after a reset).
    """

    obs: Any
    reward: Any
    done: Any
    info: Any


class _Compiled(NamedTuple):
    reset: Any
    reset_from: Any
    step: Any


_COMPILED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _compiled(env: Economy, batch_size: int | None) -> _Compiled:
    """The jitted reset/step of ``env`` for ``batch_size`` (None: one economy), cached per env."""
    per_env = _COMPILED.setdefault(env, {})
    if batch_size in per_env:
        return per_env[batch_size]

    def keys(key):
        key, sub = jax.random.split(key)
        return key, (sub if batch_size is None else jax.random.split(sub, batch_size))

    def lift(fn, in_axes):
        return fn if batch_size is None else jax.vmap(fn, in_axes=in_axes)

    # The traced functions reach the env through a weak reference, so that the
    # cache entry (the value) does not keep its own key alive.
    env_ref = weakref.ref(env)
    reset_one = lift(lambda k, p: env_ref().reset(k, p), (0, None))
    reset_prev = lift(lambda k, p, s: env_ref().reset(k, p, prev_state=s), (0, None, 0))
    step_one = lift(lambda k, s, a, p: env_ref().step(k, s, a, p), (0, 0, 0, None))

    def reset(key, params):
        key, sub = keys(key)
        return key, reset_one(sub, params)

    def reset_from(key, params, prev):
        key, sub = keys(key)
        return key, reset_prev(sub, params, prev)

    def step(key, state, actions, params):
        key, sub = keys(key)
        return key, step_one(sub, state, actions, params)

    per_env[batch_size] = _Compiled(jax.jit(reset), jax.jit(reset_from), jax.jit(step))
    return per_env[batch_size]


def _interactive_backend() -> str:
    """'window', 'inline' or '' (headless) for matplotlib's current backend."""
    import matplotlib
    from matplotlib.backends import BackendFilter, backend_registry

    name = matplotlib.get_backend().lower()
    if name in backend_registry.list_builtin(BackendFilter.INTERACTIVE):
        return "window"
    return "inline" if "inline" in name else ""


class HostEconomy:
    """A jaxecon env, its params, PRNG key and current state, stepped from the host.

    Args:
        env: the jaxecon env.
        params: ``EnvParams`` (default: ``env.default_params``).
        batch_size: None (one economy) or int >= 1 (that many economies,
            vmapped, each with its own key; arrays get a leading batch axis).
        seed: int >= 0 seeding the key (default: the env's ``seed``, else 0).
    Raises:
        TypeError / ValueError: ``params`` that are not ``env``'s
            (``Economy.check_params``).
        ValueError: a bad ``batch_size`` or ``seed``.
    """

    def __init__(self, env: Economy, params=None, batch_size=None, seed=None):
        self.env = env
        self.params = env.default_params if params is None else params
        env.check_params(self.params)
        self.batch_size = (None if batch_size is None
                           else validators.check_int("batch_size", batch_size, minimum=1))
        self._compiled = _compiled(env, self.batch_size)
        self.state = None
        self.outputs: Outputs | None = None
        self._figure = None
        if seed is None:
            seed = 0 if env.seed is None else env.seed
        self.seed(seed)

    def seed(self, seed) -> None:
        """Re-key with ``seed`` (int >= 0); the next reset or step draws from it.

        Raises:
            ValueError: ``seed`` is not an int >= 0.
        """
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        self.key = jax.random.key(int(seed))

    def _lead(self) -> tuple:
        return () if self.batch_size is None else (self.batch_size,)

    def reset(self) -> Outputs:
        """Start an episode (carrying over from the previous one, if any); returns its ``Outputs``."""
        if self.state is None:
            self.key, (obs, state) = self._compiled.reset(self.key, self.params)
        else:
            self.key, (obs, state) = self._compiled.reset_from(self.key, self.params, self.state)
        self.state = state
        lead = self._lead()
        # step's rewards, zero: float32 [B?, count] per mobile group, [B?] per planner
        reward = {g.name: np.zeros(lead + (() if g.is_planner else (g.count,)), np.float32)
                  for g in self.env.agent_groups}
        self.outputs = Outputs(jax.device_get(obs), reward, np.zeros(lead, bool), {})
        return self.outputs

    def step(self, actions: dict) -> Outputs:
        """One step with ``actions = {group: int32 [B?, count, ...] (a mobile
        group) or [B?, ...] (a planner)}`` (Foundation's: ``{"a": int32 [B?, n,
        ...], "p": int32 [B?, ...]}``; already checked); returns its ``Outputs``.

        Raises:
            RuntimeError: called before the first ``reset``.
        """
        if self.state is None:
            raise RuntimeError("step() before reset(): reset the environment first")
        self.key, (obs, state, reward, done, info) = self._compiled.step(
            self.key, self.state, actions, self.params)
        self.state = state
        obs, reward, done, info = jax.device_get((obs, reward, done, info))
        self.outputs = Outputs(obs, reward, np.asarray(done), dict(info))
        return self.outputs

    def render(self, mode: str = "rgb_array"):
        """``"rgb_array"``: the world as uint8 ``[H, W, 3]`` (``[B, H, W, 3]``
        when batched; ``jaxecon.render.render_world``). ``"human"``: shows
        it (the batch side by side) in a matplotlib figure (a window, a
        notebook output, or nothing when headless) and returns None.

        Raises:
            ValueError: an unknown ``mode`` (lists the allowed ones).
            RuntimeError: before the first ``reset``.
        """
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {list(RENDER_MODES)}, got {mode!r}")
        if self.state is None:
            raise RuntimeError("render() before reset(): reset the environment first")
        frames = render_state(self.state)
        if mode == "rgb_array":
            return frames
        self._show(frames if frames.ndim == 3 else np.concatenate(list(frames), axis=1))
        return None

    def _show(self, rgb: np.ndarray) -> None:
        import matplotlib.pyplot as plt

        if self._figure is None or not plt.fignum_exists(self._figure.number):
            self._figure, ax = plt.subplots()
            ax.set_axis_off()
            self._image = ax.imshow(rgb)
        else:
            self._image.set_data(rgb)
        where = _interactive_backend()
        if where == "window":
            plt.pause(0.001)
        elif where == "inline":
            from IPython import display

            display.clear_output(wait=True)
            display.display(self._figure)
        else:
            self._figure.canvas.draw()

    def close(self) -> None:
        """Close the ``"human"`` figure, if any."""
        if self._figure is not None:
            import matplotlib.pyplot as plt

            plt.close(self._figure)
            self._figure = None
