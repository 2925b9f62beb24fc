"""Foundation's WarpDrive env wrapper, CPU mode: ``FoundationEnvWrapper``.

Follows ``ai_economist/foundation/env_wrapper.py`` of ai-economist 1.7.1 with
``use_cuda=False``: the wrapper resets and steps the (shim) environment on the
host, adds gym ``observation_space`` / ``action_space`` to it, and returns the
collated COVID-19-style outputs with the ``"a"`` entry split back into one
entry per agent. Spaces come from ``gym`` (as Foundation's) or, when it is not
installed, ``gymnasium``.

What differs: ``use_cuda=True`` raises ``NotImplementedError`` (jaxecon has no
WarpDrive/CUDA backend; batch environments on an accelerator with
``jax.vmap`` over the functional API instead), and a multi-action mobile
agent's action space is keyed ``str(agent_id)`` (Foundation keys it
``str([agent_id])`` and then fails on ``str(agent_id)``).
"""

from __future__ import annotations

import numpy as np

#: Bound of the observation boxes (Foundation's ``BIG_NUMBER``).
BIG_NUMBER = 1e20


def _spaces():
    """The ``spaces`` module of gym, else gymnasium.

    Raises:
        ImportError: neither is installed.
    """
    try:
        from gym import spaces
    except ImportError:
        try:
            from gymnasium import spaces
        except ImportError as e:
            raise ImportError(
                "FoundationEnvWrapper builds gym spaces: pip install gymnasium (or gym)"
            ) from e
    return spaces


def _box_bound(dtype) -> float:
    """Foundation's bound for a box of ``dtype``: 1e20, halved (floor) until it fits."""
    x = float(BIG_NUMBER)
    if np.issubdtype(dtype, np.integer):
        top = np.iinfo(dtype).max
        while x > top:
            x = x // 2
    return x


def recursive_obs_dict_to_spaces_dict(obs: dict):
    """A gym ``Dict`` space for a (nested) observation dict.

    Lists become arrays and scalars 1-element arrays; each array gets a ``Box``
    of its shape and dtype with bounds ``+-BIG_NUMBER`` (halved until they fit
    the dtype); dicts recurse.

    Raises:
        TypeError: a value that is neither a number, list, array nor dict.
    """
    spaces = _spaces()
    out = {}
    for k, v in obs.items():
        if isinstance(v, list):
            v = np.array(v)
        elif isinstance(v, (int, np.integer, float, np.floating)):
            v = np.array([v])
        if isinstance(v, np.ndarray):
            x = _box_bound(v.dtype)
            out[k] = spaces.Box(low=-x, high=x, shape=v.shape, dtype=v.dtype)
        elif isinstance(v, dict):
            out[k] = recursive_obs_dict_to_spaces_dict(v)
        else:
            raise TypeError(f"observation {k!r} has unsupported type {type(v).__name__}")
    return spaces.Dict(out)


