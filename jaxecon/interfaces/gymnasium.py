"""One agent of a Foundation economy learning against fixed policies, as a Gymnasium ``Env``.

::

    import gymnasium
    from jaxecon.configs import default_config
    from jaxecon.interfaces.gymnasium import FoundationGymEnv

    env = FoundationGymEnv(default_config(), learner="0", policies="random")
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=obs["action_mask"]))

    # or through gymnasium's registry (importing this module registers the id):
    env = gymnasium.make("jaxecon.interfaces.gymnasium:jaxecon/GatherTradeBuild-v0", policies="random")

The learner is one of the economy's agents (a mobile agent ``"0".."n-1"``,
or the planner ``"p"``); every other agent acts by a fixed policy at every
step. Observations are the learner's own Foundation observation dict
(``gymnasium.spaces.Dict``, not flattened: apply
``gymnasium.wrappers.FlattenObservation`` for one vector; see
``jaxecon.interfaces.gym_spaces`` for its fields, bounds and the
``action_mask`` format); actions are the learner's ``Discrete(n)`` or
``MultiDiscrete(nvec)``; the reward is the learner's Foundation reward.
Follows Gymnasium's ``Env`` API (1.0 and later) and passes
``gymnasium.utils.env_checker.check_env``. Runs on the Foundation shim
(``jaxecon.foundation``), one economy at a time. Needs the ``gymnasium``
extra.
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:  # pragma: no cover - exercised only without gymnasium
    raise ImportError(
        'jaxecon.interfaces.gymnasium needs Gymnasium: pip install "jaxecon[gymnasium]"'
    ) from exc

import numpy as np

from jaxecon.configs import default_config
from jaxecon.foundation import make_env_instance
from jaxecon.interfaces.gym_spaces import RENDER_MODES, AgentSpaces, check_config, check_render_mode, render_output

__all__ = ["ENV_ID", "POLICY_NAMES", "FoundationGymEnv"]

#: The registered id: Foundation's canonical Gather-Trade-Build economy
#: (``jaxecon.configs.default_config()``), agent ``"0"`` learning.
ENV_ID = "jaxecon/GatherTradeBuild-v0"

#: Fixed policies given by name: ``"noop"`` always takes action 0 (NO-OP in
#: every action head); ``"random"`` draws uniformly among the actions its
#: ``action_mask`` allows (``action_space.sample(mask=...)``), from a generator
#: seeded by ``reset(seed=...)``.
POLICY_NAMES = ("noop", "random")

class FoundationGymEnv(gymnasium.Env):
    """One agent of a Foundation economy learning; the others follow fixed policies.

    Args:
        foundation_config: Foundation's environment config (the keyword
            arguments of ``jaxecon.foundation.make_env_instance``, with
            ``scenario_name``; e.g. ``jaxecon.configs.default_config()``).
            Must keep ``collate_agent_step_and_reset_data`` False and
            ``flatten_masks`` True (their defaults).
        learner: the learning agent's id, ``"0".."n-1"`` or ``"p"`` (an int
            ``i`` means ``str(i)``).
        policies: the other agents' policies: one policy for all of them, or
            ``{agent_id: policy}`` (agents left out take ``"noop"``). A policy
            is ``"noop"``, ``"random"`` (see ``POLICY_NAMES``) or a callable
            ``policy(obs) -> action`` taking that agent's observation (in its
            space, as the learner's) and returning an action of its space
            (the space is ``env.agent_spaces.action_space(agent_id)``).
        render_mode: None or ``"rgb_array"``.

    Attributes:
        observation_space, action_space: the learner's.
        learner: the learner's id. agent_spaces: every agent's spaces
            (``observation_space(agent_id)``, ``action_space(agent_id)``).
        foundation_env: the underlying ``jaxecon.foundation.FoundationEnv``.

    Raises:
        ValueError: an unknown ``learner`` or policy agent id, a fixed policy
            for the learner, an unknown policy name, an unknown
            ``render_mode``, or a bad config (the shim's errors, and a collating
            or unflattened-mask config).
        TypeError: ``foundation_config`` not a dict, or a policy that is
            neither a name nor a callable.
    """

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 4}

    def __init__(self, foundation_config: dict, learner="0", policies="noop", render_mode=None):
        self.render_mode = check_render_mode(render_mode)
        self.foundation_env = make_env_instance(**check_config(foundation_config))
        self.agent_spaces = AgentSpaces(self.foundation_env)
        agents = self.agent_spaces.possible_agents
        if isinstance(learner, int) and not isinstance(learner, bool):
            learner = str(learner)
        if learner not in agents:
            raise ValueError(f"learner must be one of the agents {agents}, got {learner!r}")
        self.learner = learner
        self._others = [a for a in agents if a != learner]
        self._policies = self._check_policies(policies)
        self.observation_space = self.agent_spaces.observation_space(learner)
        self.action_space = self.agent_spaces.action_space(learner)
        self._obs = None
        self._running = False

    def _check_policies(self, policies) -> dict:
        """``{agent_id: "noop" | "random" | callable}`` for every agent but the learner."""
        if isinstance(policies, dict):
            for agent in policies:
                if agent == self.learner:
                    raise ValueError(
                        f"policies gives a fixed policy to the learner {agent!r}; the learner's "
                        f"actions come from step(). Fixed-policy agents: {self._others}"
                    )
                if agent not in self._others:
                    raise ValueError(f"policies has an unknown agent {agent!r}; the other agents are {self._others}")
            chosen = {a: policies.get(a, "noop") for a in self._others}
        else:
            chosen = dict.fromkeys(self._others, policies)
        for agent, policy in chosen.items():
            if isinstance(policy, str):
                if policy not in POLICY_NAMES:
                    raise ValueError(
                        f"policy {policy!r} of agent {agent!r} is unknown; a policy is one of "
                        f"{list(POLICY_NAMES)} or a callable obs -> action"
                    )
            elif not callable(policy):
                raise TypeError(
                    f"the policy of agent {agent!r} must be one of {list(POLICY_NAMES)} or a callable "
                    f"obs -> action, got {type(policy).__name__}"
                )
        return chosen

    def _fixed_action(self, agent: str, policy, obs: dict):
        space = self.agent_spaces.action_space(agent)
        if policy == "noop":
            return np.zeros(space.shape, dtype=space.dtype)
        if policy == "random":
            return space.sample(mask=obs["action_mask"])
        return policy(obs)

    def reset(self, *, seed=None, options=None):
        """Start an episode.

        Args:
            seed: None (continue the environment's PRNG key stream and the
                random policies' generators) or an int >= 0: seeds
                ``self.np_random`` (Gymnasium's), the ``"random"`` policies'
                action spaces from it, and ``foundation_env.seed(seed)`` (the
                economy's key ``jax.random.key(seed)``, plus Python's
                ``random`` and ``np.random`` as Foundation). The same seed and
                the same learner actions give the same episode on a fresh env.
            options: unused.
        Returns:
            ``(obs, info)``: the learner's observation and ``{}``.
        Raises:
            ValueError: a negative or non-integer ``seed``.
        """
        super().reset(seed=seed)
        if seed is not None:
            self.foundation_env.seed(seed)
            for agent, policy in self._policies.items():
                if policy == "random":
                    self.agent_spaces.action_space(agent).seed(int(self.np_random.integers(2**31)))
        self._obs = self.agent_spaces.observations(self.foundation_env.reset())
        self._running = True
        return self._obs[self.learner], {}

    def step(self, action):
        """Advance the economy one timestep: the learner takes ``action``, the others their policies' actions.

        Args:
            action: an element of ``action_space``.
        Returns:
            ``(obs, reward, terminated, truncated, info)``: the learner's
            observation and float reward, terminated always False (Foundation's
            episodes end only by the time limit), truncated True on the step
            that reaches ``episode_length``; ``info["rewards"]`` has every
            agent's reward ``{agent_id: float}``.
        Raises:
            RuntimeError: before ``reset`` or after the episode has ended.
            ValueError: an action outside its agent's space (the shim's
                message names the agent and the allowed values).
        """
        if not self._running:
            raise RuntimeError("step() needs a running episode: call reset() first")
        actions = {a: self._fixed_action(a, p, self._obs[a]) for a, p in self._policies.items()}
        actions[self.learner] = action
        obs, rew, done, _ = self.foundation_env.step(actions)
        self._obs = self.agent_spaces.observations(obs)
        truncated = bool(done["__all__"])
        self._running = not truncated
        rewards = {a: float(r) for a, r in rew.items()}
        return self._obs[self.learner], rewards[self.learner], False, truncated, {"rewards": rewards}

    def render(self):
        """The world as uint8 ``[H * 16, W * 16, 3]`` (``render_mode="rgb_array"``),
        or None with gymnasium's warning when no ``render_mode`` was given."""
        return render_output(lambda: self.foundation_env.state, self.render_mode)


if ENV_ID not in gymnasium.registry:
    gymnasium.register(
        id=ENV_ID,
        entry_point=f"{__name__}:FoundationGymEnv",
        kwargs={"foundation_config": default_config()},
    )
