"""An economy seen through gymnasium's types, for the PettingZoo and Gymnasium interfaces.

``jaxecon.interfaces.pettingzoo`` and ``jaxecon.interfaces.gymnasium`` both
wrap a Foundation shim environment (``jaxecon.foundation.FoundationEnv``), and
``jaxecon.interfaces.pettingzoo_groups`` a functional env with declared agent
groups; they share what this module builds from it:

- ``to_gymnasium(space)``: a ``jaxecon.spaces`` space as the gymnasium space
  of the same name (``Box`` with its bounds, ``Discrete``, ``MultiDiscrete``,
  ``Dict`` in the same key order);
- ``AgentSpaces``: each agent's gymnasium observation space (a ``Dict``) and
  action space (``Discrete`` in single-action mode, ``MultiDiscrete`` in
  multi-action mode), built once from the env's ``observation_space`` and
  ``action_space`` (``"a"`` for every mobile agent, ``"p"`` for the planner;
  with declared groups, each agent's group);
- ``AgentSpaces.observation(agent_id, obs)``: one agent's observation
  converted into its space (numpy arrays of the space's dtypes and shapes:
  Foundation's one-element ``time`` list and its Python-float scalars become
  arrays; keys in the space's order);
- ``check_config``, ``check_render_mode``: the arguments both interfaces check;
- ``render_output(get_state, render_mode)``: what the interfaces' ``render()``
  returns (the world as an RGB image, ``jaxecon.interfaces.host.render_state``).

Observation fields keep Foundation's names (``world-map``, ``world-idx_map``,
``time``, ``flat``, ``p0``..., ``action_mask``), with the bounds jaxecon
declares for them (``jaxecon.core.env.Economy.observation_space``):
finite where the quantity is bounded, +-inf where it is not. The one field
whose format changes is ``action_mask``: Foundation's float32 mask becomes
PettingZoo's and gymnasium's form, the ``mask`` argument of the agent's
``action_space.sample``: int8 ``[n]`` for a ``Discrete(n)`` agent, a tuple
of int8 ``[nvec[i]]`` arrays (one per action head, NO-OP first) for a
``MultiDiscrete(nvec)`` agent.

An economy whose observations come from Foundation-style numpy code
(``jaxecon.foundation.base``) has no declared observation space; its spaces
are read from one ``env.reset()`` observation instead, with bounds +-inf
(integers: the dtype's range).

Needs gymnasium (the ``gymnasium`` extra; PettingZoo depends on it).
"""

from __future__ import annotations

try:
    from gymnasium import logger, spaces
except ImportError as exc:  # pragma: no cover - exercised only without gymnasium
    raise ImportError(
        "jaxecon's PettingZoo and Gymnasium interfaces need gymnasium: "
        'pip install "jaxecon[gymnasium]" (or "jaxecon[pettingzoo]")'
    ) from exc

import numpy as np

from jaxecon import spaces as jaxecon_spaces
from jaxecon.interfaces.host import render_state

__all__ = ["RENDER_MODES", "AgentSpaces", "check_config", "check_parallel_actions", "check_render_mode",
           "parallel_outputs", "render_output", "to_gymnasium"]

MASK_KEY = "action_mask"

#: The render modes of both interfaces.
RENDER_MODES = ("rgb_array",)


def to_gymnasium(space) -> spaces.Space:
    """A ``jaxecon.spaces`` space as the gymnasium space of the same name.

    ``Box`` keeps ``low``, ``high``, ``shape`` and ``dtype``; ``Discrete(n)``
    and ``MultiDiscrete(nvec)`` keep ``n`` / ``nvec``; ``Dict`` keeps its key
    order (gymnasium would sort a plain dict's keys).

    Raises:
        TypeError: not a ``jaxecon.spaces`` space.
    """
    if isinstance(space, jaxecon_spaces.Box):
        return spaces.Box(low=space.low, high=space.high, shape=space.shape, dtype=space.dtype)
    if isinstance(space, jaxecon_spaces.Discrete):
        return spaces.Discrete(int(space.n))
    if isinstance(space, jaxecon_spaces.MultiDiscrete):
        return spaces.MultiDiscrete(np.asarray(space.nvec, dtype=np.int64))
    if isinstance(space, jaxecon_spaces.Dict):
        return spaces.Dict([(k, to_gymnasium(s)) for k, s in space.spaces.items()])
    raise TypeError(
        f"space must be a jaxecon.spaces Box, Discrete, MultiDiscrete or Dict, got {type(space).__name__}"
    )


