"""A Foundation economy as a PettingZoo ``ParallelEnv``.

::

    from jaxecon.configs import default_config
    from jaxecon.interfaces.pettingzoo import parallel_env

    env = parallel_env(**default_config())
    obs, infos = env.reset(seed=0)
    while env.agents:
        actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rewards, terminations, truncations, infos = env.step(actions)

Every agent of the economy (mobile agents ``"0".."n-1"`` and the planner
``"p"``, Foundation's ids) acts at every step, as in Foundation. The env runs
on the Foundation shim (``jaxecon.foundation``: its ``reset`` and ``step``
are jitted, one call per step), so it steps one economy at a time; for
batches of economies inside ``jit`` use the functional API (``jaxecon.make``)
or its JaxMARL front.

A config that declares agent groups (``mobile_agent_groups``, ``n_planners=0``),
which Foundation's object API and so the shim cannot express, gets a
``GroupsParallelEnv`` instead (``jaxecon.interfaces.pettingzoo_groups``): the
same API and observation format over the functional env, agents
``"0".."n-1"`` (plus ``"p"`` with a planner) with their groups' spaces.

Follows PettingZoo's ``ParallelEnv`` API (``pettingzoo.utils.env``, 1.24 and
later) and passes its ``parallel_api_test`` and ``parallel_seed_test``.
Spaces, observations and the ``action_mask`` format: see
``jaxecon.interfaces.gym_spaces``. Needs the ``pettingzoo`` extra.
"""

from __future__ import annotations

try:
    import pettingzoo
except ImportError as exc:  # pragma: no cover - exercised only without pettingzoo
    raise ImportError(
        'jaxecon.interfaces.pettingzoo needs PettingZoo: pip install "jaxecon[pettingzoo]"'
    ) from exc

from jaxecon.foundation import make_env_instance
from jaxecon.interfaces.gym_spaces import (
    RENDER_MODES, AgentSpaces, check_config, check_parallel_actions, check_render_mode, parallel_outputs, render_output,
)
from jaxecon.interfaces.pettingzoo_groups import GroupsParallelEnv, declares_groups

__all__ = ["FoundationParallelEnv", "GroupsParallelEnv", "parallel_env"]

