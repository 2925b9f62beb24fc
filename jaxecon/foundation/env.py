"""Foundation's stateful object API on top of jaxecon's jitted core.

A Foundation user changes one import line::

    from jaxecon import foundation          # was: from ai_economist import foundation

    env = foundation.make_env_instance(**env_config)
    obs = env.reset()
    actions = {str(a.idx): a.get_random_action() for a in env.all_agents}
    obs, rew, done, info = env.step(actions)

and their script runs. Follows ``ai_economist/foundation/__init__.py``,
``base/base_env.py`` (``BaseEnvironment``), ``base/base_agent.py``
(``BaseAgent``), ``agents/planners.py`` and ``base/world.py`` (``World``,
``Maps``) of ai-economist 1.7.1.

What is the same as Foundation:

- the registries ``scenarios``, ``components``, ``agents``, ``resources``,
  ``landmarks``, ``endogenous`` (they *are* jaxecon's registries, so a class
  added with ``@foundation.components.add`` works in the functional API too)
  and ``make_env_instance(scenario_name, **kwargs)``;
- the environment's properties and methods (``FoundationEnv``), the agents'
  (``BasicMobileAgent``, ``BasicPlanner``), ``env.world`` / ``env.world.maps``;
- action formats (``step``), observation/reward/done/info dicts keyed
  ``"0".."n-1", "p"``, metrics, dense logs, replay logs, ``_completions``,
  dense logging every ``dense_log_frequency`` episodes, stepping past the end
  of an episode (quirk Q12: no guard, ``done`` stays True, logs are finalised
  and ``_completions`` incremented on every further step).

What differs (on purpose):

- **Randomness.** All randomness comes from a JAX PRNG key held by the
  environment. ``seed`` (constructor kwarg or ``env.seed(s)``) sets it to
  ``jax.random.key(s)``; with ``seed=None`` the key is ``jax.random.key(0)``,
  so an unseeded environment is reproducible (Foundation would follow the
  global ``np.random`` stream). ``seed(s)`` also seeds Python's ``random``
  and ``np.random`` as Foundation does (scripts that sample actions with them
  stay reproducible); ``s`` must be an int >= 0 (Foundation rejects 0, Q11).
- **seed_state.** Each ``reset``/``step`` consumes one key and derives the
  next from it. ``seed_state`` is that consumed key as raw key data
  (``np.asarray(jax.random.key_data(key))``, uint32 ``[2]`` for the default
  threefry PRNG), not numpy's MT19937 5-tuple. Passing it back reproduces the
  call exactly and continues the key stream from there. The replay log stores
  it, plus ``completions`` (the episode counter the reset used, which drives
  energy warm-up), so ``reset(**log["reset"], force_dense_logging=True)`` and
  ``step(**entry)`` reproduce the dense log and metrics exactly even with a
  warm-up. The replay log stores a deep copy of the caller's actions
  (Foundation keeps a reference, quirk Q28).
- **Agents and the world are views.** ``agent.state``, ``agent.inventory``,
  ``world.maps.get(...)`` etc. are read from the current ``EnvState`` on each
  access (dicts of Python scalars, read-only numpy arrays). Writing into them
  does not change the economy; replace ``env.state`` (an ``EnvState``) or
  ``env.params`` (an ``EnvParams``) instead.
- **Actions are validated when given** (``ValueError`` naming the agent and
  the allowed values) instead of failing inside components (Q1) or with bare
  ``assert``. Single-action mode executes one action per agent per step: an
  agent whose buffer holds actions in two subspaces (possible only through
  ``set_agent_component_action``) makes ``step`` raise ``ValueError``.
  Multi-action agents also accept a ``{subspace_name: local_action}`` dict
  (other subspaces NO-OP), so ``get_random_action()`` works in both modes.
- **get_random_action** (Q4 fixed): a subspace uniformly, then a local action
  uniformly in ``1..n`` inclusive (Foundation never returns ``n`` in
  single-action mode and raises ``IndexError`` for 1-action subspaces such as
  Build); an agent without actions returns ``{}`` (NO-OP) instead of raising.
- **collate_agent_step_and_reset_data=True** works for every scenario,
  wood-and-stone included (Foundation raises ``KeyError`` there, Q17): obs
  ``{"a": {field: per-agent arrays stacked along the LAST axis}, "p": ...}``,
  rewards ``{"a": [n floats], "p": float}``, info ``{"a": {"0": {}, ...},
  "p": {}}``, exactly what Foundation's ``collate_agent_obs/rew/info`` build.
- Observation values are numpy arrays (``time`` is float32 ``[1]``, not a
  Python list; scalars of unflattened observations are numpy scalars); they
  are fresh copies, never aliases of internal state (Q3).
- ``world.maps.get`` returns float64 health maps and int16 owner maps as
  Foundation; the simulation itself runs in float32 unless
  ``jax_enable_x64`` is set.
"""

from __future__ import annotations

import copy
import numbers
import operator
import random as _pyrandom

import jax
import jax.numpy as jnp
import numpy as np

import jaxecon  # noqa: F401  (registers the shipped scenarios, components, entities)
from jaxecon import entities as _entities
from jaxecon.core.registry import agent_registry as agents
from jaxecon.core.registry import component_registry as components
from jaxecon.core.registry import endogenous_registry as endogenous
from jaxecon.core.registry import landmark_registry as landmarks
from jaxecon.core.registry import resource_registry as resources
from jaxecon.core.registry import scenario_registry as scenarios
from jaxecon.make import make

__all__ = [
    "FoundationEnv", "BasicMobileAgent", "BasicPlanner", "World", "Maps",
    "make_env_instance", "scenarios", "components", "agents", "resources",
    "landmarks", "endogenous",
]

#: Name of the placeholder subspace of a multi-action agent without actions.
PASSIVE_PLACEHOLDER = "PassiveAgentPlaceholder"


def make_env_instance(scenario_name, **kwargs) -> "FoundationEnv":
    """Build a stateful environment, as ``ai_economist.foundation.make_env_instance``.

    Args:
        scenario_name: a registered scenario name, e.g.
            ``"layout_from_file/simple_wood_and_stone"`` (case-insensitive).
        **kwargs: Foundation's scenario, component and ``BaseEnvironment``
            keyword arguments (``components``, ``n_agents``, ``world_size``,
            ``episode_length``, ``dense_log_frequency``, ``seed``, ...).
    Returns:
        A ``FoundationEnv``.
    Raises:
        KeyError: unknown scenario or component name (lists the known ones).
        TypeError: unknown keyword argument (lists the allowed ones).
        ValueError: bad values (names the argument and the allowed values).
    """
    return FoundationEnv(scenario_name, **kwargs)