def _box_like(value) -> spaces.Box:
    """A Box of ``value``'s shape and dtype with the widest bounds of that dtype."""
    arr = np.asarray(value)
    if np.issubdtype(arr.dtype, np.integer):
        info = np.iinfo(arr.dtype)
        return spaces.Box(low=info.min, high=info.max, shape=arr.shape, dtype=arr.dtype)
    dtype = arr.dtype if np.issubdtype(arr.dtype, np.floating) else np.dtype(np.float32)
    return spaces.Box(low=-np.inf, high=np.inf, shape=arr.shape, dtype=dtype)


def _mask_space(action_space) -> spaces.Space:
    """The space of an action mask in ``action_space.sample(mask=...)``'s format."""
    if isinstance(action_space, spaces.Discrete):
        return spaces.Box(low=0, high=1, shape=(int(action_space.n),), dtype=np.int8)
    return spaces.Tuple([spaces.Box(low=0, high=1, shape=(int(n),), dtype=np.int8) for n in action_space.nvec])


def _kind(agent_id: str) -> str:
    """The functional env's agent kind of a Foundation agent id: ``"p"`` or ``"a"``."""
    return "p" if agent_id == "p" else "a"


def _convert(value, space):
    """``value`` (a shim observation field) as an element of ``space``."""
    if isinstance(space, spaces.Dict):
        return {k: _convert(value[k], s) for k, s in space.spaces.items()}
    return np.asarray(value, dtype=space.dtype).reshape(space.shape)


def check_config(foundation_config) -> dict:
    """``foundation_config`` if the interfaces can give each agent its own spaces.

    Checked before the economy is built (and compiled).

    Raises:
        TypeError: not a dict of Foundation env kwargs.
        ValueError: ``collate_agent_step_and_reset_data`` true or
            ``flatten_masks`` false: per-agent spaces need Foundation's
            per-agent dicts with one flat ``action_mask`` each.
    """
    if not isinstance(foundation_config, dict):
        raise TypeError(
            f"foundation_config must be a dict of Foundation env kwargs, got {type(foundation_config).__name__}"
        )
    if foundation_config.get("collate_agent_step_and_reset_data", False):
        raise ValueError(
            "collate_agent_step_and_reset_data must be False (the default) for the PettingZoo and "
            "Gymnasium interfaces, which give each agent its own observation; got "
            f"{foundation_config['collate_agent_step_and_reset_data']!r}"
        )
    if not foundation_config.get("flatten_masks", True):
        raise ValueError(
            "flatten_masks must be True (the default) for the PettingZoo and Gymnasium interfaces: "
            f"their action_mask is one mask over the agent's action space; got {foundation_config['flatten_masks']!r}"
        )
    return foundation_config


def check_render_mode(render_mode):
    """``render_mode`` if it is None or one of ``RENDER_MODES``.

    Raises:
        ValueError: any other value (names the allowed ones).
    """
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode must be None or one of {list(RENDER_MODES)}, got {render_mode!r}")
    return render_mode