class FoundationParallelEnv(pettingzoo.ParallelEnv):
    """A Foundation economy (the shim) as a PettingZoo ``ParallelEnv``.

    Args:
        foundation_config: Foundation's environment config, the keyword
            arguments of ``jaxecon.foundation.make_env_instance`` (with
            ``scenario_name``; e.g. ``jaxecon.configs.default_config()``).
            Must keep ``collate_agent_step_and_reset_data`` False and
            ``flatten_masks`` True (their defaults).
        render_mode: None or ``"rgb_array"``.

    Attributes:
        possible_agents: ``["0", ..., "n-1", "p"]``.
        agents: the agents of the running episode: all of them after
            ``reset``, none once the episode has ended (every agent is
            truncated at once when the timestep reaches ``episode_length``;
            Foundation's episodes end only by that time limit, so nothing is
            ever terminated).
        foundation_env: the underlying ``jaxecon.foundation.FoundationEnv``
            (metrics, dense logs, ``previous_episode_metrics``...).
        metadata: ``render_modes``, ``name``, ``is_parallelizable``.

    Raises:
        ValueError: bad config (the shim's errors: unknown scenario or
            component, bad values), a collating or unflattened-mask config, or
            an unknown ``render_mode``.
    """

    metadata = {"render_modes": list(RENDER_MODES), "name": "jaxecon_foundation_v0", "is_parallelizable": True}

    def __init__(self, foundation_config: dict, render_mode=None):
        self.render_mode = check_render_mode(render_mode)
        self.foundation_env = make_env_instance(**check_config(foundation_config))
        self._spaces = AgentSpaces(self.foundation_env)
        self.possible_agents = list(self._spaces.possible_agents)
        self.agents = []
        self._started = False

    def observation_space(self, agent):
        """``gymnasium.spaces.Dict`` of ``agent``'s observation (the same object on every call).

        Raises:
            ValueError: ``agent`` is not one of ``possible_agents``.
        """
        return self._spaces.observation_space(agent)

    def action_space(self, agent):
        """``Discrete(n)`` (single-action mode) or ``MultiDiscrete(nvec)`` (multi-action
        mode, one head per action subspace, NO-OP = 0 in each) of ``agent``.

        Raises:
            ValueError: ``agent`` is not one of ``possible_agents``.
        """
        return self._spaces.action_space(agent)

    def reset(self, seed=None, options=None):
        """Start an episode.

        Args:
            seed: None (continue the environment's PRNG key stream) or an int
                >= 0: ``foundation_env.seed(seed)``, which sets the key to
                ``jax.random.key(seed)`` and, as Foundation does, seeds
                Python's ``random`` and ``np.random`` (which numpy components
                draw from). Two environments of one config reset with the
                same seed and given the same actions run identically. What
                Foundation carries over between episodes (the completed-episode
                count behind energy warm-up and tax annealing) is kept.
            options: accepted for PettingZoo's API and unused.
        Returns:
            ``(observations, infos)``: ``{agent: obs}`` in each agent's
            observation space, ``{agent: {}}``.
        Raises:
            ValueError: a negative or non-integer ``seed``.
        """
        if seed is not None:
            self.foundation_env.seed(seed)
        obs = self.foundation_env.reset()
        self.agents = list(self.possible_agents)
        self._started = True
        return self._spaces.observations(obs), {a: {} for a in self.agents}

    def step(self, actions):
        """Advance the economy one timestep.

        Args:
            actions: ``{agent: action}`` for some or all of ``agents``
                (an absent agent takes NO-OP, as in Foundation): an int in
                ``Discrete(n)``, or an int array of shape ``nvec.shape`` in
                ``MultiDiscrete(nvec)``.
        Returns:
            ``(observations, rewards, terminations, truncations, infos)``,
            each ``{agent: ...}``: rewards are floats (Foundation's), the
            terminations all False, the truncations all True on the step
            that reaches ``episode_length``, after which ``agents`` is empty.
        Raises:
            RuntimeError: before ``reset`` or after the episode has ended.
            ValueError: an unknown agent id (names the agents) or an action
                outside its agent's space (the shim's message names the agent
                and the allowed values); nothing changes when it raises.
        """
        check_parallel_actions(actions, self.agents, self._started)
        obs, rew, done, _ = self.foundation_env.step(dict(actions))
        truncated = bool(done["__all__"])
        out = parallel_outputs(self._spaces.observations(obs), rew, self.agents, truncated)
        if truncated:
            self.agents = []
        return out

    def render(self):
        """The world as uint8 ``[H * 16, W * 16, 3]`` (``render_mode="rgb_array"``),
        or None with gymnasium's warning when no ``render_mode`` was given."""
        return render_output(lambda: self.foundation_env.state, self.render_mode)

    def close(self):
        """Nothing to release (the shim holds no files or windows)."""


def parallel_env(render_mode=None, **foundation_config) -> FoundationParallelEnv | GroupsParallelEnv:
    """PettingZoo's constructor convention: ``FoundationParallelEnv(foundation_config,
    render_mode)``, or ``GroupsParallelEnv(...)`` when the config declares agent
    groups (``mobile_agent_groups``, or ``n_planners`` other than 1).

    Example: ``parallel_env(**jaxecon.configs.default_config(), render_mode="rgb_array")``;
    ``parallel_env(**jaxecon.configs.economy_config("builders_and_traders"))``.

    Raises:
        as the class it builds.
    """
    if declares_groups(foundation_config):
        return GroupsParallelEnv(foundation_config, render_mode=render_mode)
    return FoundationParallelEnv(foundation_config, render_mode=render_mode)
