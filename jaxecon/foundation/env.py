"""The shim's environment: ``FoundationEnv`` and ``make_env_instance``.

Follows ``BaseEnvironment`` (``ai_economist/foundation/base/base_env.py``)
and ``make_env_instance`` (``ai_economist/foundation/__init__.py``) of
ai-economist 1.7.1: a stateful object holding a PRNG key and the current
``EnvState``, whose ``reset``/``step`` call the jitted core. See the package
docstring (``jaxecon.foundation``) for what differs from Foundation.
"""

from __future__ import annotations

import copy
import numbers
import random as _pyrandom

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.dense_log import recursive_cast, rewards_entry
from jaxecon.foundation import formats
from jaxecon.foundation._convert import as_index, key_data, seed_state_to_key
from jaxecon.foundation.agent_state import agent_state
from jaxecon.foundation.agent_views import BasicMobileAgent, BasicPlanner
from jaxecon.foundation.env_attributes import EnvAttributes
from jaxecon.foundation.logs import EpisodeLogs
from jaxecon.foundation.world import World
from jaxecon.make import make


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


class FoundationEnv(EnvAttributes):
    """A stateful Foundation environment backed by jaxecon's jitted core.

    Holds the functional environment (``core``), its ``params``, a PRNG key
    and the current ``EnvState`` (``state``); ``reset``/``step`` call
    ``jax.jit``-compiled core functions (compiled once per object, on first
    use). Foundation's other attribute names (``name``, ``_components``,
    ``_dense_log``, the scenario's attributes, ...) come from ``EnvAttributes``.
    See the package docstring for what differs from Foundation.

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
        self._logs = EpisodeLogs()

    def __repr__(self):
        return (f"<jaxecon.foundation.FoundationEnv {self._core.name!r} n_agents={self.n_agents} "
                f"world_size={self.world_size} episode_length={self.episode_length}>")

    # ------------------------------------------------------------ pickling
    def __getstate__(self):
        return {
            "config": self._config,
            "params": jax.device_get(self._params),
            "state": jax.device_get(self._state),
            "key": key_data(self._key),
            "count": self._count,
            "collate": self.collate_agent_step_and_reset_data,
            "every": self._create_dense_log_every,
            "world_every": self._world_dense_log_frequency,
            "dense_this": self._dense_log_this_episode,
            "logs": self._logs,
            "buffers": {k: a.action for k, a in self._agent_lookup.items()},
        }

    def __setstate__(self, d):
        name, kwargs = d["config"]
        kwargs = dict(kwargs, seed=None)
        FoundationEnv.__init__(self, name, **kwargs)
        self._params = d["params"]
        self._state = jax.tree.map(jnp.asarray, d["state"])
        self._key = jax.random.wrap_key_data(jnp.asarray(d["key"]))
        self._count = d["count"]
        self.collate_agent_step_and_reset_data = d["collate"]
        self._create_dense_log_every = d["every"]
        self._world_dense_log_frequency = d["world_every"]
        self._dense_log_this_episode = d["dense_this"]
        self._logs = d["logs"]
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
        return agent_state(self._core, self._host(), idx)

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
        """Whether the mobile agents take one action per subspace per step."""
        return bool(self._core.multi_action_mode_agents)

    @property
    def multi_action_mode_planner(self) -> bool:
        """Whether the planner take one action per subspace per step."""
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
        """The component objects, in list order (views with Foundation's attributes,
        see ``component_views``)."""
        return self._components

    @property
    def metrics(self) -> dict:
        """Scenario metrics plus ``"<shorthand>/<key>"`` component metrics, as Python scalars."""
        m = jax.device_get(self._metrics_fn(self._state, self._params))
        return {k: recursive_cast(np.asarray(v)) for k, v in m.items()}

    @property
    def previous_episode_metrics(self):
        """``metrics`` at the end of the last completed episode (None before any)."""
        return self._logs.previous_metrics

    @property
    def dense_log(self) -> dict:
        """The current episode's dense log so far (``world``, ``states``,
        ``actions``, ``rewards``; component logs are added when it ends)."""
        return self._logs.dense_log

    @property
    def previous_episode_dense_log(self) -> dict:
        """The dense log of the last completed dense-logged episode (see ``step``)."""
        return self._logs.previous_dense_log

    @property
    def replay_log(self) -> dict:
        """The current episode's replay log so far."""
        return self._logs.replay_log

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
        return self._logs.previous_replay_log

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
        return self._components_dict[self._core.get_component(component_name).name]

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
            when collating) in Foundation's key order (``formats``); e.g.
            ``world-map`` float32 [C, 2r+1, 2r+1], ``world-idx_map`` int16,
            ``time`` ``[t / episode_length]`` (a list), ``flat`` float32 [F],
            ``action_mask`` float32.
        Raises:
            ValueError: malformed ``seed_state``.
        """
        key = self._key if seed_state is None else seed_state_to_key(seed_state)
        count = self._count if completions is None else as_index(completions, "completions")
        if force_dense_logging:
            self._dense_log_this_episode = True
        elif self._create_dense_log_every is None:
            self._dense_log_this_episode = False
        else:
            self._dense_log_this_episode = self._count % self._create_dense_log_every == 0
        self._logs.start_episode(key_data(key), count)
        self._key, use = jax.random.split(key)
        obs, state = self._reset_fn(use, self._params, count, self._state)
        self.state = state
        self._record_global_state()
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
                ``agent.single_action_map``; also as a 1-element array or
                list, as Foundation accepts) or a one-entry dict
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
            when ``collate_agent_step_and_reset_data``: rew ``{"a": float [n]
            ndarray, "p": float}``, info ``{"a": {}, "p": {}}`` (``formats``).
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
        key = self._key if seed_state is None else seed_state_to_key(seed_state)

        self._logs.record_step(actions, key_data(key))
        dense = self._dense_log_this_episode
        if dense:
            prev = self._host()
            self._logs.record_timestep(self._core, prev, fa, self._world_dense_log_frequency)

        self._key, use = jax.random.split(key)
        obs, state, rew, done, step_info = self._step_fn(use, self._state, fa, self._params)
        self.state = state
        self._record_global_state(step_info)
        rew = jax.device_get(rew)
        rew_d = rewards_entry(rew["a"], rew["p"])
        done_d = {"__all__": bool(done)}
        info = {k: {} for k in self._agent_lookup}
        if self.collate_agent_step_and_reset_data:
            rew_d = formats.collated_rewards(rew["a"], rew["p"])
            info = formats.collated_info()
        if dense:
            self._logs.record_outcome(self._core, prev, self._host(), rew_d)
        for agent in self.all_agents:
            agent.reset_actions()
        if done_d["__all__"]:
            self._finalize_logs()
            self._count += 1
            if dense and self.collate_agent_step_and_reset_data:
                # Foundation returns the dense log's own rewards dict, which its
                # _finalize_logs has just cast: "a" is a list on this step.
                rew_d["a"] = rew_d["a"].tolist()

        obs = self._format_obs(obs)
        return obs, rew_d, done_d, info

    def _format_obs(self, obs) -> dict:
        return formats.format_obs(
            obs, self._observation_layout, self.n_agents,
            self.collate_agent_step_and_reset_data, bool(self._core.flatten_observations),
        )

    def _finalize_logs(self):
        """Stash the replay log and metrics; finish the dense log (if logging)."""
        self._logs.finish_episode(self.metrics)
        if self._dense_log_this_episode:
            self._logs.finish_dense_log(self._core, self._host())
