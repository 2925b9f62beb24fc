"""The trainer's view of an environment: groups of agents that share a policy.

PPO in ``jaxecon.training.ppo`` sees one economy as a few *agent groups*; the
agents of a group share one policy and are batched along a leading axis:

- a jaxecon functional env (``jaxecon.make``): group ``"a"`` holds the
  ``n_agents`` mobile agents (one shared policy, the agent index as an input)
  and group ``"p"`` the planner (one policy, one action head per subspace, i.e.
  per tax bracket). A planner without actions (no tax component, or
  ``disable_taxes``) forms no group; it sends NO-OP. The env is wrapped as
  ``AutoResetWrapper(LogWrapper(env))`` (``jaxecon.wrappers``): episodes
  restart inside jit with Foundation's carry-over (completions, the "auto"
  energy warm-up integrator, saez buffers), and finished episodes report their
  returns and social metrics.
- any env with JaxMARL's ``MultiAgentEnv`` interface (``env.agents``,
  ``reset(key)``, ``step(key, state, actions)`` auto-resetting on
  ``dones["__all__"]``, ``observation_space(agent)``, ``action_space(agent)``,
  optionally ``get_avail_actions(state)``): agents with equal observation and
  action spaces form one group, in ``env.agents`` order. This is how JaxMARL
  users train their own envs with jaxecon's PPO, and jaxecon envs through the
  JaxMARL front ``jaxecon.wrappers.MultiAgentEnv``.

An adapter runs a batch of ``num_envs`` economies: ``reset(key) -> (obs,
state)`` and ``step(key, state, actions) -> (obs, state, reward, done, info)``
with (``B`` = num_envs)

- ``obs``: ``{group: GroupObs}`` (features ``[B, n, ...]``, mask ``[B, n, H, K]``);
- ``actions``: ``{group: int32 [B, n, H]}`` (one action per head);
- ``reward``: ``{group: float32 [B, n]}``; ``done``: bool ``[B]``, the step
  ended the economy's episode (the returned obs is the next episode's first);
- ``info``: ``returned_episode`` bool ``[B]``, ``returned_episode_returns``
  ``{group: float32 [B, n]}``, ``returned_episode_lengths`` int32 ``[B]`` and
  ``episode_metrics`` ``{name: float32 [B]}`` of the last finished episode.

The jaxecon batch auto-resets as one: a Foundation episode always lasts
``episode_length`` steps and the economies start together, so they end on the
same step, and ``AutoResetWrapper`` wraps the whole batch (``BatchedEnv``): its
``lax.cond`` then skips the reset on every other step. (Wrapping each economy
and vmapping would turn the cond into a select that runs the reset on every
step, several times the cost of a step.)
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax import custom_batching

from jaxecon.wrappers import AutoResetWrapper, LogWrapper, Wrapper
from jaxecon.wrappers.flat import mask_heads

__all__ = [
    "BatchedEnv",
    "GroupObs",
    "JaxeconAdapter",
    "MultiAgentAdapter",
    "PolicyGroup",
    "TRAIN_METRICS",
    "lockstep",
    "make_adapter",
]

#: The finished-episode metrics the trainer logs for a jaxecon economy (those
#: the scenario has): Foundation's social metrics (both planner objectives:
#: equality x productivity and the inverse-income-weighted utility); tax
#: revenue is added from the tax component when there is one; the "auto"
#: energy warm-up's integrator.
TRAIN_METRICS = (
    "social/productivity",
    "social/equality",
    "social_welfare/coin_eq_times_productivity",
    "social_welfare/inv_income_weighted_utility",
    "PeriodicTax/total_collected_taxes",
    "labor/warmup_integrator",
)


@dataclass(frozen=True)
class PolicyGroup:
    """Static description of one policy group: the agents that share one policy
    (parameter sharing), as the trainer sees them.

    Not the economy's ``jaxecon.core.groups.AgentGroup`` (which agents of which
    Foundation class share an observation layout, actions and reward): a
    ``JaxeconAdapter`` makes one ``PolicyGroup`` per ``AgentGroup`` that takes
    actions, with its name, its agents' ids and its action heads (a planner
    without actions makes none); a ``MultiAgentAdapter`` (JaxMARL envs, which
    have no ``AgentGroup``) one per set of agents with equal spaces.
    ``AgentGroup``, this class's former name here, is a deprecated alias.

    Attributes:
        name: the group's name (``"a"``/``"p"`` for jaxecon; JaxMARL: the
            first agent id, e.g. ``"agent_0"``).
        agents: the agent ids in the group (jaxecon: ``"0".."n-1"`` or ``"p"``).
        heads: number of actions of each action head (``Discrete(n)``: one
            head ``(n,)``; ``MultiDiscrete(nvec)``: ``tuple(nvec)``).
        multi: the env takes one action per head (``[..., H]``) rather than
            one index (``[...]``).
        role: ``"agents"`` or ``"planner"``: which policy config trains it.
    """

    name: str
    agents: tuple
    heads: tuple
    multi: bool
    role: str

    @property
    def n(self) -> int:
        """Number of agents in the group."""
        return len(self.agents)

    @property
    def max_actions(self) -> int:
        """K: the widest head (narrower heads are padded with masked entries)."""
        return int(max(self.heads))


def __getattr__(name: str):
    """``AgentGroup``: the deprecated name of ``PolicyGroup`` (it clashed with
    ``jaxecon.core.groups.AgentGroup``)."""
    if name == "AgentGroup":
        warnings.warn("jaxecon.training.env_adapters.AgentGroup is renamed PolicyGroup (the agents sharing "
                      "one policy); the economy's groups are jaxecon.core.groups.AgentGroup",
                      DeprecationWarning, stacklevel=2)
        return PolicyGroup
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@struct.dataclass
class GroupObs:
    """One group's observation.

    Attributes:
        features: pytree of arrays with a leading axis ``[n, ...]`` (everything
            the env observes except the action mask).
        mask: float32 ``[n, H, K]``, 1 = valid action (padding entries 0):
            ``jaxecon.wrappers.flat.mask_heads`` of the flat mask.
    """

    features: Any
    mask: jax.Array


def _space_heads(space) -> tuple[tuple, bool]:
    """``(heads, multi)`` of a discrete action space (gymnax/JaxMARL/jaxecon spaces).

    Raises:
        TypeError: the space is not Discrete or MultiDiscrete.
    """
    if hasattr(space, "nvec") or hasattr(space, "num_categories"):
        nvec = getattr(space, "nvec", None)
        nvec = getattr(space, "num_categories") if nvec is None else nvec
        return tuple(int(v) for v in np.asarray(nvec).reshape(-1)), True
    if hasattr(space, "n"):
        return (int(space.n),), False
    raise TypeError(
        f"the trainer needs Discrete or MultiDiscrete action spaces, got {type(space).__name__}"
    )


@custom_batching.custom_vmap
def lockstep(flag):
    """``flag`` (bool []), declared equal in every copy of a ``jax.vmap``.

    Under ``jax.vmap`` (several training seeds as one program,
    ``trainer.train_seeds``) it returns the first copy's flag unbatched, so
    that ``AutoResetWrapper``'s ``lax.cond`` stays a branch instead of a
    select that runs the reset on every step. Sound because the copies'
    economies run in lockstep: they start together and every Foundation
    episode lasts ``episode_length`` steps. Outside ``vmap`` it is ``flag``.
    """
    return flag


@lockstep.def_vmap
def _lockstep_vmap(axis_size, in_batched, flag):
    return (flag[0] if in_batched[0] else flag), False


def check_num_envs(num_envs) -> int:
    """``num_envs`` as an int, or ``ValueError`` unless it is an int >= 1 (not a bool, not 2.7)."""
    if isinstance(num_envs, bool) or not isinstance(num_envs, numbers.Integral) or num_envs < 1:
        raise ValueError(f"num_envs must be an int >= 1 (the economies in the batch), got {num_envs!r}")
    return int(num_envs)


class BatchedEnv(Wrapper):
    """``num_envs`` economies in lockstep as one env, for ``AutoResetWrapper`` to wrap.

    Args:
        env: a jaxecon functional env or a ``Wrapper`` (not auto-resetting).
        num_envs: int >= 1, the batch size B (else ``ValueError``).

    ``reset(key, params, prev_state=None)`` resets the B economies from
    ``jax.random.split(key, B)`` (carrying over from a batched ``prev_state``);
    ``step(key, state, actions, params)`` steps them from ``split(key, B)`` with
    batched actions and returns batched obs, state, reward and info, and
    ``done`` of economy 0 as the batch's (bool []): the economies start
    together and every episode lasts ``episode_length`` steps, so they are
    done together. The per-economy flags stay in ``info["done"]`` ([B]).
    """

    def __init__(self, env, num_envs: int):
        super().__init__(env)
        self.num_envs = check_num_envs(num_envs)

    def reset(self, key, params, prev_state=None):
        """Batched ``env.reset``: ``(obs [B, ...], state [B, ...])``."""
        keys = jax.random.split(key, self.num_envs)
        if prev_state is None:
            return jax.vmap(lambda k: self._env.reset(k, params))(keys)
        return jax.vmap(lambda k, s: self._env.reset(k, params, prev_state=s))(keys, prev_state)

    def step(self, key, state, actions, params):
        """Batched ``env.step``; ``done`` is economy 0's (see the class docstring)."""
        keys = jax.random.split(key, self.num_envs)
        obs, state, reward, done, info = jax.vmap(
            lambda k, s, a: self._env.step(k, s, a, params))(keys, state, actions)
        return obs, state, reward, lockstep(done[0]), {**info, "done": done}