# ---------------------------------------------------------------------------
# small helpers
# ---------------------------------------------------------------------------


def _as_index(value, what: str) -> int:
    """``value`` as a Python int: ints, numpy/JAX integer scalars and 0-d arrays,
    integral floats.

    Raises:
        ValueError: for anything else, naming ``what``.
    """
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, numbers.Real) or getattr(value, "ndim", None) == 0:
        try:
            f = float(value)
        except (TypeError, ValueError):
            f = float("nan")
        if f.is_integer():
            return int(f)
    raise ValueError(f"{what} must be an integer action index, got {value!r}")


def _py(x):
    """A numpy scalar/array (or Python value) as Python scalars / nested lists."""
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _cast(d):
    """Foundation's ``recursive_cast``: numpy inside dicts/lists -> Python lists/scalars."""
    if isinstance(d, dict):
        return {k: _cast(v) for k, v in d.items()}
    if isinstance(d, (list, tuple, set)):
        return [_cast(v) for v in d]
    return _py(d)


def _obs_value(v):
    """A fresh copy of an observation entry; 0-d arrays become numpy scalars
    (Foundation's unflattened observations hold scalars there)."""
    a = np.array(v)
    return a[()] if a.ndim == 0 else a


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a)
    a.flags.writeable = False
    return a


def _key_data_shape() -> tuple:
    return tuple(jax.random.key_data(jax.random.key(0)).shape)


def _seed_state_to_key(seed_state):
    """A typed PRNG key from a ``seed_state`` (raw key data or a typed key).

    Raises:
        ValueError: for numpy's MT19937 5-tuple or anything not shaped like key data.
    """
    if isinstance(seed_state, jax.Array) and jax.dtypes.issubdtype(
        seed_state.dtype, jax.dtypes.prng_key
    ):
        return seed_state
    if isinstance(seed_state, (tuple, list)) and len(seed_state) == 5 and isinstance(seed_state[0], str):
        raise ValueError(
            "seed_state looks like numpy's MT19937 state (np.random.get_state()); in jaxecon a "
            "seed_state is the PRNG key a reset/step consumed, as raw key data "
            f"(uint32 array of shape {_key_data_shape()}), e.g. from env.previous_episode_replay_log"
        )
    arr = np.asarray(seed_state)
    shape = _key_data_shape()
    if arr.shape != shape or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(
            f"seed_state must be PRNG key data: an integer array of shape {shape} "
            f"(jax.random.key_data of a key), got {type(seed_state).__name__} "
            f"with shape {arr.shape} and dtype {arr.dtype}"
        )
    return jax.random.wrap_key_data(jnp.asarray(arr.astype(np.uint32)))


# ---------------------------------------------------------------------------
# agents
# ---------------------------------------------------------------------------


