"""Episode returns, lengths and social metrics, PureJaxRL-style.

Follows the ``LogWrapper`` of PureJaxRL and gymnax (``gymnax.wrappers.purerl``):
running sums live in the wrapper's state, and every step's ``info`` reports the
last *finished* episode under ``returned_*`` keys, with ``returned_episode``
marking the steps that finish one. jaxecon adds the planner (returns are
``{"a": [n], "p": []}``, one per mobile agent and one for the planner) and the
finished episode's metrics (Foundation's ``env.metrics``: by default the
scenario's social metrics: productivity, equality, social welfare, utilities,
endowments).

Order with auto-reset: ``AutoResetWrapper(LogWrapper(env))``. The logger must
see the episode's last state before the reset replaces it; its ``reset``
takes ``prev_state`` and keeps the ``returned_*`` values across the reset.
``LogWrapper(AutoResetWrapper(env))`` is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxecon.core import metric_keys
from jaxecon.core.state import float_dtype
from jaxecon.wrappers.auto_reset import AutoResetWrapper
from jaxecon.wrappers.base import Wrapper, contains_wrapper, unwrap_state

__all__ = ["LogState", "LogWrapper"]


@struct.dataclass
class LogState:
    """``LogWrapper``'s state. ``n`` = n_agents; "float" is float32 (float64 under x64).

    Attributes:
        env_state: the wrapped env's state.
        episode_returns: ``{"a": float [n], "p": float []}`` (one entry per
            group of the env), rewards summed over the current episode so far.
        episode_lengths: int32 [], steps taken in the current episode.
        returned_episode_returns: ``{"a": float [n], "p": float []}``, the last
            finished episode's summed rewards (zeros before the first one ends).
        returned_episode_lengths: int32 [], the last finished episode's length.
        returned_episode_metrics: ``{metric name: float []}``, ``env.metrics`` of
            the last finished episode's final state (zeros before the first one ends).
        timestep: int32 [], steps taken since the first reset, across episodes
            (an auto-reset carries it over; PureJaxRL's ``LogEnvState.timestep``).
    """

    env_state: Any
    episode_returns: dict
    episode_lengths: jax.Array
    returned_episode_returns: dict
    returned_episode_lengths: jax.Array
    returned_episode_metrics: dict
    timestep: jax.Array


class LogWrapper(Wrapper):
    """Record episode returns and lengths per agent and for the planner, and social metrics.

    Args:
        env: a jaxecon functional env or a ``Wrapper`` that does not auto-reset.
        metrics: which ``env.metrics`` entries to record at each episode's end:
            ``"scenario"`` (default: the scenario's own metrics, e.g.
            ``social/productivity``, ``social/equality``, ``social_welfare/...``,
            ``util/<i>``), ``"all"`` (every entry, components' included), or a
            sequence of entry names.
    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper, or contains an
            ``AutoResetWrapper`` (use ``AutoResetWrapper(LogWrapper(env))``).
        ValueError: ``metrics`` is not ``"scenario"``, ``"all"`` or a sequence of
            names of ``env.metrics`` (the message lists the allowed names).

    ``reset(key, params, prev_state=None) -> (obs, LogState)``; with a
    ``LogState`` as ``prev_state`` the wrapped env carries over from its
    ``env_state`` and the ``returned_*`` fields and ``timestep`` are kept.
    ``step(key, state, actions, params) -> (obs, LogState, reward, done, info)``,
    ``info`` adding (after the step; the ``returned_*`` values change only on
    steps with ``done``):

    - ``"returned_episode_returns"``: ``{"a": float [n], "p": float []}``;
    - ``"returned_episode_lengths"``: int32 [];
    - ``"returned_episode"``: bool [], this step finished an episode;
    - ``"episode_metrics"``: ``{name: float []}``, the finished episode's metrics;
    - ``"timestep"``: int32 [], the steps this env has taken since its first
      reset, this one included, across episodes (1 after the first step; the
      auto-reset carries it over). PureJaxRL's ``LogWrapper`` reports the same
      count under this key, which its scripts multiply by ``num_envs`` to log
      the global step; the step within the episode is
      ``unwrap_state(state).timestep``.

    Pure, jittable and vmappable. The metrics are computed every step and
    selected on ``done``; under jit XLA computes only the selected entries.
    They come from ``env.metric_arrays``: a per-agent name (``util/3``) is one
    row of its array, so each per-agent name recorded adds to the traced
    step, while the economy-wide ones (the trainer's) do not grow with the
    number of agents.
    """

    def __init__(self, env, metrics: str | Sequence[str] = "scenario"):
        super().__init__(env)
        if contains_wrapper(env, AutoResetWrapper):
            raise TypeError(
                "LogWrapper must see each episode's final state before the reset: "
                "wrap it inside the auto-reset, AutoResetWrapper(LogWrapper(env)), "
                "not LogWrapper(AutoResetWrapper(env))"
            )
        self.metric_names = self._metric_names(metrics)

    def _metric_names(self, metrics) -> tuple:
        base = self.unwrapped
        params = base.default_params

        def shapes(key):
            _, state = base.reset(key, params)
            return base.metric_arrays(state, params), base.scenario.scenario_metrics(state, params)

        arrays, scenario = jax.eval_shape(shapes, jax.random.key(0))
        # Foundation's keys -> (key of metric_arrays, agent index or None)
        self._metric_source = metric_keys.locate(list(arrays), base.n_agents)
        every = self._metric_source
        scenario = metric_keys.locate(list(scenario), base.n_agents)
        if isinstance(metrics, str):
            if metrics == "all":
                return tuple(every)
            if metrics == "scenario":
                return tuple(k for k in every if k in scenario)
            raise ValueError(f'metrics must be "scenario", "all" or a sequence of metric names, got {metrics!r}')
        if not isinstance(metrics, Sequence) or not all(isinstance(m, str) for m in metrics):
            raise ValueError(f'metrics must be "scenario", "all" or a sequence of metric names, got {metrics!r}')
        unknown = [m for m in metrics if m not in every]
        if unknown:
            raise ValueError(f"metrics: unknown names {unknown}; allowed: {sorted(every)}")
        return tuple(metrics)

    def _episode_metrics(self, env_state, params) -> dict:
        m = self.unwrapped.metric_arrays(unwrap_state(env_state), params)
        f = float_dtype()
        out = {}
        for k in self.metric_names:
            src, i = self._metric_source[k]
            out[k] = jnp.asarray(m[src] if i is None else m[src][i], f)
        return out

    def reset(self, key, params, prev_state: LogState | None = None):
        """Reset the wrapped env; ``(obs, LogState)`` with zeroed running sums.

        Args:
            key: PRNG key.
            params: ``EnvParams``.
            prev_state: None, or the ``LogState`` of the episode that ended: the
                wrapped env carries over from ``prev_state.env_state`` and the
                ``returned_*`` fields and ``timestep`` are kept.
        """
        obs, env_state = self._env.reset(
            key, params, prev_state=None if prev_state is None else prev_state.env_state
        )
        f = float_dtype()
        base = self.unwrapped
        zero_returns = {g.name: jnp.zeros(() if g.is_planner else (g.count,), f) for g in base.agent_groups}
        if prev_state is None:
            returned = (
                zero_returns,
                jnp.zeros((), jnp.int32),
                {k: jnp.zeros((), f) for k in self.metric_names},
                jnp.zeros((), jnp.int32),
            )
        else:
            returned = (
                prev_state.returned_episode_returns,
                prev_state.returned_episode_lengths,
                prev_state.returned_episode_metrics,
                prev_state.timestep,
            )
        state = LogState(env_state, zero_returns, jnp.zeros((), jnp.int32), *returned)
        return obs, state

    def step(self, key, state: LogState, actions, params):
        """Step the wrapped env and update the episode sums (see the class docstring).

        Raises:
            TypeError: ``state`` is not the ``LogState`` that ``reset`` returned.
        """
        if not isinstance(state, LogState):
            raise TypeError(f"state must be the LogState that LogWrapper.reset returned, got {type(state).__qualname__}")
        obs, env_state, reward, done, info = self._env.step(key, state.env_state, actions, params)
        returns = jax.tree.map(lambda s, r: s + r, state.episode_returns, reward)
        length = state.episode_lengths + 1
        metrics = self._episode_metrics(env_state, params)

        def on_done(new, old):
            return jax.tree.map(lambda a, b: jnp.where(done, a, b), new, old)

        state = LogState(
            env_state=env_state,
            episode_returns=jax.tree.map(lambda r: jnp.where(done, jnp.zeros_like(r), r), returns),
            episode_lengths=jnp.where(done, 0, length).astype(jnp.int32),
            returned_episode_returns=on_done(returns, state.returned_episode_returns),
            returned_episode_lengths=on_done(length, state.returned_episode_lengths).astype(jnp.int32),
            returned_episode_metrics=on_done(metrics, state.returned_episode_metrics),
            timestep=(state.timestep + 1).astype(jnp.int32),
        )
        info = {
            **info,
            "returned_episode_returns": state.returned_episode_returns,
            "returned_episode_lengths": state.returned_episode_lengths,
            "returned_episode": jnp.asarray(done, bool),
            "episode_metrics": state.returned_episode_metrics,
            "timestep": state.timestep,
        }
        return obs, state, reward, done, info
