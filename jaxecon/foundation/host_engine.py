"""The shim's engine for economies with hooks that run on the host.

When an economy has Foundation-style numpy components
(``jaxecon.foundation.host_components``) or a scenario whose Foundation hooks
are written in numpy (``jaxecon.foundation.base.base_env``), ``HostEngine``
runs Foundation's reset and step order with the user's hooks in their
places, and the jaxecon parts jitted between them:

- reset: the economy's ``reset_phases`` (``jaxecon.core.phases``), where a
  Foundation-style component's phase is its ``reset()`` (its state fields,
  then ``additional_reset_steps()``) and a host scenario hook replaces the
  scenario's phase of that name; then observations;
- step: the economy's ``step_phases``, a Foundation-style component's phase
  being its ``component_step()``, through the step's end (observations and
  masks, rewards, done and the completion count, info): where host hooks
  add observations or masks the ``generate_observations`` phase runs them
  here and assembles all, jitted; a host ``compute_reward`` replaces the
  core's.

Consecutive jaxecon phases run as one jitted call on the packed state; before
each host hook the state is fetched to the host, where the hook reads and
writes it through the views (``World``, agents' ``state``,
``jaxecon.foundation.live_state``), and the writes are sent back before the
next jitted call. The keys are the phases' own (``phases.reset_keys`` /
``step_keys``), so the jaxecon phases draw the same random numbers as in an
all-jaxecon economy. Host observations and masks (the scenario's
``generate_observations``, the components' ``generate_observations`` and
``generate_masks(completions)``) are batched on the host and handed to the
core's ``assemble_observations``, so they are packed and flattened exactly
like the jitted ones. Rewards from a host ``compute_reward`` replace the
core's; metrics and dense logs combine both in Foundation's order.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxecon.core import phases
from jaxecon.core.agent_kinds import Observed, PerKind, as_observed, as_rewards
from jaxecon.core.scenario import FOUNDATION_SCENARIO_HOOKS
from jaxecon.foundation.engine import Engine
from jaxecon.foundation.host_components import batch_masks, batch_observations

__all__ = ["CoreScenarioHooks", "HostEngine"]


def _segments(ops: list) -> list:
    """Group ``[(phase, host: bool), ...]`` into ``[("jit", [phases]) | ("host", phase)]``."""
    out = []
    for op, host in ops:
        if host:
            out.append(("host", op))
        elif out and out[-1][0] == "jit":
            out[-1][1].append(op)
        else:
            out.append(("jit", [op]))
    return out


class HostEngine(Engine):
    """Reset, step and metrics of an economy with host hooks, for one environment.

    Args:
        core: the functional environment (Foundation-style components appear
            in it as ``HostComponent`` stand-ins).
        env: the ``FoundationEnv`` whose views the hooks use (its ``_host()``,
            ``_set_buffers``, ``_device_buffers``).
        hooks: ``{scenario hook name: callable}`` for the scenario hooks that
            run on the host (names from ``FOUNDATION_SCENARIO_HOOKS``); the others are the
            core's.

    Same interface as ``Engine``, except that ``reset`` returns None for the
    step info (the environment computes it from the final state). Nothing is shared between
    environments (the hooks are bound to this one's objects). The jitted
    parts compile on first use.
    """

    runs_on_host = True

    def __init__(self, core, env, hooks: dict):
        self._setup(core)
        self._compile(("init", "unpack"))
        self.env = env
        self.hooks = dict(hooks)
        unknown = set(self.hooks) - set(FOUNDATION_SCENARIO_HOOKS)
        if unknown:
            raise ValueError(f"unknown scenario hooks {sorted(unknown)}")
        self.host_components = {i: c for i, c in enumerate(core.components) if c.runs_on_host}
        self._reset_plan = _segments([(ph, self._on_host(ph)) for ph in core.reset_phases])
        self._step_plan = _segments([(ph, self._on_host(ph)) for ph in core.step_phases])
        self._jitted = {}
        self.context = None  # ("reset", kd, count) or ("step", kd, acts) while one runs

    def _on_host(self, phase: phases.Phase) -> bool:
        """Whether ``phase`` runs on the host: a Foundation-style component's, a
        host scenario hook's, or the observations where a host hook adds to them."""
        if phase.owner == "component":
            return phase.component in self.host_components
        if phase.name == "generate_observations":
            return "generate_observations" in self.hooks or bool(self.host_components)
        return phase.owner == "scenario" and phase.name in self.hooks

    # ------------------------------------------------------------ jitted parts
    def _jit(self, name, make, donate=()):
        fn = self._jitted.get(name)
        if fn is None:
            fn = self._jitted[name] = jax.jit(make(), donate_argnums=donate)
        return fn

    def _keys(self, kd, split) -> tuple:
        """The phases' keys (``split``: ``phases.reset_keys`` / ``step_keys``) of the
        reset or step whose key data is ``kd`` (the shim's key chain)."""
        _, use = jax.random.split(jax.random.wrap_key_data(kd, impl=self.key_impl))
        return split(use, len(self.core.components))

    def _next_kd(self, kd):
        """The key data of the shim's next reset or step after the one of ``kd``."""
        fn = self._jit("next_kd", lambda: lambda kd: jax.random.key_data(
            jax.random.split(jax.random.wrap_key_data(kd, impl=self.key_impl))[0]))
        return np.asarray(fn(kd))

    def _reset_segment(self, ops):
        core, sp, pp = self.core, self.state_packing, self.params_packing

        def seg(kd, pbuf, count, prev_sbuf, sbuf):
            keys = self._keys(kd, phases.reset_keys)
            params, prev = pp.unpack(pbuf), sp.unpack(prev_sbuf)
            state, out = sp.unpack(sbuf), {}
            for phase in ops:
                state, produced = core.run_reset_phase(phase, keys, state, params, prev, count)
                out.update(produced)
            return sp.pack(state), out

        return seg

    def _step_segment(self, ops):
        core, sp, pp = self.core, self.state_packing, self.params_packing

        def seg(kd, sbuf, acts, pbuf):
            keys = self._keys(kd, phases.step_keys)
            params, state = pp.unpack(pbuf), sp.unpack(sbuf)
            local = core.codec.component_actions(self._actions(acts))
            out = {}
            for phase in ops:
                state, produced = core.run_step_phase(phase, keys, state, params, local)
                out.update(produced)
            return sp.pack(state), out

        return seg

    def _observations(self, count: int) -> dict:
        """The ``generate_observations`` phase with host hooks: theirs computed
        here, the core's jitted, all assembled by ``core.observations``."""
        core, sp, pp = self.core, self.state_packing, self.params_packing

        def make():
            def f(sbuf, pbuf, injected):
                params, state = pp.unpack(pbuf), sp.unpack(sbuf)
                sources = core.observations.sources(state, params)
                for j, groups in injected["obs"].items():
                    sources[int(j)] = (sources[int(j)][0], groups)
                mask_sources = core.observations.mask_sources(state, params)
                for i, groups in injected["masks"].items():
                    mask_sources[int(i)] = groups
                return core.observations.assemble(sources, mask_sources, state)
            return f

        injected = self._host_observations(count)
        return {"obs": self._jit("obs", make)(self.env._device_buffers(), self.env._params_buffers(), injected)}

    # ------------------------------------------------------------ host parts
    def _host_observations(self, count: int) -> dict:
        """The host hooks' observations and masks, batched (``injected``)."""
        n = self.core.n_agents
        out = {"obs": {}, "masks": {}}
        gen = self.hooks.get("generate_observations")
        if gen is not None:
            out["obs"]["0"] = Observed.from_keyed(batch_observations(gen(), n, f"scenario {self.core.name!r}"))
        for i, c in self.host_components.items():
            out["obs"][str(i + 1)] = Observed.from_keyed(batch_observations(c.host.obs(), n, f"component {c.name!r}"))
            out["masks"][str(i)] = PerKind.from_keyed(batch_masks(
                c.host.generate_masks(completions=count), c, self.core.agent_actions,
                self.core.planner_actions,
            ))
        return out

    def _run_host_reset_phase(self, phase: phases.Phase, count: int) -> dict:
        """One reset phase on the host; returns its outputs (``phases.OUTPUTS``)."""
        if phase.name == "generate_observations":
            return self._observations(count)
        if phase.owner == "component":
            c = self.core.components[phase.component]
            c.reset_host_values()
            c.host.reset()
        else:
            self.hooks[phase.name]()
        return {}

    def _run_host_step_phase(self, phase: phases.Phase) -> dict:
        """One step phase on the host; returns its outputs (``phases.OUTPUTS``)."""
        if phase.name == "generate_observations":
            return self._observations(self.env._count)
        if phase.owner == "component":
            self.core.components[phase.component].host.component_step()
            return {}
        if phase.name == "compute_reward":  # the host's rewards; the count follows, jitted
            rew = {str(k): v for k, v in self.hooks["compute_reward"]().items()}
            return {"reward": {"a": np.asarray([rew[str(i)] for i in range(self.core.n_agents)], np.float64),
                               "p": np.float64(rew["p"])}}
        self.hooks[phase.name]()
        return {}

    # ------------------------------------------------------------------ calls
    def reset(self, kd, pbuf, completions: int, prev_sbuf):
        env = self.env
        kd = np.asarray(kd, np.uint32)
        count = np.int32(completions)
        self.context = ("reset", kd, int(completions))
        out = {}
        try:
            sbuf = prev_sbuf
            for j, (kind, part) in enumerate(self._reset_plan):
                if kind == "jit":
                    fn = self._jit(("reset", j), lambda part=part: self._reset_segment(part))
                    sbuf, produced = fn(kd, pbuf, count, prev_sbuf, sbuf)
                    env._set_buffers(sbuf)
                else:
                    produced = self._run_host_reset_phase(part, int(completions))
                    sbuf = env._device_buffers()
                out.update(produced)
        finally:
            self.context = None
        obs = jax.device_get(out["obs"])
        return self._next_kd(kd), sbuf, jax.tree.map(np.array, obs), None  # step info: the env computes it

    def step(self, kd, sbuf, acts, pbuf):
        env = self.env
        kd = np.asarray(kd, np.uint32)
        self.context = ("step", kd, acts)
        out = {}
        try:
            for j, (kind, part) in enumerate(self._step_plan):
                if kind == "jit":
                    fn = self._jit(("step", j), lambda part=part: self._step_segment(part), donate=(1,))
                    sbuf, produced = fn(kd, env._device_buffers(), acts, pbuf)
                    env._set_buffers(sbuf)
                else:
                    produced = self._run_host_step_phase(part)
                out.update(produced)
            sbuf = env._device_buffers()
        finally:
            self.context = None
        obs, rew, done, info = jax.device_get((out["obs"], out["reward"], out["done"], out["info"]))
        return (self._next_kd(kd), sbuf, jax.tree.map(np.array, obs), np.asarray(rew["a"]), np.asarray(rew["p"]),
                bool(done), jax.tree.map(np.asarray, info))

    def metrics(self, sbuf, pbuf) -> dict:
        fn = self._jit("metrics", lambda: lambda sb, pb: self.core.metric_sources(
            self.state_packing.unpack(sb), self.params_packing.unpack(pb)))
        scenario, per_component = jax.device_get(fn(sbuf, pbuf))
        per_component = list(per_component)
        if "scenario_metrics" in self.hooks:
            scenario = self.hooks["scenario_metrics"]() or {}
        for i, c in self.host_components.items():
            per_component[i] = c.host.get_metrics() or {}
        return self.core.assemble_metrics((scenario, per_component))

def _foundation_obs(groups: dict, n: int) -> dict:
    """Core groups (``{"a": {k: [n, ...]}, "p": ..., "pa": ...}``) as Foundation's
    ``{agent idx: {key: value}}``."""
    out = {}
    for k, v in groups.get("a", {}).items():
        for i in range(n):
            out.setdefault(i, {})[k] = np.asarray(v)[i]
    if groups.get("p"):
        out["p"] = {k: np.asarray(v) for k, v in groups["p"].items()}
    for k, v in groups.get("pa", {}).items():
        for i in range(n):
            out.setdefault(f"p{i}", {})[k] = np.asarray(v)[i]
    return out


class CoreScenarioHooks:
    """The core scenario's Foundation hooks, run on demand on an environment's state.

    A Foundation scenario class that overrides a hook of a jaxecon scenario
    (``jaxecon.foundation.base.base_env``) may call the original with
    ``super().<hook>()``; that call runs the core's hook, jitted, on the
    current state (host writes are sent first): state-changing hooks
    (``reset_starting_layout``, ``reset_agent_states``,
    ``additional_reset_steps``, ``scenario_step``) write the state; the others
    return Foundation's values: ``compute_reward`` ``{idx: float}`` (and
    applies its state update), ``generate_observations`` ``{idx: {key:
    value}}``, ``scenario_metrics`` ``{key: scalar}``. Keys are those of the
    reset or step in progress (the engine's ``context``); outside one, the
    environment's next key (not consumed).

    Args:
        env: the ``FoundationEnv``.
    """

    def __init__(self, env):
        self.env = env
        self._fns = {}

    def _jitted(self, name, make):
        fn = self._fns.get(name)
        if fn is None:
            fn = self._fns[name] = jax.jit(make())
        return fn

    def __call__(self, name: str):
        """Run hook ``name`` (one of ``FOUNDATION_SCENARIO_HOOKS``); see the class docstring.

        Raises:
            ValueError: an unknown hook name.
        """
        env = self.env
        engine, core = env._engine, env._core
        sp, pp = engine.state_packing, engine.params_packing
        ctx = engine.context
        kd = np.asarray(ctx[1] if ctx is not None else env._kd, np.uint32)
        sbuf, pbuf = env._device_buffers(), env._params_buffers()
        # the scenario's phases that draw a key: their key, as the whole reset or step would give it
        keyed = {ph.name: (ph, split) for seq, split in ((core.reset_phases, phases.reset_keys),
                                                          (core.step_phases, phases.step_keys))
                 for ph in seq if ph.owner == "scenario" and ph.key is not None}
        if name in keyed:
            phase, split = keyed[name]

            def make():
                def f(kd, sb, pb):
                    _, use = jax.random.split(jax.random.wrap_key_data(kd, impl=engine.key_impl))
                    keys = split(use, len(core.components))
                    run = core.run_step_phase if split is phases.step_keys else core.run_reset_phase
                    args = ([],) if split is phases.step_keys else ()
                    return sp.pack(run(phase, keys, sp.unpack(sb), pp.unpack(pb), *args)[0])
                return f

            env._set_buffers(self._jitted(name, make)(kd, sbuf, pbuf))
            return None
        if name == "compute_reward":
            def make():
                def f(sb, pb):
                    rewards, state = as_rewards(core.scenario.compute_reward(sp.unpack(sb), pp.unpack(pb)),
                                                f"scenario {core.name!r}")
                    return sp.pack(state), rewards.mobile, rewards.planner
                return f

            sbuf, ra, rp = self._jitted(name, make)(sbuf, pbuf)
            env._set_buffers(sbuf)
            ra, rp = jax.device_get((ra, rp))
            out = {i: float(r) for i, r in enumerate(np.asarray(ra))}  # keyed by agent.idx
            out["p"] = float(rp)
            return out
        if name == "generate_observations":
            fn = self._jitted(name, lambda: lambda sb, pb: core.scenario.generate_observations(
                sp.unpack(sb), pp.unpack(pb)))
            return _foundation_obs(as_observed(jax.device_get(fn(sbuf, pbuf)), f"scenario {core.name!r}").keyed(), core.n_agents)
        if name == "scenario_metrics":
            fn = self._jitted(name, lambda: lambda sb, pb: core.scenario.scenario_metrics(
                sp.unpack(sb), pp.unpack(pb)))
            return {k: np.asarray(v)[()] for k, v in jax.device_get(fn(sbuf, pbuf)).items()}
        raise ValueError(f"unknown scenario hook {name!r}; hooks: {list(FOUNDATION_SCENARIO_HOOKS)}")