class _AgentView:
    """Common part of the agent views (Foundation's ``BaseAgent``).

    An agent object is a view of the environment's current ``EnvState`` plus
    its action buffer (``action``: subspace name -> local action, 0 = NO-OP),
    which ``parse_actions`` / ``set_component_action`` fill and every ``step``
    consumes and resets to NO-OP.

    Attributes:
        idx: int 0..n-1 (mobile agents) or ``"p"`` (planner).
        multi_action_mode: bool.
        action: dict subspace name -> int, the pending actions.
        action_dim: dict subspace name -> int, number of actions of the
            subspace (+1 for its own NO-OP in multi-action mode).
        single_action_map: dict global index -> [subspace name, local action]
            (single-action mode; empty in multi-action mode).
    """

    name = ""

    def __init__(self, env: "FoundationEnv", idx, layout):
        self._env = env
        self._idx = idx
        self._layout = layout
        self.multi_action_mode = bool(layout.multi_action_mode)
        self._passive_multi_action_agent = self.multi_action_mode and layout.passive
        if self._passive_multi_action_agent:
            self._action_names = [PASSIVE_PLACEHOLDER]
            self.action_dim = {PASSIVE_PLACEHOLDER: 1}
        else:
            self._action_names = list(layout.names)
            extra = 1 if self.multi_action_mode else 0
            self.action_dim = {n: k + extra for n, k in zip(layout.names, layout.sizes)}
        self._sizes = {n: k for n, k in zip(layout.names, layout.sizes)}
        self._unique_actions = len(self._action_names)
        self.single_action_map = (
            {} if self.multi_action_mode
            else {g: [n, k] for g, (n, k) in layout.single_action_map().items()}
        )
        self._offset = {}
        for g, (n, k) in layout.single_action_map().items():
            self._offset.setdefault(n, g - 1)
        self.action = {n: 0 for n in self._action_names}

    def __repr__(self):
        return f"<{self.name} idx={self._idx!r} (jaxecon.foundation view)>"

    # ----- identity and state -------------------------------------------------
    @property
    def idx(self):
        """Index identifying the agent: int for mobile agents, ``"p"`` for the planner."""
        return self._idx

    @property
    def inventory(self) -> dict:
        """``{resource: float}`` units held (e.g. ``{"Coin": 12.0, "Stone": 1.0, "Wood": 0.0}``)."""
        return self.state["inventory"]

    @property
    def escrow(self) -> dict:
        """``{resource: float}`` units held in escrow by open orders."""
        return self.state["escrow"]

    @property
    def endogenous(self) -> dict:
        """``{name: float}``, e.g. ``{"Labor": 30.25}``; ``{}`` for the planner."""
        return self.state["endogenous"]

    def total_endowment(self, resource: str) -> float:
        """Inventory plus escrow of ``resource`` (float).

        Raises:
            KeyError: unknown resource.
        """
        return self.inventory[resource] + self.escrow[resource]

    @property
    def action_spaces(self):
        """Single-action mode: int, 1 + total actions. Multi-action mode: int32
        array of per-subspace sizes, each + 1 for its NO-OP (``[1]`` if the
        agent has no actions)."""
        if self.multi_action_mode:
            return np.asarray([self.action_dim[n] for n in self._action_names], dtype=np.int32)
        return int(self._layout.n_actions)

    # ----- actions ------------------------------------------------------------
    def has_component(self, component_name: str) -> bool:
        """Whether ``component_name`` is one of the agent's action subspaces."""
        return component_name in self.action

    def reset_actions(self, component=None):
        """Set pending actions to NO-OP (all, or those of one component / subspace)."""
        for k in self.action:
            if not component:
                self.action[k] = 0
            elif "." in component:
                if k.lower() == component.lower():
                    self.action[k] = 0
            elif k.split(".")[0].lower() == component.lower():
                self.action[k] = 0

    def get_component_action(self, component_name, sub_action_name=None):
        """Pending action of a component (list if it has several subspaces; None if absent)."""
        if sub_action_name is not None:
            return self.action.get(f"{component_name}.{sub_action_name}")
        names = [m for m in self._action_names if m.split(".")[0] == component_name]
        if not names:
            return None
        if len(names) == 1:
            return self.action[names[0]]
        return [self.action[m] for m in names]

    def _check_local(self, name, action) -> int:
        if name not in self.action:
            raise KeyError(
                f"agent {self._idx!r} ({self.name}) does not have {name!r} as an action subspace; "
                f"its subspaces: {self._action_names}"
            )
        a = _as_index(action, f"action of agent {self._idx!r} for {name!r}")
        hi = self.action_dim[name] - 1 if self.multi_action_mode else self._sizes.get(name, 0)
        if not 0 <= a <= hi:
            raise ValueError(
                f"action {a} of agent {self._idx!r} for subspace {name!r} is out of range; "
                f"allowed: 0..{hi} (0 = NO-OP)"
            )
        return a

    def set_component_action(self, component_name: str, action):
        """Set the pending action of one subspace (local index, 0 = NO-OP).

        Raises:
            KeyError: the agent has no such subspace (lists its subspaces).
            ValueError: the action is not an integer in range.
        """
        self.action[component_name] = self._check_local(component_name, action)

    def _parsed(self, actions) -> dict:
        """The action buffer after applying ``actions`` (Foundation's formats); no mutation.

        Raises:
            ValueError: for a wrong format, length or range, naming the allowed values.
        """
        buf = dict(self.action)
        who = f"agent {self._idx!r}"
        if isinstance(actions, dict):
            if not self.multi_action_mode and len(actions) > 1:
                raise ValueError(
                    f"{who} is in single-action mode: a dict action must have at most one entry "
                    f"{{subspace: local_action}}, got {actions!r}; subspaces: {self._action_names}"
                )
            for name, a in actions.items():
                if name not in buf:
                    raise ValueError(
                        f"{who} has no action subspace {name!r}; its subspaces: {self._action_names}"
                    )
                a = self._check_local(name, a)
                if a or self.multi_action_mode:  # single-action mode ignores 0, as Foundation
                    buf[name] = a
            return buf
        if self.multi_action_mode:
            if isinstance(actions, (str, bytes)) or not hasattr(actions, "__len__"):
                raise ValueError(
                    f"{who} is in multi-action mode: its action must be a sequence of "
                    f"{self._unique_actions} ints, one per subspace {self._action_names} with "
                    f"0..{[d - 1 for d in self.action_spaces.tolist()]} each; got {actions!r}"
                )
            seq = list(np.asarray(actions).reshape(-1)) if isinstance(actions, np.ndarray) else list(actions)
            if len(seq) != self._unique_actions:
                raise ValueError(
                    f"{who} is in multi-action mode: expected {self._unique_actions} actions, one per "
                    f"subspace {self._action_names} with 0..{[d - 1 for d in self.action_spaces.tolist()]} "
                    f"each; got {len(seq)}: {actions!r}"
                )
            for name, a in zip(self._action_names, seq):
                buf[name] = self._check_local(name, a)
            return buf
        if isinstance(actions, (list, tuple)) or (isinstance(actions, np.ndarray) and actions.ndim > 0):
            raise ValueError(
                f"{who} is in single-action mode: its action must be one int in "
                f"0..{self._layout.n_actions - 1} or a {{subspace: local_action}} dict; got {actions!r}"
            )
        g = _as_index(actions, f"action of {who}")
        if not 0 <= g < self._layout.n_actions:
            raise ValueError(
                f"action {g} of {who} is out of range; allowed: 0..{self._layout.n_actions - 1} "
                f"(0 = NO-OP; map: {self.single_action_map})"
            )
        if g:
            name, local = self.single_action_map[g]
            buf[name] = local
        return buf

    def parse_actions(self, actions):
        """Put ``actions`` (Foundation's formats, see ``FoundationEnv.step``) into the buffer.

        Raises:
            ValueError: for a wrong format, length or range.
        """
        self.action = self._parsed(actions)

    def get_random_action(self) -> dict:
        """``{subspace: local_action}``: a uniformly random subspace, then a uniformly
        random action ``1..n`` of it (Python's ``random`` module, as Foundation).

        jaxecon fixes Foundation's off-by-one (quirk Q4): ``n`` itself can be
        drawn and 1-action subspaces (Build) work. An agent without actions
        gets ``{}`` (NO-OP) where Foundation raises ``IndexError``. The result
        is a valid action in both single- and multi-action mode.
        """
        names = list(self._layout.names)
        if not names:
            return {}
        name = _pyrandom.choice(names)
        return {name: _pyrandom.randint(1, self._sizes[name])}

    def populate_random_actions(self):
        """Fill the buffer with a uniformly random index per subspace (``np.random``; testing helper)."""
        for name in self._action_names:
            hi = self.action_dim[name] - 1 if self.multi_action_mode else self._sizes[name]
            self.action[name] = int(np.random.randint(0, hi + 1))

    def _functional_action(self, buf: dict):
        """int32 [] (single-action) or [k] (multi-action) index for the core."""
        if self.multi_action_mode:
            return np.asarray([buf[n] for n in self._action_names], dtype=np.int32)
        chosen = [(n, a) for n, a in buf.items() if a]
        if len(chosen) > 1:
            raise ValueError(
                f"agent {self._idx!r} is in single-action mode but has actions in "
                f"{len(chosen)} subspaces {dict(chosen)}; jaxecon executes one action per "
                "step in single-action mode (use multi_action_mode for several)"
            )
        if not chosen:
            return np.int32(0)
        n, a = chosen[0]
        return np.int32(self._offset[n] + a)


class BasicMobileAgent(_AgentView, _entities.BasicMobileAgent):
    """A mobile agent (``agents/mobiles.py``): location, inventory, escrow, Labor.

    ``state`` = ``{"loc": [row, col], "inventory": {...}, "escrow": {...},
    "endogenous": {"Labor": ...}, <component fields, e.g. "build_payment">,
    <scenario fields, e.g. COVID-19's "Total Infected", "Date">}``
    (Python scalars; a fresh dict per access).
    """

    name = "BasicMobileAgent"

    @property
    def loc(self) -> list:
        """``[row, col]`` (ints); ``[-1, -1]`` before the first reset."""
        return self._env._agent_state(self._idx)["loc"]

    @property
    def state(self) -> dict:
        return self._env._agent_state(self._idx)


