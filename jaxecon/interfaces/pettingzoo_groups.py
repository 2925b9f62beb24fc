"""An economy with declared agent groups as a PettingZoo ``ParallelEnv``.

``jaxecon.interfaces.pettingzoo.parallel_env(**config)`` returns a
``GroupsParallelEnv`` when ``config`` declares agent groups
(``mobile_agent_groups``, or ``n_planners`` other than 1): the Foundation shim
behind ``FoundationParallelEnv`` runs only Foundation's agents (one kind of
mobile agent and a planner), so this env runs the functional env
(``jaxecon.make_from_config``) instead, one economy, one jitted call per
``reset`` and per ``step``::

    from jaxecon.configs import economy_config
    from jaxecon.interfaces.pettingzoo import parallel_env

    env = parallel_env(**economy_config("builders_and_traders"))
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

What a user sees is ``FoundationParallelEnv``'s: agents ``"0".."n-1"`` (and
``"p"`` when the economy has a planner), each with the spaces of its group,
observations in the same format (a ``Dict`` of the group's fields with
``action_mask`` in PettingZoo's form; ``jaxecon.interfaces.gym_spaces``),
numpy outputs, episodes that end by truncation at ``episode_length``. Agent
ids, the group of each agent and the joint actions come from the JaxMARL
front (``jaxecon.wrappers.MultiAgentEnv``), whose ``step_env`` each step runs.
"""

from __future__ import annotations

import collections
import numbers

import jax
import jax.numpy as jnp
import numpy as np

try:
    import pettingzoo
except ImportError as exc:  # pragma: no cover - exercised only without pettingzoo
    raise ImportError(
        'jaxecon.interfaces.pettingzoo_groups needs PettingZoo: pip install "jaxecon[pettingzoo]"'
    ) from exc

from jaxecon.interfaces.gym_spaces import (
    RENDER_MODES, AgentSpaces, check_config, check_parallel_actions, check_render_mode, parallel_outputs, render_output,
)
from jaxecon.factory import make_from_config
from jaxecon.wrappers.jaxmarl import MultiAgentEnv

__all__ = ["GroupsParallelEnv", "declares_groups"]


def declares_groups(config: dict) -> bool:
    """Whether a Foundation-style ``config`` declares agent groups the shim cannot
    run: a ``mobile_agent_groups`` or ``planner_groups`` list, or ``n_planners`` other than 1 (or None)."""
    return (config.get("mobile_agent_groups") is not None or config.get("planner_groups") is not None
            or config.get("n_planners", 1) not in (None, 1))


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be None or an int >= 0, got {seed!r}")
    return int(seed)


#: ``_economy``'s cache: config repr -> its tuple, the last ``_CACHE_SIZE`` configs.
_CACHE: collections.OrderedDict = collections.OrderedDict()
_CACHE_SIZE = 4


def _economy(config: dict) -> tuple:
    """``(functional env, MultiAgentEnv, jitted reset, jitted step)`` of ``config``.

    Cached by the config's sorted items' ``repr``, so that envs built from one
    config (PettingZoo's seed test, a vector of envs) share one compilation;
    all four are stateless, so sharing them is safe.

    A second numpy driver beside ``jaxecon.interfaces.host.HostEconomy``, on
    purpose: ``HostEconomy`` steps an economy with the actions and outputs
    keyed by group (TF-Agents, RLHive; vmapped batches), and the
    shim's engines pack the state into flat buffers and run host hooks
    between jitted phases; this one steps declared groups through the JaxMARL
    front (``MultiAgentEnv.joint_actions`` in, ``by_agent`` out), keyed by
    agent. Both call the same jitted ``Economy.reset``/``step``.
    """
    cache_key = repr(sorted(config.items()))
    if cache_key in _CACHE:
        _CACHE.move_to_end(cache_key)
        return _CACHE[cache_key]
    base = make_from_config(dict(config))
    marl = MultiAgentEnv(base, planner_policy=None)  # the planner is agent "p"
    params = marl.params

    def reset(key, completions, prev_state):
        key, k = jax.random.split(key)
        obs, state = base.reset(k, params, completions=completions, prev_state=prev_state)
        return key, marl.by_agent(obs), state

    def step(key, state, actions):  # MultiAgentEnv.step_env's keys, the Dict observations
        key, k = jax.random.split(key)
        k_planner, k_env = jax.random.split(k)
        obs, state, reward, done, _ = base.step(k_env, state, marl.joint_actions(k_planner, state, actions), params)
        return key, marl.by_agent(obs), state, marl.by_agent(reward), jnp.asarray(done, bool)

    _CACHE[cache_key] = (base, marl, jax.jit(reset), jax.jit(step))
    while len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return _CACHE[cache_key]