class AgentSpaces:
    """The gymnasium spaces of an economy's agents, and its observations in them.

    ``possible_agents`` are ``"0".."n-1"`` and ``"p"`` (when the economy has
    a planner), Foundation's agent ids. Each agent has its own space objects
    (so that seeding one agent's space leaves the others' alone), the same
    objects on every call (PettingZoo's API test checks this).

    Args:
        env: a ``jaxecon.foundation.FoundationEnv`` (the shim) built from a
            config that passes ``check_config``, or (with ``group_of``) a
            jaxecon functional env. Its declared spaces are used; a shim
            economy with numpy observation code is reset once to read its
            observation layout (see the module docstring).
        group_of: None (the shim: agents ``"0".."n-1"`` take group ``"a"``'s
            spaces, ``"p"`` the planner's), or ``{agent id: group name}`` in
            agent order, the name each agent's spaces are read under
            (``env.observation_space(group)``, ``env.action_space(group)``).
    Raises:
        NotImplementedError: with ``group_of``, an env whose observations are
            known only at run time (``env.observation_space`` raises it).
    """

    def __init__(self, env, group_of: dict | None = None):
        shim = group_of is None
        if shim:
            group_of = {str(a.idx): _kind(str(a.idx)) for a in env.all_agents}
        self.possible_agents = list(group_of)
        self._action = {k: to_gymnasium(env.action_space(g)) for k, g in group_of.items()}
        try:
            declared = {g: env.observation_space(g) for g in dict.fromkeys(group_of.values())}
        except NotImplementedError:  # observations made by numpy code: read them from one reset
            if not shim:
                raise
            first = env.reset()
            self._observation = {k: self._inferred_space(first[k], self._action[k]) for k in self.possible_agents}
        else:
            self._observation = {
                k: self._declared_space(declared[g], self._action[k]) for k, g in group_of.items()
            }

    @staticmethod
    def _declared_space(space, action_space) -> spaces.Dict:
        """One agent's observation space from the env's ``jaxecon.spaces.Dict``."""
        return spaces.Dict([
            (key, _mask_space(action_space) if key == MASK_KEY else to_gymnasium(sub))
            for key, sub in space.spaces.items()
        ])

    @staticmethod
    def _inferred_space(obs: dict, action_space) -> spaces.Dict:
        """One agent's observation space from one of its observations (bounds +-inf)."""
        return spaces.Dict([
            (key, _mask_space(action_space) if key == MASK_KEY else _box_like(value))
            for key, value in obs.items()
        ])

    def check_agent(self, agent_id) -> str:
        """``agent_id`` as a possible agent's id.

        Raises:
            ValueError: not one of ``possible_agents`` (names them).
        """
        if isinstance(agent_id, str) and agent_id in self._action:
            return agent_id
        raise ValueError(f"unknown agent {agent_id!r}; the agents are {self.possible_agents}")

    def observation_space(self, agent_id) -> spaces.Dict:
        """The observation space of ``agent_id`` (``"0"``..., ``"p"``); ValueError for others."""
        return self._observation[self.check_agent(agent_id)]

    def action_space(self, agent_id) -> spaces.Space:
        """The action space of ``agent_id``: ``Discrete(n)`` or ``MultiDiscrete(nvec)``; ValueError for others."""
        return self._action[self.check_agent(agent_id)]

    def observation(self, agent_id: str, obs: dict) -> dict:
        """``obs`` (agent ``agent_id``'s observation dict: the shim's, or one
        agent's entry of the functional env's; numpy or jax leaves) converted
        into its space."""
        space = self._observation[agent_id]
        out = {}
        for key, sub in space.spaces.items():
            if key == MASK_KEY:
                mask = np.asarray(obs[key]).astype(np.int8).reshape(-1)
                if isinstance(sub, spaces.Tuple):
                    cuts = np.cumsum([s.shape[0] for s in sub.spaces])[:-1]
                    out[key] = tuple(np.split(mask, cuts))
                else:
                    out[key] = mask
            else:
                out[key] = _convert(obs[key], sub)
        return out

    def observations(self, obs: dict) -> dict:
        """``{agent_id: observation}`` for every agent of an observation dict keyed by agent id."""
        return {k: self.observation(k, obs[k]) for k in self.possible_agents}


def render_output(get_state, render_mode) -> np.ndarray | None:
    """What the PettingZoo and Gymnasium interfaces' ``render()`` returns.

    Args:
        get_state: a callable without arguments returning the ``EnvState`` to
            draw (the shim's ``state``, or ``GroupsParallelEnv``'s), called
            only when there is something to draw.
        render_mode: the interface's, checked by ``check_render_mode``.
    Returns:
        ``render_mode="rgb_array"``: the world now, uint8 ``[H * 16, W * 16, 3]``
        (``jaxecon.interfaces.host.render_state`` of the state); None, with
        gymnasium's warning, when no ``render_mode`` was given.
    """
    if render_mode is None:
        logger.warn("render() was called without a render_mode; pass render_mode='rgb_array'")
        return None
    return render_state(get_state())


def check_parallel_actions(actions, agents: list, started: bool) -> None:
    """The checks of a PettingZoo ``ParallelEnv.step`` call, before anything runs.

    Args:
        actions: what ``step`` was given.
        agents: the agents of the running episode (empty: none is running).
        started: whether ``reset`` was ever called.
    Raises:
        RuntimeError: no running episode (before ``reset``, or after the end).
        ValueError: ``actions`` is not a dict, or names an agent not in ``agents``.
    """
    if not agents:
        raise RuntimeError("step() needs a running episode: call reset() first"
                           + (" (the last episode has ended)" if started else ""))
    if not isinstance(actions, dict):
        raise ValueError(f"actions must be a dict {{agent: action}}, got {type(actions).__name__}")
    for agent in actions:
        if agent not in agents:
            raise ValueError(f"actions has an unknown agent {agent!r}; the agents are {agents}")


def parallel_outputs(observations: dict, rewards, agents: list, truncated: bool) -> tuple:
    """A PettingZoo ``ParallelEnv.step`` result: ``(observations, {agent: float
    reward}, terminations (all False: Foundation's episodes end only by the time
    limit), truncations (all ``truncated``), {agent: {}})``."""
    return (
        observations,
        {a: float(rewards[a]) for a in agents},
        dict.fromkeys(agents, False),
        dict.fromkeys(agents, truncated),
        {a: {} for a in agents},
    )