class BasicPlanner(_AgentView, _entities.BasicPlanner):
    """The social planner (``agents/planners.py``): idx ``"p"``, no location.

    ``state`` = ``{"inventory": {...}, "escrow": {...}, "endogenous": {}}`` plus
    planner fields of components, then of the scenario (e.g. COVID-19's US
    totals "Total Deaths", "Date").
    """

    name = "BasicPlanner"

    @property
    def loc(self):
        """Planners have no location: raises ``AttributeError`` (as Foundation)."""
        raise AttributeError("BasicPlanner agents do not occupy a location.")

    @property
    def state(self) -> dict:
        return self._env._agent_state("p")


# ---------------------------------------------------------------------------
# world
# ---------------------------------------------------------------------------


class Maps:
    """View of the world maps (Foundation's ``world.maps``).

    Keys in Foundation order: collectible resources, then landmarks (e.g.
    ``Stone, Wood, House, Water, StoneSourceBlock, WoodSourceBlock``).
    Private landmarks (House) have a health map and an owner map.
    """

    def __init__(self, env: "FoundationEnv"):
        self._env = env
        core = env._core
        self.size = list(core.world_size)
        self.sz_h, self.sz_w = core.world_size
        self.n_agents = core.n_agents
        self._private = tuple(core.private_landmarks)

    def keys(self):
        """Map names, Foundation order."""
        return list(self._env._core.map_keys)

    def get(self, entity_name: str, owner: bool = False) -> np.ndarray:
        """float64 [H, W] health of ``entity_name``; for a private landmark
        with ``owner=True`` the int16 [H, W] owner map (-1 = nobody).

        Raises:
            KeyError: unknown map name (lists the known ones).
        """
        host = self._env._host()
        if entity_name not in self._env._core.map_keys:
            raise KeyError(f"no map {entity_name!r}; maps: {self.keys()}")
        if owner:
            if entity_name not in self._private:
                raise KeyError(f"{entity_name!r} is not a private landmark; those are {list(self._private)}")
            return _readonly(np.asarray(host.owner[entity_name]).astype(np.int16))
        return _readonly(np.asarray(host.maps[entity_name], dtype=np.float64))

    def get_point(self, entity_name: str, r: int, c: int, owner: bool = False):
        """``get(entity_name, owner)[r, c]``."""
        return self.get(entity_name, owner=owner)[r, c]

    def set(self, entity_name: str, map_state) -> None:
        """Replace a map (Foundation's ``Maps.set``): writes a new ``EnvState``.

        ``map_state``: [H, W] numbers (negative values become 0); for a private
        landmark ``{"owner": int [H, W], "health": [H, W]}``, owner set to -1
        where health <= 0. Accessibility follows from the maps, as in Foundation.

        Raises:
            KeyError: unknown map name.
            ValueError: wrong shape, NaN or inf, missing owner/health, an owner
                outside 0..n_agents - 1 where health > 0, or non-integer values
                for a map stored as integers.
        """
        env = self._env
        if entity_name not in env._core.map_keys:
            raise KeyError(f"no map {entity_name!r}; maps: {self.keys()}")
        state = env.state
        shape = (self.sz_h, self.sz_w)

        def as_map(name, value, dtype):
            a = np.asarray(value, np.float64)
            if a.shape != shape:
                raise ValueError(f"maps.set({entity_name!r}): {name} must have shape {shape}, got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ValueError(f"maps.set({entity_name!r}): {name} must be finite (no NaN or inf)")
            if jnp.issubdtype(dtype, jnp.integer) and not np.all(a == np.round(a)):
                raise ValueError(f"maps.set({entity_name!r}): {name} must hold whole numbers")
            return a

        if entity_name in self._private:
            if not isinstance(map_state, dict) or not {"owner", "health"} <= set(map_state):
                raise ValueError(f"maps.set({entity_name!r}) takes {{'owner': [H, W], 'health': [H, W]}}")
            health = np.maximum(0.0, as_map("health", map_state["health"], state.maps[entity_name].dtype))
            owner = np.where(health > 0, as_map("owner", map_state["owner"], jnp.int32), -1)
            if np.any((owner[health > 0] < 0) | (owner[health > 0] >= self.n_agents)):
                raise ValueError(
                    f"maps.set({entity_name!r}): owners where health > 0 must be agent indices "
                    f"0..{self.n_agents - 1}"
                )
            env.state = state.replace(
                maps={**state.maps, entity_name: jnp.asarray(health, state.maps[entity_name].dtype)},
                owner={**state.owner, entity_name: jnp.asarray(owner, state.owner[entity_name].dtype)},
            )
        else:
            dtype = state.maps[entity_name].dtype
            health = np.maximum(0.0, as_map("map_state", map_state, dtype))
            env.state = state.replace(maps={**state.maps, entity_name: jnp.asarray(health, dtype)})

    def set_add(self, entity_name: str, map_state) -> None:
        """``set(entity_name, get(entity_name) + map_state)`` (not for private landmarks)."""
        if entity_name in self._private:
            raise ValueError(f"set_add is not defined for the private landmark {entity_name!r}")
        self.set(entity_name, self.get(entity_name) + np.asarray(map_state))

    def set_point(self, entity_name: str, r: int, c: int, val, owner=None) -> None:
        """Set one tile (Foundation's ``Maps.set_point``); a private landmark needs
        ``owner``, and the tile must be unowned or already that agent's.

        Raises:
            ValueError: missing or non-integer ``owner``, the tile belongs to
                another agent, or as ``set``.
        """
        if entity_name in self._private:
            if owner is None:
                raise ValueError(f"set_point({entity_name!r}, ...) needs owner= (an agent index)")
            own = np.array(self.get(entity_name, owner=True))
            if isinstance(owner, (bool, np.bool_)) or not isinstance(owner, (int, np.integer)):
                raise ValueError(f"set_point({entity_name!r}, ...): owner must be an agent index, got {owner!r}")
            if own[r, c] not in (-1, int(owner)):
                raise ValueError(f"tile ({r}, {c}) of {entity_name!r} belongs to agent {own[r, c]}")
            health = np.array(self.get(entity_name))
            health[r, c] = val
            own[r, c] = int(owner)
            self.set(entity_name, {"owner": own, "health": health})
        else:
            m = np.array(self.get(entity_name))
            m[r, c] = val
            self.set(entity_name, m)

    def set_point_add(self, entity_name: str, r: int, c: int, value, **kwargs) -> None:
        """``set_point(entity_name, r, c, get_point(entity_name, r, c) + value, **kwargs)``."""
        self.set_point(entity_name, r, c, value + self.get_point(entity_name, r, c), **kwargs)

    def values(self):
        """Map values in ``keys()`` order (``{"owner", "health"}`` dicts for private landmarks)."""
        return [self.state_dict[k] for k in self.keys()]

    def items(self):
        d = self.state_dict
        return [(k, d[k]) for k in self.keys()]

    @property
    def state_dict(self) -> dict:
        """``{name: map}``, private landmarks as ``{"owner": int16, "health": float64}``."""
        out = {}
        for k in self.keys():
            if k in self._private:
                out[k] = {"owner": self.get(k, owner=True), "health": self.get(k)}
            else:
                out[k] = self.get(k)
        return out

    @property
    def state(self) -> np.ndarray:
        """float32 [C, H, W]: every map (private landmarks: health), ``keys()`` order."""
        return _readonly(np.stack([self.get(k) for k in self.keys()]).astype(np.float32))

    @property
    def owner_state(self) -> np.ndarray:
        """int16 [L, H, W]: owner maps of the private landmarks."""
        return _readonly(np.stack([self.get(k, owner=True) for k in self._private]).astype(np.int16))

    @property
    def empty(self) -> np.ndarray:
        """bool [H, W]: tiles without any resource or landmark."""
        return _readonly(self.state.sum(axis=0) == 0)

    @property
    def unoccupied(self) -> np.ndarray:
        """bool [H, W]: tiles no mobile agent stands on."""
        return _readonly(self._env.world.loc_map == -1)

    @property
    def accessibility(self) -> np.ndarray:
        """bool [n, H, W]: tiles each agent may stand on, ignoring other agents."""
        host = self._env._host()
        core = self._env._core
        ok = np.ones((core.n_agents,) + tuple(core.world_size), bool)
        for name in core.blocking_landmarks:
            ok &= (np.asarray(host.maps[name]) == 0)[None]
        for name in core.private_landmarks:
            own = np.asarray(host.owner[name])[None]
            ok &= (own == -1) | (own == np.arange(core.n_agents)[:, None, None])
        return _readonly(ok)

    def is_accessible(self, r, c, agent_id) -> bool:
        return bool(self.accessibility[agent_id, r, c])

    def location_resources(self, r, c) -> dict:
        """``{resource: health}`` of collectible resources with health > 0 at (r, c)."""
        return {
            k: float(self.get(k)[r, c]) for k in self._env._core.collectible if self.get(k)[r, c] > 0
        }

    def location_landmarks(self, r, c) -> dict:
        """``{landmark: health}`` of landmarks with health > 0 at (r, c)."""
        res = set(self._env._core.collectible)
        return {k: float(self.get(k)[r, c]) for k in self.keys() if k not in res and self.get(k)[r, c] > 0}


class World:
    """View of the world (Foundation's ``env.world``): maps, agents, timestep.

    Attributes:
        world_size: [H, W]. n_agents: number of mobile agents.
        resources: sorted resource names. landmarks: landmark names, source
            blocks included (as Foundation's ``world.landmarks``).
        multi_action_mode_agents, multi_action_mode_planner: bools.
    """

    def __init__(self, env: "FoundationEnv"):
        self._env = env
        core = env._core
        self.world_size = list(core.world_size)
        self.n_agents = core.n_agents
        self.resources = list(core.resources)
        self.landmarks = list(core.landmarks)
        self.multi_action_mode_agents = core.multi_action_mode_agents
        self.multi_action_mode_planner = core.multi_action_mode_planner
        self.maps = Maps(env)

    @property
    def agents(self) -> list:
        """The mobile agents, by index."""
        return self._env._agents

    @property
    def planner(self):
        """The planner agent."""
        return self._env._planner

    @property
    def timestep(self) -> int:
        """Steps taken in the current episode."""
        return int(self._env._host().timestep)

    @property
    def loc_map(self) -> np.ndarray:
        """int16 [H, W]: index of the agent on each tile, -1 where none."""
        loc = np.asarray(self._env._host().loc)
        out = -np.ones(self.world_size, dtype=np.int16)
        for i, (r, c) in enumerate(loc):
            if r >= 0 and c >= 0:
                out[r, c] = i
        return _readonly(out)

    def is_valid(self, r, c) -> bool:
        """Whether (r, c) lies inside the world."""
        return 0 <= r < self.world_size[0] and 0 <= c < self.world_size[1]

    def is_location_accessible(self, r, c, agent) -> bool:
        return self.is_valid(r, c) and self.maps.is_accessible(r, c, agent.idx)

    def can_agent_occupy(self, r, c, agent) -> bool:
        """Accessible to ``agent`` and no agent stands there."""
        return self.is_location_accessible(r, c, agent) and bool(self.loc_map[r, c] == -1)

    def location_resources(self, r, c) -> dict:
        return self.maps.location_resources(r, c) if self.is_valid(r, c) else {}

    def location_landmarks(self, r, c) -> dict:
        return self.maps.location_landmarks(r, c) if self.is_valid(r, c) else {}


# ---------------------------------------------------------------------------
# the environment
# ---------------------------------------------------------------------------


class FoundationEnv:
    """A stateful Foundation environment backed by jaxecon's jitted core.

    Holds the functional environment (``core``), its ``params``, a PRNG key
    and the current ``EnvState`` (``state``); ``reset``/``step`` call
    ``jax.jit``-compiled core functions (compiled once per object, on first
    use). See the module docstring for what differs from Foundation.

    Args:
        scenario_name: registered scenario name.
        **kwargs: Foundation's keyword arguments (see ``make_env_instance``).
            ``dense_log_frequency`` (None or int >= 1): dense-log the episodes
            whose index (``_completions`` at reset) is a multiple of it.
            ``world_dense_log_frequency`` (int >= 1, 50): world snapshot every
            that many steps in a dense log. ``collate_agent_step_and_reset_data``
            (bool): ``"a"``/``"p"`` keyed outputs. ``seed`` (None or int >= 0):
            see ``seed``.

    Attributes:
        core: the functional environment (``jaxecon.make``'s result).
        params: ``EnvParams`` used by reset/step (settable).
        state: the current ``EnvState`` (settable).
        world: ``World`` view. collate_agent_step_and_reset_data: bool.
    """

    def __init__(self, scenario_name, **kwargs):
        self._config = (scenario_name, copy.deepcopy(kwargs))
        core = make(scenario_name, **kwargs)
        self._core = core
        self._params = core.default_params
        self._reset_fn = jax.jit(core.reset)
        self._step_fn = jax.jit(core.step)
        self._metrics_fn = jax.jit(core.metrics)

        self.collate_agent_step_and_reset_data = core.collate_agent_step_and_reset_data
        self._create_dense_log_every = core.dense_log_frequency
        self._world_dense_log_frequency = core.world_dense_log_frequency
        self._dense_log_this_episode = False

        self._key = jax.random.key(0)
        if core.seed is not None:
            self.seed(core.seed)

        self._agents = [BasicMobileAgent(self, i, core.agent_actions) for i in range(core.n_agents)]
        self._planner = BasicPlanner(self, "p", core.planner_actions)
        self._agent_lookup = {str(a.idx): a for a in self.all_agents}
        self.world = World(self)

        self._count = 0  # episodes completed (Foundation's _completions)
        self._state = core.init_state(jax.random.key(0), self._params, 0)
        self._host_cache = None
        self._last_ep_metrics = None
        self._dense_log = {"world": [], "states": [], "actions": [], "rewards": []}
        self._component_logs = {}
        self._last_ep_dense_log = copy.deepcopy(self._dense_log)
        self._replay_log = {"reset": {"seed_state": None}, "step": []}
        self._last_ep_replay_log = copy.deepcopy(self._replay_log)

    def __repr__(self):
        return (f"<jaxecon.foundation.FoundationEnv {self._core.name!r} n_agents={self.n_agents} "
                f"world_size={self.world_size} episode_length={self.episode_length}>")

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        return {
            "config": self._config,
            "params": jax.device_get(self._params),
            "state": jax.device_get(self._state),
            "key": np.asarray(jax.random.key_data(self._key)),
            "count": self._count,
            "collate": self.collate_agent_step_and_reset_data,
            "every": self._create_dense_log_every,
            "world_every": self._world_dense_log_frequency,
            "dense_this": self._dense_log_this_episode,
            "logs": (self._dense_log, self._component_logs, self._last_ep_dense_log,
                     self._replay_log, self._last_ep_replay_log, self._last_ep_metrics),
            "buffers": {k: a.action for k, a in self._agent_lookup.items()},
        }

    def __setstate__(self, d):
        name, kwargs = d["config"]
        kwargs = dict(kwargs, seed=None)
        self.__init__(name, **kwargs)
        self._params = d["params"]
        self._state = jax.tree.map(jnp.asarray, d["state"])
        self._key = jax.random.wrap_key_data(jnp.asarray(d["key"]))
        self._count = d["count"]
        self.collate_agent_step_and_reset_data = d["collate"]
        self._create_dense_log_every = d["every"]
        self._world_dense_log_frequency = d["world_every"]
        self._dense_log_this_episode = d["dense_this"]
        (self._dense_log, self._component_logs, self._last_ep_dense_log,
         self._replay_log, self._last_ep_replay_log, self._last_ep_metrics) = d["logs"]
        for k, buf in d["buffers"].items():
            self._agent_lookup[k].action = dict(buf)

    # ------------------------------------------------------------ state access
    @property
    def core(self):
        """The functional environment (``jaxecon.core.env.BaseEnvironment``)."""
        return self._core

    @property
    def params(self):
        """``EnvParams`` used by ``reset``/``step`` (replace to change numeric knobs)."""
        return self._params

    @params.setter
    def params(self, value):
        self._params = value

    @property
    def state(self):
        """The current ``EnvState`` (replace it to change the economy)."""
        return self._state

    @state.setter
    def state(self, value):
        self._state = value
        self._host_cache = None

    def _host(self):
        """The current state as numpy arrays (fetched once per state)."""
        if self._host_cache is None:
            self._host_cache = jax.device_get(self._state)
        return self._host_cache

    @property
    def _completions(self) -> int:
        """Episodes completed (incremented by every step that returns done)."""
        return self._count

    @_completions.setter
    def _completions(self, value):
        self._count = int(value)
        self.state = self._state.replace(completions=jnp.asarray(self._count, jnp.int32))

    def _agent_state(self, idx) -> dict:
        """Foundation's ``agent.state`` for agent ``idx`` (int or "p") from the current state."""
        return self._agent_state_from(self._host(), idx)

    def _state_fields(self, host) -> tuple:
        """The fields components and scenario add to Foundation's ``agent.state``, for ``host``.

        Returns ``(agents, planner)``: ``agents`` ``{field: np.ndarray [n]}``
        from each component acting on ``BasicMobileAgent`` (its
        ``agent_state_fields``), then from the scenario; ``planner``
        ``{field: scalar}`` from each component's ``planner_state_fields``,
        then the scenario's. A scenario adds fields by defining those two
        host-side methods (optional), as ``CovidAndEconomySimulation`` does
        ("Total Infected", "Total Deaths", "Date", ... ; Foundation's
        ``covid19_env.py`` writes them into ``agent.state`` in its reset and
        step), so they come after the components' fields, as in Foundation.
        """
        core = self._core
        agents, planner = {}, {}
        for comp in core.components:
            if "BasicMobileAgent" in comp.agent_subclasses:
                agents.update(comp.agent_state_fields(host))
            fields = getattr(comp, "planner_state_fields", None)
            if fields is not None:
                planner.update(fields(host))
        for name, out in (("agent_state_fields", agents), ("planner_state_fields", planner)):
            fields = getattr(core, name, None)
            if fields is not None:
                out.update(fields(host))
        return agents, planner

    def _agent_state_from(self, host, idx, fields=None) -> dict:
        """Foundation's ``agent.state`` of agent ``idx`` (int or "p") in ``host``.

        ``fields``: ``self._state_fields(host)`` if already computed (one call
        serves every agent of a dense-log entry).
        """
        core = self._core
        agents, planner = self._state_fields(host) if fields is None else fields
        if idx == "p":
            out = {
                "inventory": {r: float(host.planner_inventory[r]) for r in core.resources},
                "escrow": {r: float(host.planner_escrow[r]) for r in core.resources},
                "endogenous": {},
            }
            out.update({k: _py(np.asarray(v)) for k, v in planner.items()})
            return out
        i = int(idx)
        loc = np.asarray(host.loc)[i]
        out = {
            "loc": [int(loc[0]), int(loc[1])],
            "inventory": {r: float(host.inventory[r][i]) for r in core.resources},
            "escrow": {r: float(host.escrow[r][i]) for r in core.resources},
            "endogenous": {e: float(host.endogenous[e][i]) for e in core.endogenous},
        }
        out.update({k: _py(np.asarray(v)[i]) for k, v in agents.items()})
        return out

    # ------------------------------------------------------------ properties
    @property
    def all_agents(self) -> list:
        """Mobile agents (by index) and then the planner."""
        return self._agents + [self._planner]

    @property
    def episode_length(self) -> int:
        """Timesteps per episode."""
        return int(self._core.episode_length)

    @property
    def n_agents(self) -> int:
        """Number of mobile agents."""
        return int(self._core.n_agents)

    @property
    def num_agents(self) -> int:
        """Mobile agents plus the planner."""
        return self.n_agents + 1

    @property
    def world_size(self) -> list:
        """[H, W]."""
        return list(self._core.world_size)

    @property
    def multi_action_mode_agents(self) -> bool:
        return bool(self._core.multi_action_mode_agents)

    @property
    def multi_action_mode_planner(self) -> bool:
        return bool(self._core.multi_action_mode_planner)

    @property
    def inv_scale(self):
        """0.01 if ``allow_observation_scaling`` else 1."""
        return self._core.inv_scale

    @property
    def resources(self) -> list:
        """Sorted resource names, e.g. ``["Coin", "Stone", "Wood"]``."""
        return sorted(self._core.resources)

    @property
    def landmarks(self) -> list:
        """Sorted landmark names required by the scenario/components (no source
        blocks, as Foundation), e.g. ``["House", "Water"]``."""
        auto = {r + "SourceBlock" for r in self._core.collectible}
        return sorted(l for l in self._core.landmarks if l not in auto)

    @property
    def endogenous(self) -> list:
        """Sorted endogenous names, e.g. ``["Labor"]``."""
        return sorted(self._core.endogenous)

    @property
    def components(self) -> list:
        """The component objects, in list order."""
        return list(self._core.components)

    @property
    def metrics(self) -> dict:
        """Scenario metrics plus ``"<shorthand>/<key>"`` component metrics, as Python scalars."""
        m = jax.device_get(self._metrics_fn(self._state, self._params))
        return {k: _py(np.asarray(v)) for k, v in m.items()}

    @property
    def previous_episode_metrics(self):
        """``metrics`` at the end of the last completed episode (None before any)."""
        return self._last_ep_metrics

    @property
    def dense_log(self) -> dict:
        """The current episode's dense log so far (``world``, ``states``,
        ``actions``, ``rewards``; component logs are added when it ends)."""
        return self._dense_log

    @property
    def previous_episode_dense_log(self) -> dict:
        """The dense log of the last completed dense-logged episode (see ``step``)."""
        return self._last_ep_dense_log

    @property
    def replay_log(self) -> dict:
        """The current episode's replay log so far."""
        return self._replay_log

    @property
    def previous_episode_replay_log(self) -> dict:
        """``{"reset": {"seed_state": uint32 key data, "completions": int},
        "step": [{"actions": ..., "seed_state": ...}, ...]}`` of the last
        completed episode. Replay::

            env.reset(force_dense_logging=True, **log["reset"])
            for entry in log["step"]:
                env.step(**entry)
            env.previous_episode_dense_log, env.previous_episode_metrics  # reproduced
        """
        return self._last_ep_replay_log

    # ------------------------------------------------------------ seeding
    def seed(self, seed):
        """Seed the environment's PRNG key with ``jax.random.key(seed)``, and
        Python's ``random`` and ``np.random`` (as Foundation's ``seed``).

        Args:
            seed: int (or integral float) >= 0.
        Raises:
            ValueError: for anything else.
        """
        if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, numbers.Real)):
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"seed must be an int >= 0, got {seed!r}")
        self._key = jax.random.key(seed)
        np.random.seed(seed % 2**32)
        _pyrandom.seed(seed)

    # ------------------------------------------------------------ lookups
    def get_component(self, component_name: str):
        """The component object by name or shorthand (e.g. ``"Build"``, ``"Trade"``).

        Raises:
            KeyError: no such component in this environment (lists the present ones).
        """
        return self._core.get_component(component_name)

    def get_agent(self, agent_idx):
        """The agent with index ``agent_idx`` (int, ``"0"``, ..., or ``"p"``).

        Raises:
            ValueError: no such agent.
        """
        agent = self._agent_lookup.get(str(agent_idx))
        if agent is None:
            raise ValueError(
                f"No agent with associated index {agent_idx!r}; agents: {list(self._agent_lookup)}"
            )
        return agent

    def set_agent_component_action(self, agent_idx, component_name, action):
        """Set agent ``agent_idx``'s pending action for subspace ``component_name``.

        Raises:
            ValueError: unknown agent or out-of-range action.
            KeyError: the agent has no such subspace.
        """
        self.get_agent(agent_idx).set_component_action(component_name, action)

    def _parsed_buffers(self, action_dictionary) -> dict:
        if not isinstance(action_dictionary, dict):
            raise ValueError(
                "actions must be a dict {agent_idx: action} keyed by "
                f"{list(self._agent_lookup)}, got {type(action_dictionary).__name__}"
            )
        out = {}
        for k, v in action_dictionary.items():
            agent = self.get_agent(k)
            out[str(agent.idx)] = agent._parsed(v)
        return out

    def parse_actions(self, action_dictionary: dict):
        """Put ``{agent_idx: action}`` into the agents' action buffers (all or nothing).

        Raises:
            ValueError: unknown agent key, or a wrong action format/length/range.
        """
        for k, buf in self._parsed_buffers(action_dictionary).items():
            self._agent_lookup[k].action = buf

    def _functional_actions(self, buffers: dict) -> dict:
        a = np.stack([ag._functional_action(buffers[str(ag.idx)]) for ag in self._agents])
        p = self._planner._functional_action(buffers["p"])
        return {"a": a.astype(np.int32), "p": np.asarray(p, dtype=np.int32)}

    # ------------------------------------------------------------ outputs
    def _format_obs(self, obs) -> dict:
        """Functional obs -> Foundation's per-agent (or collated) dicts of numpy arrays."""
        obs = jax.device_get(obs)
        oa, op = obs["a"], obs["p"]
        planner = {}
        for k, v in op.items():
            if isinstance(v, dict):
                planner[k] = (
                    {kk: np.asarray(vv, dtype=np.uint8).tolist() for kk, vv in v.items()}
                    if k == "action_mask" else {kk: _obs_value(vv) for kk, vv in v.items()}
                )
            else:
                planner[k] = _obs_value(v)
        if self.collate_agent_step_and_reset_data:
            agents_obs = {}
            for k, v in oa.items():
                if isinstance(v, dict):  # unflattened masks
                    agents_obs[k] = {kk: np.moveaxis(np.asarray(vv, np.uint8), 0, -1).tolist()
                                     for kk, vv in v.items()}
                else:
                    agents_obs[k] = np.array(np.moveaxis(np.asarray(v), 0, -1))
            return {"a": agents_obs, "p": planner}
        out = {}
        for i in range(self.n_agents):
            d = {}
            for k, v in oa.items():
                if isinstance(v, dict):
                    d[k] = {kk: np.asarray(vv[i], np.uint8).tolist() for kk, vv in v.items()}
                else:
                    d[k] = _obs_value(v[i])
            out[str(i)] = d
        out["p"] = planner
        return out

    def _world_snapshot(self, host) -> dict:
        out = {}
        for k in self._core.map_keys:
            health = np.asarray(host.maps[k], dtype=np.float64)
            if k in self._core.private_landmarks:
                owner = np.asarray(host.owner[k]).astype(np.int16)
                out[k] = {"owner": owner.tolist(), "health": health.tolist()}
            else:
                out[k] = health.tolist()
        return out

    def _all_states(self, host) -> dict:
        fields = self._state_fields(host)
        return {str(a.idx): self._agent_state_from(host, a.idx, fields) for a in self.all_agents}

    # ------------------------------------------------------------ reset / step
    def reset(self, seed_state=None, force_dense_logging=False, completions=None):
        """Start a new episode.

        Args:
            seed_state: None (use the environment's key stream) or the key data
                of a previous reset (``previous_episode_replay_log["reset"]``)
                to reproduce it.
            force_dense_logging: dense-log this episode regardless of
                ``dense_log_frequency``.
            completions: jaxecon extension (recorded in the replay log): the
                episode counter the reset should see (drives energy warm-up);
                default ``_completions``. Does not change ``_completions``.
        Returns:
            obs: ``{"0": {...}, ..., "p": {...}}`` (or ``{"a": ..., "p": ...}``
            when collating); each agent's dict holds numpy arrays, e.g.
            ``world-map`` float32 [C, 2r+1, 2r+1], ``world-idx_map`` int16,
            ``flat`` float32 [F], ``time`` float32 [1], ``action_mask`` float32.
        Raises:
            ValueError: malformed ``seed_state``.
        """
        key = self._key if seed_state is None else _seed_state_to_key(seed_state)
        count = self._count if completions is None else _as_index(completions, "completions")
        if force_dense_logging:
            self._dense_log_this_episode = True
        elif self._create_dense_log_every is None:
            self._dense_log_this_episode = False
        else:
            self._dense_log_this_episode = self._count % self._create_dense_log_every == 0
        self._dense_log = {"world": [], "states": [], "actions": [], "rewards": []}
        self._component_logs = {}
        self._replay_log = {
            "reset": {"seed_state": np.asarray(jax.random.key_data(key)), "completions": count},
            "step": [],
        }
        self._key, use = jax.random.split(key)
        obs, state = self._reset_fn(use, self._params, count, self._state)
        self.state = state
        for agent in self.all_agents:
            agent.reset_actions()
        return self._format_obs(obs)

    def step(self, actions=None, seed_state=None):
        """Advance one timestep.

        Args:
            actions: None (everyone NO-OP) or ``{agent_idx: action}`` with
                keys ``0..n-1``/``"p"`` (ints or strings); absent agents take
                NO-OP. An action is, in single-action mode, an int global index
                (0 = NO-OP, then each subspace's actions 1..n in order, see
                ``agent.single_action_map``) or a one-entry dict
                ``{subspace_name: local_action}``; in multi-action mode, a
                sequence with one local index per subspace (0 = its NO-OP;
                ``[0]`` for an agent without actions), or a
                ``{subspace_name: local_action}`` dict. Actions set earlier with
                ``set_agent_component_action``/``parse_actions`` are used too.
            seed_state: None or the key data recorded for this step in a
                replay log.
        Returns:
            ``(obs, rew, done, info)``: obs as in ``reset``; rew ``{"0": float,
            ..., "p": float}``; done ``{"__all__": bool}`` (timestep >=
            episode_length); info ``{"0": {}, ..., "p": {}}``. Collated
            (``"a"``/``"p"``) when ``collate_agent_step_and_reset_data``.
        Raises:
            ValueError: unknown agent key; wrong action format, length or
                range (the message lists the allowed values); malformed
                ``seed_state``. Nothing changes when it raises.
        """
        if actions is None:
            buffers = {k: dict(a.action) for k, a in self._agent_lookup.items()}
        else:
            parsed = self._parsed_buffers(actions)
            buffers = {k: parsed.get(k, dict(a.action)) for k, a in self._agent_lookup.items()}
        fa = self._functional_actions(buffers)
        key = self._key if seed_state is None else _seed_state_to_key(seed_state)

        self._replay_log["step"].append(
            {"actions": copy.deepcopy(actions), "seed_state": np.asarray(jax.random.key_data(key))}
        )
        dense = self._dense_log_this_episode
        if dense:
            prev = self._host()
            t = int(prev.timestep)
            self._dense_log["world"].append(
                self._world_snapshot(prev) if t % self._world_dense_log_frequency == 0 else {}
            )
            self._dense_log["states"].append(self._all_states(prev))
            self._dense_log["actions"].append(
                {k: {n: v for n, v in buffers[k].items() if v > 0} for k in self._agent_lookup}
            )

        self._key, use = jax.random.split(key)
        obs, state, rew, done, _ = self._step_fn(use, self._state, fa, self._params)
        self.state = state
        rew = jax.device_get(rew)
        rew_d = {str(i): float(rew["a"][i]) for i in range(self.n_agents)}
        rew_d["p"] = float(rew["p"])
        done_d = {"__all__": bool(done)}
        info = {k: {} for k in self._agent_lookup}
        if dense:
            new = self._host()
            for comp in self._core.components:
                entry = comp.dense_log_entry(prev, new)
                if entry is not None:
                    self._component_logs.setdefault(comp.shorthand, []).append(_cast(entry))
            self._dense_log["rewards"].append(dict(rew_d))
        for agent in self.all_agents:
            agent.reset_actions()
        if done_d["__all__"]:
            self._finalize_logs()
            self._count += 1

        obs = self._format_obs(obs)
        if self.collate_agent_step_and_reset_data:
            rew_d = {"a": [rew_d[str(i)] for i in range(self.n_agents)], "p": rew_d["p"]}
            info = {"a": {str(i): {} for i in range(self.n_agents)}, "p": {}}
        return obs, rew_d, done_d, info

    def _finalize_logs(self):
        """Stash the replay log and metrics; finish the dense log (if logging)."""
        self._last_ep_replay_log = {
            "reset": dict(self._replay_log["reset"]), "step": list(self._replay_log["step"])
        }
        self._last_ep_metrics = self.metrics
        if not self._dense_log_this_episode:
            return
        host = self._host()
        self._dense_log["world"].append(self._world_snapshot(host))
        self._dense_log["states"].append(self._all_states(host))
        log = copy.deepcopy(self._dense_log)
        for comp in self._core.components:
            if comp.shorthand in self._component_logs:
                log[comp.shorthand] = copy.deepcopy(self._component_logs[comp.shorthand])
        self._last_ep_dense_log = _cast(log)