class FoundationEnvWrapper:
    """Reset and step a Foundation (shim) environment on the host, WarpDrive-style.

    Args:
        env_obj: an environment object (e.g. ``CovidAndEconomyEnvironment(**config)``).
        env_name, env_config: instead of ``env_obj``: a scenario name and its
            config, built with ``env_registrar.get(env_name, use_cuda)(**env_config)``
            if ``env_registrar`` is given, else ``make_env_instance``.
        num_envs: number of parallel environments (only 1 on the CPU).
        use_cuda: must be False.
        env_registrar, event_messenger, process_id: WarpDrive's (unused on the CPU).

    Attributes:
        env: the environment; gets ``observation_space`` (gym ``Dict`` keyed by
            agent ids), ``action_space`` (``{agent id: Discrete or
            MultiDiscrete}``, int32) and ``use_cuda`` (also on ``env.world``).
        n_agents: ``env.num_agents`` (mobile agents + planner).
        episode_length, name: the environment's.
        use_cuda: False. reset_on_host: True.

    Raises:
        NotImplementedError: ``use_cuda=True``.
        ValueError: neither ``env_obj`` nor ``env_name`` and ``env_config``.
    """

    def __init__(
        self,
        env_obj=None,
        env_name=None,
        env_config=None,
        num_envs=1,
        use_cuda=False,
        env_registrar=None,
        event_messenger=None,
        process_id=0,
    ):
        if use_cuda:
            raise NotImplementedError(
                "jaxecon has no WarpDrive (CUDA) backend: use use_cuda=False, or run many "
                "environments on an accelerator with jax.vmap over the functional API "
                "(jaxecon.make) or jaxecon.sharding"
            )
        if env_obj is not None:
            self.env = env_obj
        elif env_name is not None and env_config is not None:
            if env_registrar is not None:
                self.env = env_registrar.get(env_name, use_cuda)(**env_config)
            else:
                from jaxecon.foundation.base.base_env import make_env_instance

                self.env = make_env_instance(env_name, **env_config)
        else:
            raise ValueError("FoundationEnvWrapper needs env_obj, or env_name and env_config")
        self.n_agents = self.env.num_agents
        self.episode_length = self.env.episode_length
        self.name = self.env.name
        self.n_envs = 1

        obs = self.obs_at_reset()
        self.env.observation_space = recursive_obs_dict_to_spaces_dict(obs)
        spaces = _spaces()
        action_space = {}
        for agent in self.env.all_agents:
            dims = agent.action_spaces
            space = spaces.MultiDiscrete(dims) if agent.multi_action_mode else spaces.Discrete(dims)
            space.dtype = np.int32
            action_space[str(agent.idx)] = space
        self.env.action_space = action_space
        if set(self.env.observation_space.keys()) != set(action_space):
            raise ValueError(
                f"observation keys {sorted(self.env.observation_space.keys())} and action keys "
                f"{sorted(action_space)} differ"
            )
        self.use_cuda = False
        self.env.use_cuda = False
        self.env.world.use_cuda = False
        self.reset_on_host = True

    def reset_all_envs(self) -> dict:
        """Reset the environment (``world.timestep = 0``, then ``reset``); returns
        the observations with collated ``"a"`` split per agent."""
        self.env.world.timestep = 0
        return self.obs_at_reset()

    def reset_only_done_envs(self):
        """WarpDrive's partial reset of finished GPU environments.

        Raises:
            NotImplementedError: always (CPU mode has one environment; call
                ``reset_all_envs``).
        """
        raise NotImplementedError("reset_only_done_envs needs WarpDrive (use_cuda=True); use reset_all_envs")

    def step_all_envs(self, actions=None):
        """``env.step(actions)``, with collated observations and rewards split per agent.

        Returns:
            ``(obs, rew, done, info)``.
        Raises:
            ValueError: ``actions`` is None.
        """
        if actions is None:
            raise ValueError("Please provide actions to step with.")
        obs, rew, done, info = self.env.step(actions)
        return self._reformat_obs(obs), self._reformat_rew(rew), done, info

    def obs_at_reset(self) -> dict:
        """``env.reset()`` with collated ``"a"`` split per agent."""
        return self._reformat_obs(self.env.reset())

    def _reformat_obs(self, obs: dict) -> dict:
        """Replace a collated ``"a"`` entry by ``"0".."n-1"``: each field's last
        axis indexed by the agent (as Foundation's wrapper, also for ``flat``)."""
        if "a" in obs:
            for agent_id in range(self.env.n_agents):
                obs[str(agent_id)] = {k: v[..., agent_id] for k, v in obs["a"].items()}
            del obs["a"]
        return obs

    def _reformat_rew(self, rew: dict) -> dict:
        """Replace a collated ``"a"`` reward list/array by ``"0".."n-1"`` entries."""
        if "a" in rew:
            for agent_id in range(self.env.n_agents):
                rew[str(agent_id)] = rew["a"][agent_id]
            del rew["a"]
        return rew

    def reset(self) -> dict:
        """``reset_all_envs()`` (gym style)."""
        return self.reset_all_envs()

    def step(self, actions=None):
        """``step_all_envs(actions)`` (gym style)."""
        return self.step_all_envs(actions)