class JaxeconAdapter:
    """A batch of a jaxecon functional env's economies as its agent groups
    (``"a"`` and ``"p"``, or the economy's declared ones: ``env.agent_groups``).

    Args:
        env: an env from ``jaxecon.make`` / ``make_from_config`` with
            ``flatten_masks=True``.
        num_envs: int >= 1, economies in the batch.
        params: its ``EnvParams`` (default ``env.default_params``).
    Raises:
        TypeError: ``env`` is not a jaxecon functional env.
        ValueError: ``flatten_masks`` is False; ``num_envs`` is not an int >= 1
            (0, -2, 2.7, True, "3").

    The stack is ``AutoResetWrapper(BatchedEnv(LogWrapper(env), num_envs))``.
    Features are the env's observation dicts without ``"action_mask"``;
    the groups follow ``env.agent_groups`` (mobile groups, role ``"agents"``;
    the planner, role ``"planner"``, when it has actions).
    """

    def __init__(self, env, num_envs: int, params=None):
        from jaxecon.core.env import Economy

        if not isinstance(env, Economy):
            raise TypeError(
                f"env must be a jaxecon functional environment (jaxecon.make), got {type(env).__name__}"
            )
        if not env.flatten_masks:
            raise ValueError("the trainer needs flatten_masks=True (the default)")
        self.env = env
        self.num_envs = check_num_envs(num_envs)
        self.params = env.default_params if params is None else params
        names = jax.eval_shape(lambda k: env.metric_arrays(env.reset(k, self.params)[1], self.params),
                               jax.random.key(0))
        self.metric_names = tuple(m for m in TRAIN_METRICS if m in names)
        self._wrapped = AutoResetWrapper(
            BatchedEnv(LogWrapper(env, metrics=self.metric_names), self.num_envs))
        groups = []
        for eg in env.agent_groups:
            layout = env.group_actions[eg.name]
            if eg.is_planner and layout.passive:
                continue  # a planner without actions sends NO-OP and forms no group
            agents = (eg.name,) if eg.is_planner else tuple(str(i) for i in range(eg.start, eg.stop))
            heads = tuple(int(d) for d in layout.dims) if layout.multi_action_mode else (layout.n_actions,)
            groups.append(PolicyGroup(eg.name, agents, heads, layout.multi_action_mode,
                                      "planner" if eg.is_planner else "agents"))
        self.groups = tuple(groups)
        self._planners = {eg.name for eg in env.agent_groups if eg.is_planner}

    def _obs(self, obs) -> dict:
        out = {}
        for g in self.groups:
            o = obs[g.name]
            if g.name in self._planners:
                o = jax.tree.map(lambda x: x[:, None], o)
            feats = {k: v for k, v in o.items() if k != "action_mask"}
            out[g.name] = GroupObs(feats, mask_heads(o["action_mask"], g.heads).astype(jnp.float32))
        return out

    def _env_actions(self, actions) -> dict:
        out = {}
        for g in self.groups:
            a = actions[g.name] if g.multi else actions[g.name][..., 0]
            out[g.name] = a[:, 0] if g.name in self._planners else a
        return out  # a group without a policy (a passive planner) is left out: NO-OP

    def reset(self, key, prev_state=None, params=None):
        """``(obs, state)`` of ``num_envs`` fresh economies (see the module docstring).

        ``prev_state``: an adapter state whose economies the new ones continue
        in what Foundation keeps across episodes (completions, the energy
        warm-up integrator, the saez buffers), as the auto-reset does.
        ``params``: ``EnvParams`` of the same structure as ``self.params``
        (e.g. traced), instead of them.
        """
        obs, state = self._wrapped.reset(key, self.params if params is None else params, prev_state)
        return self._obs(obs), state

    def step(self, key, state, actions, params=None):
        """One auto-resetting step of the batch: ``(obs, state, reward, done, info)``
        (``params`` as for ``reset``)."""
        obs, state, reward, _, info = self._wrapped.step(
            key, state, self._env_actions(actions), self.params if params is None else params
        )
        rew, ret = {}, {}
        for g in self.groups:
            lead = (lambda x: x[:, None]) if g.name in self._planners else (lambda x: x)
            rew[g.name] = lead(reward[g.name].astype(jnp.float32))
            ret[g.name] = lead(info["returned_episode_returns"][g.name].astype(jnp.float32))
        out = {
            "returned_episode": info["returned_episode"],
            "returned_episode_returns": ret,
            "returned_episode_lengths": info["returned_episode_lengths"],
            "episode_metrics": {k: v.astype(jnp.float32) for k, v in info["episode_metrics"].items()},
        }
        return self._obs(obs), state, rew, info["done"], out