class GroupsParallelEnv(pettingzoo.ParallelEnv):
    """A jaxecon economy (the functional env) as a PettingZoo ``ParallelEnv``.

    Args:
        config: Foundation-style env config with ``scenario_name`` (the dict
            ``jaxecon.make_from_config`` takes, e.g.
            ``jaxecon.configs.economy_config("builders_and_traders")``), with
            ``flatten_masks`` True and ``collate_agent_step_and_reset_data``
            False (their defaults). Its ``seed``, if given, seeds the first
            ``reset(seed=None)``.
        render_mode: None or ``"rgb_array"``.

    Attributes:
        possible_agents: ``["0", ..., "n-1"]`` plus ``"p"`` when the economy
            has a planner (``n_planners=1``).
        agents: the agents of the running episode: all of them after
            ``reset``, none once every agent has been truncated at
            ``episode_length`` (nothing is ever terminated).
        functional_env: the ``jaxecon.core.env.Economy`` it runs.
        multi_agent_env: the ``jaxecon.wrappers.MultiAgentEnv`` over it (agent
            ids, groups, ``params``). Both, and the compiled reset and step,
            are shared by the envs built from one config (they are stateless).
        group_of: ``{agent: group name}``, e.g. ``{"0": "builders", ...,
            "p": "p"}``.
        env_state: the current ``EnvState`` (device arrays).
        metadata: ``render_modes``, ``name``, ``is_parallelizable``.

    Per agent ``k`` of group ``g`` (shapes and dtypes from
    ``functional_env.observation_space(g)``, converted by
    ``jaxecon.interfaces.gym_spaces.to_gymnasium``):

    - observation: ``dict`` of numpy arrays, the group's fields (e.g.
      ``world-map`` float32 [C, h, w], ``world-idx_map`` int16 [2, h, w],
      ``time`` float32 [1], ``flat`` float32 [d_g]; the planner's ``p0``...)
      and ``action_mask``: int8 [n] for ``Discrete(n)``, a tuple of int8
      [nvec[i]] for ``MultiDiscrete(nvec)`` (the planner's tax heads);
    - action: an int in ``Discrete(n)`` or an int array [len(nvec)] in
      ``MultiDiscrete(nvec)``;
    - reward: a Python float.

    Raises:
        TypeError: ``config`` is not a dict.
        ValueError: bad config (``jaxecon.make``'s errors: unknown scenario,
            component or group keys, bad values), a collating or
            unflattened-mask config, an unknown ``render_mode``.
        NotImplementedError: an economy whose observations are made by
            Foundation-style host code (no declared observation space).
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "jaxecon_groups_v0", "is_parallelizable": True}

    def __init__(self, config: dict, render_mode=None):
        self.render_mode = check_render_mode(render_mode)
        check_config(config)
        base, marl, self._reset, self._step = _economy(config)
        self.functional_env, self.multi_agent_env = base, marl
        self.group_of = marl.group_of
        self._spaces = AgentSpaces(base, self.group_of)
        self.possible_agents = list(self._spaces.possible_agents)
        self._noop = {a: np.zeros(self._spaces.action_space(a).shape, np.int32) for a in self.possible_agents}
        self._key = jax.random.key(0 if base.seed is None else base.seed)
        # the state a reset carries over from (Foundation keeps some of it across
        # episodes); before the first episode a fresh one, which carries nothing
        self._state = base.init_state(jax.random.key(0), marl.params)
        self._completions = 0
        self.agents = []
        self._started = False

    @property
    def env_state(self):
        """The current ``EnvState`` (what ``render`` draws). Not PettingZoo's
        ``state()`` (a global observation for centralised training), which,
        as in ``FoundationParallelEnv``, is not implemented."""
        return self._state

    def observation_space(self, agent):
        """``gymnasium.spaces.Dict`` of ``agent``'s observation (its group's; the same object on every call).

        Raises:
            ValueError: ``agent`` is not one of ``possible_agents``.
        """
        return self._spaces.observation_space(agent)

    def action_space(self, agent):
        """``Discrete(n)`` (single-action mode) or ``MultiDiscrete(nvec)`` of ``agent``'s group.

        Raises:
            ValueError: ``agent`` is not one of ``possible_agents``.
        """
        return self._spaces.action_space(agent)

    def reset(self, seed=None, options=None):
        """Start an episode.

        Args:
            seed: None (continue the env's PRNG key stream) or an int >= 0:
                the key becomes ``jax.random.key(seed)``, so two envs of one
                config reset with the same seed and given the same actions run
                identically. What Foundation carries over between episodes
                (the completed-episode count, reset carry-over) is kept.
            options: accepted for PettingZoo's API and unused.
        Returns:
            ``(observations, infos)``: ``{agent: obs}`` in each agent's
            observation space, ``{agent: {}}``.
        Raises:
            ValueError: a negative or non-integer ``seed``.
        """
        if seed is not None:
            self._key = jax.random.key(_check_seed(seed))
        self._key, obs, self._state = self._reset(self._key, jnp.int32(self._completions), self._state)
        self.agents = list(self.possible_agents)
        self._started = True
        return self._spaces.observations(jax.device_get(obs)), {a: {} for a in self.agents}

    def _check_action(self, agent, value) -> np.ndarray:
        """``value`` as an int32 array of ``agent``'s action space, or ValueError naming the agent."""
        space = self._spaces.action_space(agent)
        arr = np.asarray(value)
        if not np.issubdtype(arr.dtype, np.integer) or not space.contains(arr):
            raise ValueError(f"the action of agent {agent!r} must be in its action space {space} "
                             f"(an int{'' if not space.shape else ' array of shape ' + str(space.shape)}), "
                             f"got {value!r}")
        return arr.astype(np.int32)

    def step(self, actions):
        """Advance the economy one timestep.

        Args:
            actions: ``{agent: action}`` for some or all of ``agents`` (an
                absent agent takes NO-OP, 0 in every head).
        Returns:
            ``(observations, rewards, terminations, truncations, infos)``,
            each ``{agent: ...}``: rewards Python floats, terminations all
            False, truncations all True on the step that reaches
            ``episode_length``, after which ``agents`` is empty.
        Raises:
            RuntimeError: before ``reset`` or after the episode has ended.
            ValueError: ``actions`` not a dict, an unknown agent id (names the
                agents) or an action outside its agent's space (names the
                agent and the space); nothing changes when it raises.
        """
        check_parallel_actions(actions, self.agents, self._started)
        joint = {a: self._check_action(a, actions[a]) if a in actions else self._noop[a] for a in self.agents}
        self._key, obs, self._state, rew, done = self._step(self._key, self._state, joint)
        obs, rew, done = jax.device_get((obs, rew, done))
        truncated = bool(done)
        out = parallel_outputs(self._spaces.observations(obs), rew, self.agents, truncated)
        if truncated:
            self.agents = []
            self._completions += 1
        return out

    def render(self):
        """The world as uint8 ``[H * 16, W * 16, 3]`` (``render_mode="rgb_array"``),
        or None with gymnasium's warning when no ``render_mode`` was given."""
        return render_output(lambda: self._state, self.render_mode)

    def close(self):
        """Nothing to release (no files or windows)."""
