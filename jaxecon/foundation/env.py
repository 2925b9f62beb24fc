"""The shim's environment: ``FoundationEnv``.

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

from jaxecon.core import metric_keys
from jaxecon.core.registry import scenario_registry
from jaxecon.dense_log import recursive_cast
from jaxecon.foundation import formats
from jaxecon.foundation._convert import as_index, key_data, seed_state_to_key
from jaxecon.foundation.agent_classes import (
    build_agents, check_shim_groups, dense_log_actions, group_keys, planner_keys,
)
from jaxecon.foundation.cpu_runtime import configure_cpu_runtime
from jaxecon.foundation.engine import engine_for
from jaxecon.foundation.env_attributes import EnvAttributes
from jaxecon.foundation.host_engine import CoreScenarioHooks, HostEngine
from jaxecon.foundation.live_state import live_agent_state
from jaxecon.foundation.logs import EpisodeLogs
from jaxecon.foundation.world import World
from jaxecon.factory import build_scenario


class FoundationEnv(EnvAttributes):
    """A stateful Foundation environment backed by jaxecon's jitted core.

    Holds the functional environment (``core``), its ``params``, a PRNG key
    and the current ``EnvState`` (``state``); ``reset``/``step`` call the
    core's functions compiled by an ``Engine`` (``jaxecon.foundation.engine``):
    one jitted call and one transfer back per step, the state kept on the
    device between steps. Environments built with the same scenario and
    keyword arguments share the engine, so only the first one in a process
    compiles (and, with the persistent compilation cache, which
    ``$JAXECON_COMPILATION_CACHE`` turns on, see ``jaxecon.compilation_cache``,
    a new process loads the executables). See the package docstring for what differs from Foundation.
    Foundation's other attribute names (``name``, ``_components``,
    ``_dense_log``, the scenario's attributes, ...) come from ``EnvAttributes``.

    Args:
        scenario_name: registered scenario name.
        **kwargs: Foundation's keyword arguments (see ``make_env_instance``).
            ``dense_log_frequency`` (None or int >= 1): dense-log the episodes
            whose index (``_completions`` at reset) is a multiple of it.
            ``world_dense_log_frequency`` (int >= 1, 50): world snapshot every
            that many steps in a dense log. ``collate_agent_step_and_reset_data``
            (bool): ``"a"``/``"p"`` keyed outputs. ``seed`` (None or int >= 0):
            see ``seed``. ``n_agents_per_class`` (``{agent class name: count}``),
            ``n_planners`` (0 or 1), ``planner_groups``: the scenario's agent
            classes and planners (``jaxecon.core.scenario.Scenario``); mobile
            agents keep idx ``0..n-1`` in class order, the planners are
            ``"p"``, ``"p1"``, ... (``agent_classes``).

    Raises:
        ValueError: a bad declaration (naming the class, the component or the
            count), or one the shim does not run with agent classes or other
            than one planner (``agent_classes.check_shim_groups``).

    Attributes:
        core: the functional environment (``jaxecon.make``'s result).
        params: ``EnvParams`` used by reset/step (settable).
        state: the current ``EnvState`` (settable).
        world: ``World`` view. collate_agent_step_and_reset_data: bool.
    """

    def __init__(self, scenario_name, **kwargs):
        self._build(scenario_registry.get(scenario_name), kwargs, {})
        self._config = (scenario_name, copy.deepcopy(kwargs))

    def _build(self, core_cls, kwargs: dict, hooks: dict) -> None:
        """Construct from the core scenario class ``core_cls`` and Foundation's
        keyword arguments; ``hooks`` are the scenario hooks that run on the
        host (``{name: callable}``, see ``jaxecon.foundation.host_engine``)."""
        self._config = (None, copy.deepcopy(kwargs))
        self._episode_started = False  # step() needs a reset() first
        configure_cpu_runtime()  # before anything creates JAX's backend
        core = build_scenario(core_cls, kwargs, host_components=True)
        on_host = bool(hooks) or any(c.runs_on_host for c in core.components)
        self._grouped = not core.has_foundation_groups
        if self._grouped:
            check_shim_groups(core, on_host)
        self._core = core
        self._extra_state_fields = {}  # agent idx -> {key: value} written by host code
        if on_host:
            self._engine = HostEngine(core, self, hooks)
        else:
            self._engine = engine_for(core.name, kwargs, core)
        self._core_hooks = CoreScenarioHooks(self)
        self._params = core.default_params
        self._params_packed = (None, None)  # (params object, its device buffers)

        self.collate_agent_step_and_reset_data = core.collate_agent_step_and_reset_data
        self._create_dense_log_every = core.dense_log_frequency
        self._world_dense_log_frequency = core.world_dense_log_frequency
        self._dense_log_this_episode = False

        self._kd = key_data(jax.random.key(0))
        if core.seed is not None:
            self.seed(core.seed)

        self._agents, self._planners = build_agents(self, core)
        self._planner = self._planners[0] if self._planners else None
        self._agent_lookup = {str(a.idx): a for a in self.all_agents}
        self._mobile_keys = [str(i) for i in range(core.n_agents)]
        self._planner_keys = planner_keys(core)
        # each group's agents, in group order: (group name, agents, is planner)
        self._group_agents = [(g.name, [self._agent_lookup[k] for k in keys], g.is_planner)
                              for g, keys in group_keys(core)]
        self.world = World(self)
        for comp in core.components:
            if comp.runs_on_host:
                comp.host._world = self.world  # replaces the stand-in it had during construction

        self._count = 0  # episodes completed (Foundation's _completions)
        self._set_buffers(self._engine.init(self._params_buffers()))
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
            "host_components": {c.name: {k: v for k, v in vars(c.host).items() if k != "_world"}
                                for c in self._core.components if c.runs_on_host},
            "extra_state_fields": self._extra_state_fields,
            "episode_started": self._episode_started,
        }

    def _rebuild(self, config) -> None:
        """Construct again from a pickled ``config`` (without reseeding the global RNGs)."""
        name, kwargs = config
        FoundationEnv.__init__(self, name, **dict(kwargs, seed=None))

    def __setstate__(self, d):
        self._rebuild(d["config"])
        for comp in self._core.components:
            if comp.runs_on_host:
                vars(comp.host).update(d["host_components"][comp.name])
        self._extra_state_fields = d["extra_state_fields"]
        self._episode_started = d["episode_started"]
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
        """The functional environment (``jaxecon.core.env.Economy``)."""
        return self._core

    def observation_space(self, agent: str):
        """The functional env's ``observation_space(agent)`` (``agent`` "a" or "p";
        an economy with agent classes or several planners: one of ``core.group_names``):
        one agent's observation as the core returns it (``obs[str(i)]`` here
        has its keys; Foundation's formatting turns scalars into floats and
        unflattened masks into lists), the planner's view of the agents as
        Foundation's ``p<i>`` entries (``formats.planner_observation_space``).

        Raises:
            ValueError: an unknown agent id. NotImplementedError: observations
                made by Foundation-style (host) code.
        """
        if isinstance(self._engine, HostEngine) and "generate_observations" in self._engine.hooks:
            raise NotImplementedError(
                "observation_space is not available: this scenario's generate_observations runs on the host"
            )
        space = self._core.observation_space(agent)
        planner = agent in [g.name for g in self._core.planner_groups]
        return formats.planner_observation_space(space, self._core.n_agents) if planner else space

    def action_space(self, agent: str):
        """The functional env's ``action_space(agent)``: ``Discrete`` or ``MultiDiscrete``."""
        return self._core.action_space(agent)

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

    # The state lives on the device as packed buffers (``_sbuf``); ``_host()``
    # is a writable numpy copy of it, fetched on first use after each call.
    # Writes into the host copy (``_host_written``) are sent back before the
    # next call that reads the state.
    @property
    def _state(self):
        return self._engine.state(self._device_buffers())

    @_state.setter
    def _state(self, value):
        self._set_buffers(self._engine.buffers(value))

    def _set_buffers(self, sbuf) -> None:
        d = self.__dict__  # (plain attributes: skips EnvAttributes.__setattr__, once per step)
        d["_sbuf"] = sbuf
        d["_host_bufs"] = d["_host_cache"] = None
        d["_host_dirty"] = False

    def _device_buffers(self) -> tuple:
        """The state's device buffers, with any host-side writes sent first."""
        if self._host_dirty:
            self._sbuf = tuple(jnp.asarray(b) for b in self._host_bufs)
            self._host_dirty = False
        return self._sbuf

    def _host(self):
        """The current state as numpy arrays (fetched once per state); writes
        into them change the economy once ``_host_written`` is called."""
        if self._host_cache is None:
            self._host_bufs = self._engine.host_buffers(self._sbuf)
            self._host_cache = self._engine.host_state(self._host_bufs)
        return self._host_cache

    def _host_written(self) -> None:
        """Mark the host copy (``_host()``) as changed: it is sent to the device
        before the next reset, step, metrics or ``state`` read."""
        self._host()
        self._host_dirty = True

    def _params_buffers(self) -> tuple:
        """``params`` packed on the device (re-packed when ``params`` is replaced)."""
        src, bufs = self._params_packed
        if src is not self._params:
            bufs = self._engine.pack_params(self._params)
            self._params_packed = (self._params, bufs)
        return bufs

    @property
    def _key(self):
        """The environment's PRNG key (a typed key; stored as key data)."""
        return jax.random.wrap_key_data(jnp.asarray(self._kd))

    @_key.setter
    def _key(self, key):
        self._kd = key_data(key)

    @property
    def _completions(self) -> int:
        """Episodes completed (incremented by every step that returns done)."""
        return self._count

    @_completions.setter
    def _completions(self, value):
        self._count = int(value)
        self.state = self._state.replace(completions=jnp.asarray(self._count, jnp.int32))

    def _agent_state(self, idx) -> dict:
        """Foundation's ``agent.state`` for agent ``idx`` (int or a planner's
        idx: the planners share one state) from the current state; writes into
        it change the economy (``live_state``)."""
        return live_agent_state(self, "p" if isinstance(idx, str) and idx.startswith("p") else idx)

    # ------------------------------------------------------------ properties
    @property
    def all_agents(self) -> list:
        """Mobile agents (by index) and then the planner (the planners, by idx
        ``"p"``, ``"p1"``, ...; none in an economy without a planner)."""
        return self._agents + self._planners

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
        """Mobile agents plus the planners (Foundation's: plus the planner)."""
        return self.n_agents + len(self._planners)

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
        """The component objects, in list order: views with Foundation's attributes
        (``component_views``), or a Foundation-style component's own object."""
        return self._components

    @property
    def metrics(self) -> dict:
        """Scenario metrics plus ``"<shorthand>/<key>"`` component metrics, as Python scalars."""
        m = self._engine.metrics(self._device_buffers(), self._params_buffers())
        m = metric_keys.expand({k: np.asarray(v) for k, v in m.items()}, self._core.n_agents)
        return {k: recursive_cast(v) for k, v in m.items()}

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
        if not float(seed).is_integer():
            raise ValueError(f"seed must be an int >= 0 (an integral float such as 2.0 is taken as 2), got {seed!r}")
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
        """The agent with index ``agent_idx`` (int, ``"0"``, ..., or a planner's
        ``"p"``, ``"p1"``, ...), an object of its registered agent class.

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

    def _plain_actions(self, actions: dict):
        """The engine's packed actions (int32 [n_actions]) of ``actions`` read by
        the agents' fast path (``BaseAgent._plain_action``; every buffer is
        NO-OP, absent agents take NO-OP), or None where a key is no agent's
        or an action has another format (then the agents parse the dict).

        Raises:
            ValueError: an index that is no integer or out of range (as ``parse_actions``).
        """
        out = [0] * self._engine.n_actions
        offsets, lookup = self._engine.action_offsets, self._agent_lookup
        for k, v in actions.items():
            key = k if type(k) is str else str(k)
            agent = lookup.get(key)
            if agent is None:
                return None
            a = agent._plain_action(v)
            if a is None:
                return None
            off = offsets[key]
            out[off:off + len(a)] = a
        return np.array(out, np.int32)

    def _functional_actions(self, buffers: dict) -> dict:
        """``{group: int32 array}``: each group's agents' buffered actions in its
        layout (Foundation's groups: ``{"a": [n] or [n, k], "p": [] or [k]}``)."""
        out = {}
        for name, agents, is_planner in self._group_agents:
            if is_planner:
                out[name] = np.asarray(agents[0]._functional_action(buffers[str(agents[0].idx)]), dtype=np.int32)
            else:
                out[name] = np.stack([ag._functional_action(buffers[str(ag.idx)]) for ag in agents]).astype(np.int32)
        return out

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
        kd = self._kd if seed_state is None else key_data(seed_state_to_key(seed_state))
        count = self._count if completions is None else as_index(completions, "completions")
        if force_dense_logging:
            self._dense_log_this_episode = True
        elif self._create_dense_log_every is None:
            self._dense_log_this_episode = False
        else:
            self._dense_log_this_episode = self._count % self._create_dense_log_every == 0
        self._logs.start_episode(kd, count)
        self._kd, sbuf, obs, info = self._engine.reset(
            kd, self._params_buffers(), count, self._device_buffers()
        )
        self._set_buffers(sbuf)
        self._record_global_state(info, first=True)
        for agent in self.all_agents:
            agent.reset_actions()
        self._episode_started = True
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
            RuntimeError: no ``reset()`` yet (as jaxecon's PettingZoo and
                Gymnasium fronts).
        """
        if not self._episode_started:
            raise RuntimeError("step() before reset(): call env.reset() first to start an episode")
        acts = None  # the packed actions, straight from a plain action dict when possible
        host = self._engine.runs_on_host
        if not host and type(actions) is dict and not any(
            [any(a.action.values()) for a in self._agent_lookup.values()]
        ):
            acts = self._plain_actions(actions)
        if acts is None:
            if actions is None:
                buffers = {k: dict(a.action) for k, a in self._agent_lookup.items()}
            else:
                parsed = self._parsed_buffers(actions)
                buffers = {k: parsed.get(k, dict(a.action)) for k, a in self._agent_lookup.items()}
            acts = self._engine.pack_actions(*self._functional_actions(buffers).values())
            pending = True
            if host:  # host hooks read the agents' buffers (agent.get_component_action)
                for k, agent in self._agent_lookup.items():
                    agent.action = buffers[k]
        else:
            pending = False
        kd = self._kd if seed_state is None else key_data(seed_state_to_key(seed_state))

        self._logs.record_step(actions, kd)
        dense = self._dense_log_this_episode
        if dense:
            prev = self._host()
            self._logs.record_timestep(
                self._core, prev, dense_log_actions(self._core, self._engine.unpack_actions(acts)),
                self._world_dense_log_frequency,
                self._written_state_entries(),
            )

        collate = self.collate_agent_step_and_reset_data
        self._kd, sbuf, obs, rew_a, rew_p, done, step_info = self._engine.step(
            kd, self._device_buffers(), acts, self._params_buffers()
        )
        self._set_buffers(sbuf)
        rew_d = dict(zip(self._mobile_keys, rew_a.tolist()))  # Python floats
        for k in self._planner_keys:
            rew_d[k] = float(rew_p)
        obs = self._format_obs(obs)
        done_d = {"__all__": done}
        self._record_global_state(step_info)
        info = {k: {} for k in self._agent_lookup}
        if collate:
            rew_d = formats.collated_rewards(np.asarray(rew_a), rew_p)
            info = formats.collated_info()
        if dense:
            self._logs.record_outcome(self._core, prev, self._host(), rew_d)
        if pending:
            for agent in self.all_agents:
                agent.reset_actions()
        if done_d["__all__"]:
            self._finalize_logs()
            self._count += 1
            if dense and collate:
                # Foundation returns the dense log's own rewards dict, which its
                # _finalize_logs has just cast: "a" is a list on this step.
                rew_d["a"] = rew_d["a"].tolist()
        return obs, rew_d, done_d, info

    def _format_obs(self, obs) -> dict:
        if self._grouped:
            return formats.format_group_obs(obs, self._observation_layout, self._core, self._planner_keys)
        return formats.format_obs(
            obs, self._observation_layout, self.n_agents,
            self.collate_agent_step_and_reset_data, bool(self._core.flatten_observations),
            fixed=not self._engine.runs_on_host,
        )

    def _finalize_logs(self):
        """Stash the replay log and metrics; finish the dense log (if logging).

        The metrics are those of the final state with the episode not yet
        counted, as Foundation's ``_finalize_logs`` runs before
        ``_completions += 1`` (``base_env.step``); the jitted step has counted
        it in ``state.completions`` already, so that count is set back for
        the metrics and restored after (e.g. the ``"decay"`` energy warm-up's
        ``labor/weighted_cost`` depends on it).
        """
        host = self._host()
        counted = int(host.completions)
        host.completions[()] = self._count
        self._host_written()
        metrics = self.metrics
        self._host().completions[()] = counted
        self._host_written()
        self._logs.finish_episode(metrics)
        if self._dense_log_this_episode:
            self._logs.finish_dense_log(self._core, self._host(), self._written_state_entries())

    def _written_state_entries(self) -> dict:
        """``{agent key: {key: value}}``: the keys user code added to an
        ``agent.state`` by writing them (kept on the host, see ``live_state``)."""
        return {k: v for k, v in self._extra_state_fields.items() if v}
