"""World views of the shim: Foundation's ``World`` and ``Maps`` (``base/world.py``).

Follows ``ai_economist/foundation/base/world.py`` of ai-economist 1.7.1.
Reads come from the environment's current ``EnvState`` (read-only numpy
arrays); the writing methods (``Maps.set*``, ``Maps.clear``,
``World.set_agent_loc``, ``consume_resource``, ``create_landmark``, the
``timestep`` setter, ...) write a new ``EnvState`` into the environment.
Attributes a scenario keeps on Foundation's world (COVID-19's
``us_state_population``, ``start_date``, ``n_stringency_levels``, ...) are
read through the environment's scenario attributes.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from jaxecon.foundation._convert import as_index, readonly


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
        """Map names, Foundation order (a ``dict_keys`` view, as Foundation's)."""
        return dict.fromkeys(self._env._core.map_keys).keys()

    def get(self, entity_name: str, owner: bool = False) -> np.ndarray:
        """float64 [H, W] health of ``entity_name``; for a private landmark
        with ``owner=True`` the int16 [H, W] owner map (-1 = nobody).

        Raises:
            KeyError: unknown map name (lists the known ones).
        """
        host = self._env._host()
        if entity_name not in self._env._core.map_keys:
            raise KeyError(f"no map {entity_name!r}; maps: {list(self.keys())}")
        if owner:
            if entity_name not in self._private:
                raise KeyError(f"{entity_name!r} is not a private landmark; those are {list(self._private)}")
            return readonly(np.asarray(host.owner[entity_name]).astype(np.int16))
        return readonly(np.asarray(host.maps[entity_name], dtype=np.float64))

    def clear(self, entity_name=None) -> None:
        """Zero one map (or every map; private landmarks lose their owners too)."""
        for name in [entity_name] if entity_name is not None else list(self.keys()):
            if name in self._private:
                shape = (self.sz_h, self.sz_w)
                self.set(name, {"owner": -np.ones(shape), "health": np.zeros(shape)})
            else:
                self.set(name, np.zeros((self.sz_h, self.sz_w)))

    def clear_agent_loc(self, agent=None) -> None:
        """Take ``agent`` (or every mobile agent) off the map: location ``[-1, -1]``."""
        env = self._env
        loc = np.array(env._host().loc)
        loc[slice(None) if agent is None else int(agent.idx)] = -1
        env.state = env.state.replace(loc=jnp.asarray(loc, env.state.loc.dtype))

    def set_agent_loc(self, agent, r: int, c: int) -> None:
        """Put ``agent`` on tile (r, c), unchecked (Foundation's ``Maps.set_agent_loc``;
        ``World.set_agent_loc`` checks the tile first).

        Raises:
            ValueError: (r, c) outside the world.
        """
        if not (0 <= r < self.sz_h and 0 <= c < self.sz_w):
            raise ValueError(f"({r}, {c}) is outside the world of size {[self.sz_h, self.sz_w]}")
        env = self._env
        loc = np.array(env._host().loc)
        loc[int(agent.idx)] = [int(r), int(c)]
        env.state = env.state.replace(loc=jnp.asarray(loc, env.state.loc.dtype))

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
            raise KeyError(f"no map {entity_name!r}; maps: {list(self.keys())}")
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
        """``(name, map)`` pairs in ``keys()`` order (as ``values``)."""
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
        return readonly(np.stack([self.get(k) for k in self.keys()]).astype(np.float32))

    @property
    def owner_state(self) -> np.ndarray:
        """int16 [L, H, W]: owner maps of the private landmarks."""
        return readonly(np.stack([self.get(k, owner=True) for k in self._private]).astype(np.int16))

    @property
    def empty(self) -> np.ndarray:
        """bool [H, W]: tiles without any resource or landmark."""
        return readonly(self.state.sum(axis=0) == 0)

    @property
    def unoccupied(self) -> np.ndarray:
        """bool [H, W]: tiles no mobile agent stands on."""
        return readonly(self._env.world.loc_map == -1)

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
        return readonly(ok)

    def is_accessible(self, r, c, agent_id) -> bool:
        """Whether agent ``agent_id`` may stand on (r, c), ignoring other agents."""
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
        use_cuda: False; cuda_data_manager, cuda_function_manager: None
            (WarpDrive's, as Foundation's CPU world).
    """

    use_cuda = False
    cuda_data_manager = None
    cuda_function_manager = None

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

    def __setattr__(self, name, value):
        # A scenario attribute kept on Foundation's world is written where it
        # lives (env.params / env.state) or refused; anything else is plain.
        d = self.__dict__
        if "maps" in d and name not in d and not hasattr(type(self), name):
            if self._env._scenario_attributes().set(name, value):
                return
        object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # Only reached when normal lookup fails: attributes Foundation's scenarios
        # keep on the world (COVID-19's us_state_population, start_date, ...).
        if name.startswith("__") or "_env" not in self.__dict__:
            raise AttributeError(name)
        try:
            return self._env._scenario_attributes().get(name)
        except AttributeError:
            raise AttributeError(f"'World' object has no attribute {name!r}") from None

    @property
    def agents(self) -> list:
        """The mobile agents, by index."""
        return self._env._agents

    @property
    def global_state(self) -> dict:
        """COVID-19's ``{key: float32 [episode_length + 1, n]}`` rows of the episode so
        far ("Susceptible", "Infected", ..., "Postsubsidy Productivity"; zeros
        after the current timestep), as Foundation's ``world.global_state``.
        Fresh arrays: writing into them changes nothing.

        Raises:
            AttributeError: a scenario without such rows.
        """
        return self._env._global_state()

    @property
    def _agents(self) -> list:
        return self._env._agents

    @property
    def _planner(self):
        return self._env._planner

    @property
    def planner(self):
        """The planner agent."""
        return self._env._planner

    @property
    def timestep(self) -> int:
        """Steps taken in the current episode (settable: writes ``state.timestep``,
        as Foundation's wrappers do with ``env.world.timestep = 0``)."""
        return int(self._env._host().timestep)

    @timestep.setter
    def timestep(self, value) -> None:
        env = self._env
        env.state = env.state.replace(timestep=jnp.asarray(as_index(value, "timestep"), env.state.timestep.dtype))

    @property
    def loc_map(self) -> np.ndarray:
        """int16 [H, W]: index of the agent on each tile, -1 where none."""
        loc = np.asarray(self._env._host().loc)
        out = -np.ones(self.world_size, dtype=np.int16)
        for i, (r, c) in enumerate(loc):
            if r >= 0 and c >= 0:
                out[r, c] = i
        return readonly(out)

    def get_random_order_agents(self) -> list:
        """The mobile agents in a random order (``np.random.permutation``, as Foundation)."""
        return [self.agents[i] for i in np.random.permutation(self.n_agents)]

    def is_valid(self, r, c) -> bool:
        """Whether (r, c) lies inside the world."""
        return 0 <= r < self.world_size[0] and 0 <= c < self.world_size[1]

    def is_location_accessible(self, r, c, agent) -> bool:
        """(r, c) is inside the world and accessible to ``agent`` (ignoring other agents)."""
        return self.is_valid(r, c) and self.maps.is_accessible(r, c, agent.idx)

    def can_agent_occupy(self, r, c, agent) -> bool:
        """Accessible to ``agent`` and no agent stands there."""
        return self.is_location_accessible(r, c, agent) and bool(self.loc_map[r, c] == -1)

    def get_random_order_agents(self) -> list:
        """The mobile agents in a random order (``np.random.permutation``, as Foundation)."""
        return [self.agents[i] for i in np.random.permutation(self.n_agents)]

    def clear_agent_locs(self) -> None:
        """Take every mobile agent off the map (locations ``[-1, -1]``)."""
        self.maps.clear_agent_loc()

    def agent_locs_are_valid(self) -> bool:
        """Whether every mobile agent stands on a tile accessible to it."""
        return all(self.is_location_accessible(*agent.loc, agent) for agent in self.agents)

    def set_agent_loc(self, agent, r, c) -> list:
        """Move ``agent`` to (r, c) if it can occupy the tile, else leave it;
        returns its location ``[row, col]`` afterwards."""
        if self.can_agent_occupy(r, c, agent):
            self.maps.set_agent_loc(agent, r, c)
        return [int(x) for x in agent.loc]

    def create_landmark(self, landmark_name: str, r: int, c: int, agent_idx=None) -> None:
        """Put one unit of ``landmark_name`` on (r, c), owned by ``agent_idx`` for a
        private landmark (``maps.set_point(..., 1, owner=agent_idx)``)."""
        self.maps.set_point(landmark_name, r, c, 1, owner=agent_idx)

    def consume_resource(self, resource_name: str, r: int, c: int) -> None:
        """Remove one unit of ``resource_name`` from (r, c) (never below 0)."""
        self.maps.set_point_add(resource_name, r, c, -1)

    def location_resources(self, r, c) -> dict:
        """``maps.location_resources(r, c)``; ``{}`` outside the world."""
        return self.maps.location_resources(r, c) if self.is_valid(r, c) else {}

    def location_landmarks(self, r, c) -> dict:
        """``maps.location_landmarks(r, c)``; ``{}`` outside the world."""
        return self.maps.location_landmarks(r, c) if self.is_valid(r, c) else {}