@struct.dataclass
class MultiAgentState:
    """``MultiAgentAdapter``'s state: the env's state and the episode sums.

    Attributes:
        env_state: the JaxMARL env's state.
        episode_returns: ``{group: float32 [n]}`` rewards so far this episode.
        episode_length: int32 [] steps so far this episode.
        returned_episode_returns: ``{group: float32 [n]}`` of the last finished episode.
        returned_episode_length: int32 [] of the last finished episode.
    """

    env_state: Any
    episode_returns: dict
    episode_length: jax.Array
    returned_episode_returns: dict
    returned_episode_length: jax.Array


class MultiAgentAdapter:
    """A JaxMARL ``MultiAgentEnv`` as groups of agents with equal spaces.

    Args:
        env: an object with JaxMARL's ``MultiAgentEnv`` interface (see the
            module docstring); its ``step`` auto-resets (JaxMARL's does).
    Raises:
        TypeError: a missing method, or an action space that is not Discrete
            or MultiDiscrete.
        ValueError: ``num_envs`` is not an int >= 1.

    Action masks come from ``env.get_avail_actions(state)`` when the env
    implements it (per agent: ``[n_actions]``, heads concatenated ``[sum(nvec)]``,
    or ``[n_heads, max(nvec)]`` padded as ``jaxecon.wrappers.MultiAgentEnv`` gives), else from an ``"action_mask"`` entry of a dict observation,
    else every action is valid. ``episode_metrics`` is empty.
    """

    def __init__(self, env, num_envs: int):
        for attr in ("agents", "reset", "step", "observation_space", "action_space"):
            if not hasattr(env, attr):
                raise TypeError(
                    f"env must have JaxMARL's MultiAgentEnv interface; {type(env).__name__} has no {attr!r}"
                )
        self.env = env
        self.num_envs = check_num_envs(num_envs)
        self.metric_names = ()
        agents = list(env.agents)
        sig = {}
        for ag in agents:
            heads, multi = _space_heads(env.action_space(ag))
            osp = env.observation_space(ag)
            key = (heads, multi, repr(jax.tree.map(np.shape, getattr(osp, "shape", None))),
                   type(osp).__name__)
            sig.setdefault(key, []).append(ag)
        self.groups = tuple(
            PolicyGroup(members[0], tuple(members), heads, multi, "agents")
            for (heads, multi, _, _), members in sig.items()
        )
        self._has_avail = self._implements_avail()

    def _implements_avail(self) -> bool:
        fn = getattr(self.env, "get_avail_actions", None)
        if fn is None:
            return False
        try:
            _, state = jax.eval_shape(self.env.reset, jax.random.key(0))
            jax.eval_shape(fn, state)
        except NotImplementedError:
            return False
        return True

    def _obs(self, obs, env_state) -> dict:
        avail = self.env.get_avail_actions(env_state) if self._has_avail else None
        out = {}
        for g in self.groups:
            feats, masks = [], []
            for ag in g.agents:
                o = obs[ag]
                m = None
                if isinstance(o, dict) and "action_mask" in o:
                    m = o["action_mask"]
                    o = {k: v for k, v in o.items() if k != "action_mask"}
                if avail is not None:
                    m = avail[ag]
                if m is None:
                    m = jnp.ones((sum(g.heads),), jnp.float32)
                m = jnp.asarray(m, jnp.float32)
                if m.shape != (len(g.heads), g.max_actions):  # heads concatenated, not [H, K]
                    m = mask_heads(m.reshape(-1), g.heads).astype(jnp.float32)
                feats.append(o)
                masks.append(m)
            out[g.name] = GroupObs(jax.tree.map(lambda *x: jnp.stack(x), *feats), jnp.stack(masks))
        return out

    def _zeros(self) -> dict:
        return {g.name: jnp.zeros((g.n,), jnp.float32) for g in self.groups}

    def reset(self, key):
        """``(obs, state)`` of ``num_envs`` economies (see the module docstring)."""
        return jax.vmap(self._reset)(jax.random.split(key, self.num_envs))

    def step(self, key, state: MultiAgentState, actions):
        """One step of the batch (JaxMARL auto-resets): ``(obs, state, reward, done, info)``."""
        return jax.vmap(self._step)(jax.random.split(key, self.num_envs), state, actions)

    def _reset(self, key):
        obs, env_state = self.env.reset(key)
        state = MultiAgentState(env_state, self._zeros(), jnp.zeros((), jnp.int32),
                                self._zeros(), jnp.zeros((), jnp.int32))
        return self._obs(obs, env_state), state

    def _step(self, key, state: MultiAgentState, actions):
        env_actions = {}
        for g in self.groups:
            for i, ag in enumerate(g.agents):
                a = actions[g.name][i]
                env_actions[ag] = a if g.multi else a[0]
        obs, env_state, rewards, dones, _ = self.env.step(key, state.env_state, env_actions)
        done = jnp.asarray(dones["__all__"], bool)
        rew = {g.name: jnp.stack([jnp.asarray(rewards[ag], jnp.float32) for ag in g.agents])
               for g in self.groups}
        returns = jax.tree.map(lambda s, r: s + r, state.episode_returns, rew)
        length = state.episode_length + 1

        def keep(new, old):
            return jax.tree.map(lambda a, b: jnp.where(done, a, b), new, old)

        state = MultiAgentState(
            env_state=env_state,
            episode_returns=jax.tree.map(lambda r: jnp.where(done, 0.0, r), returns),
            episode_length=jnp.where(done, 0, length).astype(jnp.int32),
            returned_episode_returns=keep(returns, state.returned_episode_returns),
            returned_episode_length=keep(length, state.returned_episode_length),
        )
        info = {
            "returned_episode": done,
            "returned_episode_returns": state.returned_episode_returns,
            "returned_episode_lengths": state.returned_episode_length,
            "episode_metrics": {},
        }
        return self._obs(obs, env_state), state, rew, done, info


def make_adapter(env, num_envs: int, params=None):
    """``JaxeconAdapter`` for a jaxecon functional env, else ``MultiAgentAdapter``.

    Args:
        env: a jaxecon functional env, or any env with JaxMARL's ``MultiAgentEnv``
            interface.
        num_envs: economies in the batch, an int >= 1.
        params: ``EnvParams`` for a jaxecon env; None for any other env.
    Raises:
        TypeError: neither (the message names what is missing).
        ValueError: ``num_envs`` is not an int >= 1; ``params`` given for an
            env that is not a jaxecon env (it would be ignored).
    """
    from jaxecon.core.env import Economy

    if isinstance(env, Economy):
        return JaxeconAdapter(env, num_envs, params)
    if params is not None:
        raise ValueError(f"params are a jaxecon env's EnvParams; {type(env).__name__} is not a jaxecon env "
                         "(it has JaxMARL's interface, whose env holds its own parameters): pass params=None")
    return MultiAgentAdapter(env, num_envs)
