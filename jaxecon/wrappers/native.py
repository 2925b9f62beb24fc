"""The native observation adapters: one normalised vector, or RGB frames, per agent; and ``policy_env``.

Policy-facing views of a jaxecon economy, pure JAX (jittable, vmappable, no
host work inside a step), after the native gridworld observation adapters
that jaxecon's economies share with other gridworld domains:

- ``NativeObjectObservationWrapper`` flattens the structured observation
  without rendering (the training default): every Box field of an agent's
  observation space, flattened and concatenated into one float32 vector,
  with the elements whose bounds are finite and unequal normalised to
  [0, 1] and the others kept as they are.
- ``NativeRGBObservationWrapper`` gives every agent an RGB frame of the
  world drawn by ``jaxecon.wrappers.rgb`` (``jaxecon.render``'s colours),
  float32 in [0, 1], for play, inspection and visual comparisons.
- ``policy_env(env, render_mode=None, flatten_observations=False, ...)``
  picks one of them (or none) from the factory arguments.

Both adapters return, per agent group (``env.group_names``; Foundation's
``"a"``, the mobile agents, batched along axis 0, and ``"p"``, the planner;
a declared mobile-agent type batched over its own agents; each planner of
``planner_groups`` on its own; none with ``n_planners=0``), ``{"obs": <the
policy input>, "action_mask": <the env's action mask, unchanged>}``: the mask
stays out of the normalised vector, where ``env.sample_actions`` and masked
policies read it. Both copy the scalar and vector fields of the structured
observation (not the maps, not the mask) into ``info`` under
``"<namespace>.<field>"`` (Foundation's mobile group ``"a"``, ``[n_agents,
...]``) and ``"<namespace>.<group>.<field>"`` (every other group, e.g.
``"<namespace>.p.<field>"`` for the planner), float32, and set
``"<namespace>.collective_reward"`` after every step to the sum of the
mobile agents' rewards. Scalars are 0-d float32 arrays inside jit
(``float(info[k])`` on the host).

The state is the wrapped env's, unchanged; install the adapters innermost,
below ``AutoResetWrapper`` and ``LogWrapper``, so that the final
observation an auto-reset puts in ``info`` is already adapted.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon import spaces
from jaxecon.core import validators as cfg
from jaxecon.core.env import AGENTS_FIELD
from jaxecon.core.groups import MOBILE_GROUP, PLANNER_GROUP
from jaxecon.wrappers.base import Wrapper, check_env, unwrap_state
from jaxecon.wrappers.rgb import WorldRenderer, check_resize, resize_frames

__all__ = [
    "RENDER_MODES",
    "RGB_PREPROCESSING",
    "NativeObjectObservationWrapper",
    "NativeRGBObservationWrapper",
    "policy_env",
    "side_channels",
]

#: ``policy_env``'s render modes: None (structured observations, no
#: rendering), and the two that give RGB observations.
RENDER_MODES = (None, "rgb_array", "human")
#: ``rgb_preprocessing`` values: average-pool each spatial axis by four, or keep full resolution.
RGB_PREPROCESSING = ("tile_scale", "native")
#: ``"tile_scale"``'s pooling factor per spatial axis.
TILE_SCALE_POOL = 4
#: Key of the action mask beside the adapted observation (the env's own key).
MASK = "action_mask"


def _namespace(env, namespace) -> str:
    if namespace is None:
        return env.name
    if not isinstance(namespace, str) or not namespace:
        raise ValueError(f"namespace must be None (the scenario's name) or a non-empty str, got {namespace!r}")
    return namespace


def _agent_space(by_agent: dict, agent):
    if not isinstance(agent, str) or agent not in by_agent:
        raise ValueError(f"agent must be one of {list(by_agent)} (the economy's groups, env.group_names), "
                         f"got {agent!r}")
    return by_agent[agent]


def _planner_names(env) -> tuple:
    """The names of the planner groups of the jaxecon env under ``env``."""
    return tuple(g.name for g in env.unwrapped.agent_groups if g.is_planner)


def side_channels(obs: dict, reward: dict, namespace: str, planners: tuple = (PLANNER_GROUP,)) -> dict:
    """The info entries both adapters add: scalar and vector fields, and the collective reward.

    Args:
        obs: the structured observation, keyed by group: ``{mobile group:
            {field: [count, ...]}, planner: {field: ...}}`` (Foundation's:
            ``{"a": ..., "p": ...}``).
        reward: keyed by group: ``{mobile group: float [count], planner: float []}``.
        namespace: the key prefix (the scenario's name by default).
        planners: the names of the planner groups (default Foundation's ``("p",)``).

    Returns:
        For each group, every field with at most one dimension per agent
        (a mobile group's rows are its agents; a planner's view of the agents,
        ``"agents"``, ``[n, d]``, has one row per agent), float32, under
        ``"<namespace>.<field>"`` for Foundation's mobile group ``"a"`` and
        ``"<namespace>.<group>.<field>"`` for every other group (the planner:
        ``"<namespace>.p.<field>"``), skipping nested mappings (the planner's
        unflattened ``"agents"``), ``"action_mask"`` and fields with more
        dimensions (maps); then ``"<namespace>.collective_reward"``: float32 [],
        the sum of every mobile agent's reward.
    """
    out = {}
    for group, fields in obs.items():
        planner = group in planners
        prefix = f"{namespace}." if group == MOBILE_GROUP and not planner else f"{namespace}.{group}."
        for field, value in fields.items():
            per_agent = 0 if planner and field != AGENTS_FIELD else 1
            if field == MASK or isinstance(value, dict) or jnp.ndim(value) - per_agent > 1:
                continue
            out[prefix + field] = jnp.asarray(value, jnp.float32)
    mobile = [jnp.asarray(r, jnp.float32).reshape(-1) for g, r in reward.items() if g not in planners]
    out[f"{namespace}.collective_reward"] = jnp.sum(mobile[0] if len(mobile) == 1 else jnp.concatenate(mobile))
    return out


def _box_fields(space, path=()):
    """``[(path, low, high)]`` of every Box leaf of a Dict space, in the space's
    order, the top-level ``"action_mask"`` left out; low/high float64 numpy
    arrays broadcast to the field's shape."""
    out = []
    for name, sub in space.spaces.items():
        if not path and name == MASK:
            continue
        if isinstance(sub, spaces.Dict):
            out += _box_fields(sub, path + (name,))
        elif isinstance(sub, spaces.Box):
            shape = tuple(sub.shape)
            low = np.broadcast_to(np.asarray(sub.low, np.float64), shape)
            high = np.broadcast_to(np.asarray(sub.high, np.float64), shape)
            out.append((path + (name,), low, high))
        else:
            raise ValueError(
                f"observation field {'/'.join(path + (name,))!r} has space {sub!r}; the object "
                "adapter takes Box fields (and Dicts of them) only"
            )
    return out


class _Field:
    """One Box field of the vector: where it is, its shape, and its normalisation (numpy)."""

    def __init__(self, path, low, high):
        self.path, self.shape = path, low.shape
        low, high = low.reshape(-1), high.reshape(-1)
        #: bool [size]: the elements mapped to [0, 1] (finite, unequal bounds).
        self.normalised = np.isfinite(low) & np.isfinite(high) & (high != low)
        offset = np.where(self.normalised, low, 0.0).astype(np.float32)
        denom = np.where(self.normalised, high - low, 1.0).astype(np.float32)
        self.low = np.where(self.normalised, 0.0, low).astype(np.float32)
        self.high = np.where(self.normalised, 1.0, high).astype(np.float32)
        # The cheapest exact form of (x - offset) / denom: nothing where it is the
        # identity (e.g. a map bounded in [0, 1]), scalars where it is uniform.
        if not offset.any() and (denom == 1).all():
            self.offset = self.denom = None
        elif (offset == offset[0]).all() and (denom == denom[0]).all():
            self.offset, self.denom = offset[0], denom[0]
        else:
            self.offset, self.denom = offset, denom

    def read(self, obs_kind: dict, lead: tuple) -> jax.Array:
        """float32 ``lead + [size]``: the field of ``obs_kind``, flattened and normalised."""
        value = obs_kind
        for name in self.path:
            value = value[name]
        value = jnp.asarray(value)
        if value.shape != lead + self.shape:
            raise ValueError(
                f"observation field {'/'.join(self.path)!r} has shape {value.shape}, but its space "
                f"says {self.shape} per agent (with leading {lead})"
            )
        x = value.reshape(lead + (-1,)).astype(jnp.float32)
        if self.offset is None:
            return x
        return (x - self.offset) / self.denom


class _VectorLayout:
    """One agent kind's vector: its fields in order, its size and its Box."""

    def __init__(self, space):
        self.fields = tuple(_Field(*f) for f in _box_fields(space))
        self.size = int(sum(int(np.prod(f.shape)) for f in self.fields))
        cat = lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.float32)  # noqa: E731
        self.normalised = cat([f.normalised for f in self.fields]).astype(bool)
        self.box = spaces.Box(cat([f.low for f in self.fields]), cat([f.high for f in self.fields]),
                              (self.size,), np.float32)

    def vector(self, obs_kind: dict, lead: tuple) -> jax.Array:
        """float32 ``lead + [D]``: the fields of ``obs_kind`` flattened, normalised, concatenated."""
        parts = [f.read(obs_kind, lead) for f in self.fields]
        if not parts:
            return jnp.zeros(lead + (0,), jnp.float32)
        return jnp.concatenate(parts, axis=-1)


class NativeObjectObservationWrapper(Wrapper):
    """Each agent's structured observation as one normalised float32 vector, no rendering.

    For each agent group (``env.group_names``: Foundation's ``"a"`` and ``"p"``,
    or the declared ones) the adapter iterates the Box fields
    of ``env.observation_space(group)`` in the space's order (nested Dicts,
    such as the planner's ``p<i>`` entries when observations are not
    flattened, depth first), flattens each, and concatenates them; an
    element whose bounds are finite and unequal becomes ``(x - low) / (high
    - low)``, in [0, 1]; unbounded or constant elements are kept as they are.
    Matrix-valued fields (``world-map``, ``world-idx_map``) stay in the
    vector. The constants are computed once, here, from the spaces (numpy).
    Follows the native gridworld object adapter.

    Observation, keyed by group: ``{mobile group: {"obs": float32 [count, D_g],
    "action_mask": ...}, planner: {"obs": float32 [D_p], "action_mask": ...}}``
    (Foundation's: ``"a"``, ``[n_agents, D_a]``, and ``"p"``; the mask as the env
    gives it). Info: the env's, plus ``side_channels`` (scalar and vector
    fields under ``"<namespace>.<field>"`` (group ``"a"``) /
    ``"<namespace>.<group>.<field>"`` (the others, the planner's
    ``"<namespace>.p.<field>"``), float32, and
    ``"<namespace>.collective_reward"``, the sum of the mobile agents'
    rewards, a 0-d float32 array inside jit). State, reward and done: the env's.

    Args:
        env: a jaxecon environment or wrapper of one, with ``observation_space``.
        namespace: prefix of the info keys (default: the scenario's name,
            e.g. ``"layout_from_file/simple_wood_and_stone"``).

    Attributes:
        obs_size: ``{group: D_g}`` (Foundation's: ``{"a": D_a, "p": D_p}``).
        normalised: ``{group: bool [D_g]}``, the elements mapped to [0, 1].

    Raises:
        TypeError: ``env`` is not a jaxecon environment.
        ValueError: a bad ``namespace``; a field whose space is not a Box.
    """

    def __init__(self, env, namespace=None):
        super().__init__(env)
        self.namespace = _namespace(env, namespace)
        #: ``{group: leading axes}``: a mobile group's agents, nothing for a planner.
        self._lead = {g.name: () if g.is_planner else (g.count,) for g in self.unwrapped.agent_groups}
        self._planners = _planner_names(self)
        self._layouts = {g: _VectorLayout(env.observation_space(g)) for g in self._lead}
        self.obs_size = {g: v.size for g, v in self._layouts.items()}
        self.normalised = {g: v.normalised for g, v in self._layouts.items()}
        self._spaces = {
            g: spaces.Dict({"obs": self._layouts[g].box, MASK: env.observation_space(g)[MASK]})
            for g in self._lead
        }

    def observation_space(self, agent: str) -> spaces.Dict:
        """One agent's adapted observation: ``Dict({"obs": Box float32 [D] (bounds
        [0, 1] where normalised, the field's own elsewhere), "action_mask": the
        env's mask space})``; ``agent`` is a group name (Foundation's ``"a"`` or ``"p"``).

        Raises:
            ValueError: any other agent id, naming the allowed ones.
        """
        return _agent_space(self._spaces, agent)

    def observation(self, obs: dict) -> dict:
        """The adapted observation of a structured one (keyed by group)."""
        return {
            g: {"obs": self._layouts[g].vector(obs[g], lead), MASK: obs[g][MASK]}
            for g, lead in self._lead.items()
        }

    def reset(self, key, params, prev_state=None):
        """``env.reset(key, params, prev_state=prev_state)``; returns ``(obs, state)``, obs adapted."""
        obs, state = self._env.reset(key, params, prev_state=prev_state)
        return self.observation(obs), state

    def step(self, key, state, actions, params):
        """``env.step``; returns ``(obs, state, reward, done, info)`` with the adapted obs and info."""
        obs, state, reward, done, info = self._env.step(key, state, actions, params)
        info = {**info, **side_channels(obs, reward, self.namespace, self._planners)}
        return self.observation(obs), state, reward, done, info


class NativeRGBObservationWrapper(Wrapper):
    """Every agent observes RGB frames of the world, float32 in [0, 1].

    Frames come from ``jaxecon.wrappers.rgb.WorldRenderer`` (jittable, the
    colours of ``jaxecon.render``), ``tile`` pixels per cell. Follows the
    native gridworld RGB adapter.

    - ``fully_observable=True`` (default): the world frame is drawn once per
      step and every mobile agent and every planner get that same frame.
    - ``fully_observable=False``: each mobile agent gets its egocentric window
      of ``2 * view_radius + 1`` cells (the cells of its ``world-map``
      observation; outside the world black); a planner, which has no
      location, gets the world frame preprocessed by ``rgb_preprocessing``
      (``rgb_resize`` sizes the mobile agents' frames only).
    - ``rgb_preprocessing="tile_scale"`` (default): average-pool each spatial
      axis by four; ``"native"``: full resolution. Either way divided by 255.
    - ``rgb_resize=(height, width)`` overrides either: each output dimension
      must divide the frame's evenly (average pooling) or be a whole multiple
      of it (pixels repeated).

    Default sizes on the canonical 25x25 world with ``tile=8``: world frame
    200x200x3, ``"tile_scale"`` 50x50x3; egocentric 88x88x3 native, 22x22x3
    with ``"tile_scale"``.

    Observation, keyed by group: ``{mobile group: {"obs": float32 [count, h,
    w, 3], "action_mask": ...}, planner: {"obs": float32 [h_p, w_p, 3],
    "action_mask": ...}}`` (Foundation's: ``"a"``, ``count`` = n_agents, and
    ``"p"``). Info: the env's plus ``side_channels`` (as
    ``NativeObjectObservationWrapper``).

    Args:
        env: a jaxecon environment (or wrapper of one) with a world map.
        rgb_preprocessing: ``"tile_scale"`` or ``"native"``.
        rgb_resize: None or ``(height, width)``, positive ints.
        fully_observable: bool.
        tile: pixels per world cell (int >= 1, default 8).
        view_radius: egocentric half-width in cells (int >= 0); default the
            env's ``mobile_agent_observation_range``, else 5.
        namespace: prefix of the info keys (default: the scenario's name).

    Attributes:
        obs_shape: ``{mobile group: (count, h, w, 3), planner: (h_p, w_p, 3)}``
            (Foundation's: ``{"a": (n_agents, h, w, 3), "p": (h_p, w_p, 3)}``).
        renderer: the ``WorldRenderer``.

    Raises:
        TypeError: ``env`` is not a jaxecon environment.
        ValueError: naming the argument and the allowed values: an unknown
            ``rgb_preprocessing``; an ``rgb_resize`` that is not two positive
            ints or does not divide evenly; a ``"tile_scale"`` frame whose size
            is not a multiple of four; a bad ``tile``, ``view_radius``,
            ``fully_observable`` or ``namespace``; an env with no world map.
    """

    def __init__(self, env, rgb_preprocessing="tile_scale", rgb_resize=None, fully_observable=True,
                 tile=8, view_radius=None, namespace=None):
        super().__init__(env)
        if rgb_preprocessing not in RGB_PREPROCESSING:
            raise ValueError(
                f"rgb_preprocessing must be one of {list(RGB_PREPROCESSING)}, got {rgb_preprocessing!r}"
            )
        self.rgb_preprocessing = rgb_preprocessing
        self.fully_observable = cfg.check_bool("fully_observable", fully_observable)
        self.namespace = _namespace(env, namespace)
        self.renderer = WorldRenderer(env, tile)
        if view_radius is None:
            view_radius = getattr(env, "mobile_agent_observation_range", 5)
        self.view_radius = cfg.check_int("view_radius", view_radius, minimum=0)
        world_hw = self.renderer.frame_shape[:2]
        view = (2 * self.view_radius + 1) * self.renderer.tile
        agent_hw = world_hw if self.fully_observable else (view, view)
        self._planner_hw = self._preprocessed(world_hw)
        if rgb_resize is None:
            self._agent_hw = self._preprocessed(agent_hw)
        else:
            self._agent_hw = check_resize(agent_hw, rgb_resize, "rgb_resize")
        if self.fully_observable:
            self._planner_hw = self._agent_hw
        self._agent_in_hw = agent_hw
        self._groups = self.unwrapped.agent_groups
        self._planners = _planner_names(self)
        frame = {g.name: (self._planner_hw if g.is_planner else self._agent_hw) + (3,) for g in self._groups}
        self.obs_shape = {g.name: frame[g.name] if g.is_planner else (g.count,) + frame[g.name]
                          for g in self._groups}
        self._spaces = {
            g: spaces.Dict({"obs": spaces.Box(0.0, 1.0, shape, np.float32), MASK: env.observation_space(g)[MASK]})
            for g, shape in frame.items()
        }

    def observation_space(self, agent: str) -> spaces.Dict:
        """One agent's observation: ``Dict({"obs": Box [0, 1] float32 (h, w, 3),
        "action_mask": the env's mask space})``; ``agent`` is a group name
        (Foundation's ``"a"`` or ``"p"``).

        Raises:
            ValueError: any other agent id, naming the allowed ones.
        """
        return _agent_space(self._spaces, agent)

    def _preprocessed(self, hw) -> tuple:
        if self.rgb_preprocessing == "native":
            return tuple(hw)
        for axis, v in zip(("height", "width"), hw):
            if v % TILE_SCALE_POOL:
                raise ValueError(
                    f"rgb_preprocessing='tile_scale' pools by {TILE_SCALE_POOL}, but the frame's {axis} "
                    f"is {v} (frame {tuple(hw)}); use a tile that makes it a multiple of "
                    f"{TILE_SCALE_POOL}, rgb_preprocessing='native', or an rgb_resize"
                )
        return (hw[0] // TILE_SCALE_POOL, hw[1] // TILE_SCALE_POOL)

    @staticmethod
    def _to_unit(frames, in_hw, out_hw):
        if tuple(in_hw) != tuple(out_hw):
            frames = resize_frames(frames, out_hw)
        return jnp.asarray(frames, jnp.float32) / 255.0

    def observation(self, obs: dict, state) -> dict:
        """The adapted observation: frames of ``state`` (the ``EnvState`` in it, see
        ``jaxecon.wrappers.unwrap_state``) beside the masks of ``obs``."""
        state = unwrap_state(state)
        frame = self.renderer.world_frame(state)
        world_hw = self.renderer.frame_shape[:2]
        planner = self._to_unit(frame, world_hw, self._planner_hw)
        if not self.fully_observable:
            views = self.renderer.egocentric_frames(frame, state.loc, self.view_radius)
            views = self._to_unit(views, self._agent_in_hw, self._agent_hw)  # [n_agents, h, w, 3]
        out = {}
        for g in self._groups:
            if g.is_planner:
                frames = planner
            elif self.fully_observable:
                frames = jnp.broadcast_to(planner, self.obs_shape[g.name])
            else:  # the group's rows of every agent's window (all of them: Foundation's one group)
                frames = views if g.count == views.shape[0] else views[g.start:g.stop]
            out[g.name] = {"obs": frames, MASK: obs[g.name][MASK]}
        return out

    def reset(self, key, params, prev_state=None):
        """``env.reset(key, params, prev_state=prev_state)``; returns ``(obs, state)``, obs RGB."""
        obs, state = self._env.reset(key, params, prev_state=prev_state)
        return self.observation(obs, state), state

    def step(self, key, state, actions, params):
        """``env.step``; returns ``(obs, state, reward, done, info)`` with RGB obs and the side channels."""
        obs, state, reward, done, info = self._env.step(key, state, actions, params)
        info = {**info, **side_channels(obs, reward, self.namespace, self._planners)}
        return self.observation(obs, state), state, reward, done, info


def policy_env(env, render_mode=None, flatten_observations=False, rgb_preprocessing="tile_scale",
               rgb_resize=None, fully_observable=True):
    """The env a policy trains on, from the native factories' arguments.

    - ``render_mode=None`` (default), ``flatten_observations=False``: ``env``
      itself: the structured observation unchanged, nothing rendered.
    - ``render_mode=None``, ``flatten_observations=True``:
      ``NativeObjectObservationWrapper(env)``, one normalised vector per agent.
    - ``render_mode="rgb_array"`` or ``"human"``:
      ``NativeRGBObservationWrapper(env, rgb_preprocessing, rgb_resize,
      fully_observable)``. jaxecon opens no window: ``"human"`` gives the same
      frames as ``"rgb_array"`` (show them from the host).

    Not Foundation's ``flatten_observations`` kwarg: that one (on
    ``jaxecon.make``) packs the non-spatial fields into ``"flat"`` and keeps
    the maps separate, unnormalised; this one makes one normalised vector per
    agent with the maps inside.

    Args:
        env: a jaxecon environment (``jaxecon.make``'s result) or wrapper of one.
        render_mode: None, ``"rgb_array"`` or ``"human"``.
        flatten_observations: bool; only with ``render_mode=None``.
        rgb_preprocessing: ``"tile_scale"`` (default) or ``"native"``.
        rgb_resize: None or ``(height, width)``; only with an RGB render mode.
        fully_observable: bool (True); RGB modes: one world frame for everyone.

    Returns:
        ``env``, or the adapter wrapping it.

    Raises:
        TypeError: ``env`` is not a jaxecon environment.
        ValueError: naming the argument and the allowed values: an unknown
            ``render_mode`` or ``rgb_preprocessing``; ``flatten_observations``
            not a bool, or True with an RGB render mode; ``rgb_resize`` without
            an RGB render mode, not two positive ints, or not dividing evenly.
    """
    check_env(env)
    if render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be one of {list(RENDER_MODES)}, got {render_mode!r}")
    flatten_observations = cfg.check_bool("flatten_observations", flatten_observations)
    fully_observable = cfg.check_bool("fully_observable", fully_observable)
    if rgb_preprocessing not in RGB_PREPROCESSING:
        raise ValueError(
            f"rgb_preprocessing must be one of {list(RGB_PREPROCESSING)}, got {rgb_preprocessing!r}"
        )
    if render_mode is None:
        if rgb_resize is not None:
            raise ValueError(
                f"rgb_resize={rgb_resize!r} needs render_mode 'rgb_array' or 'human' "
                "(with render_mode=None nothing is rendered)"
            )
        return NativeObjectObservationWrapper(env) if flatten_observations else env
    if flatten_observations:
        raise ValueError(
            f"flatten_observations=True cannot be combined with render_mode={render_mode!r}: "
            "it installs the object adapter, which renders nothing; use render_mode=None to "
            "flatten, or flatten_observations=False for RGB observations"
        )
    return NativeRGBObservationWrapper(env, rgb_preprocessing=rgb_preprocessing, rgb_resize=rgb_resize,
                                       fully_observable=fully_observable)
