"""Observation assembly: the hooks' outputs packed into each group's observation,
and the spaces that describe them.

Foundation's ``BaseEnvironment._generate_observations``
(``ai_economist/foundation/base/base_env.py``) calls the scenario's
``generate_observations`` and each component's, prefixes every key with its
source (``world-``, ``<component name>-``), adds ``time``, and, with
``flatten_observations``, packs the non-spatial fields into ``flat``; the
action masks join as ``action_mask``. ``ObservationAssembler`` does the same
over arrays, keyed by group (``jaxecon.core.groups``): a mobile group's
fields carry a leading agent axis, the planner's view of the mobile agents
(Foundation's ``p0``..``p<n-1>`` entries) is one field, ``AGENTS_FIELD``.
The spaces (``jaxecon.spaces``) are assembled the same way from the hooks'
declared spaces.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon import spaces
from jaxecon.core.agent_kinds import Observed, as_observed
from jaxecon.core.backend import fusible_concatenate
from jaxecon.core.group_codec import GroupCodec
from jaxecon.core.groups import AgentGroup
from jaxecon.core.state import EnvParams, EnvState

__all__ = ["AGENTS_FIELD", "ObservationAssembler", "flat_split"]

#: The planner's observation field holding its view of every mobile agent,
#: one row per agent (Foundation's ``p0``..``p<n-1>`` entries, stacked).
AGENTS_FIELD = "agents"


def flat_split(shapes: dict, with_time: bool = True) -> tuple[list, list]:
    """Which observation fields Foundation's packager (``flatten_observations``,
    ``base_env._generate_observations``) keeps and which it packs into ``"flat"``.

    Args:
        shapes: ``{field: per-agent shape}`` of one agent's fields.
        with_time: whether ``"time"`` is also kept as its own field.
    Returns:
        ``(kept, packed)``, each in sorted key order: fields with more than one
        per-agent dimension are kept; the others are packed, flattened and
        concatenated in that order; ``"time"`` is packed and, where
        ``with_time``, also kept.
    """
    kept, packed = [], []
    for k in sorted(shapes):
        if len(shapes[k]) > 1:
            kept.append(k)
            continue
        if k == "time" and with_time:
            kept.append(k)
        packed.append(k)
    return kept, packed


class ObservationAssembler:
    """Each group's observation from the scenario's and components' observation
    hooks and the components' masks, and the matching spaces (module docstring).

    Args:
        scenario: the economy's scenario (its ``generate_observations``,
            ``generate_observation_spaces``, ``flatten_observations``,
            ``allow_observation_scaling``, ``episode_length``, ``n_agents``).
        components: the economy's components, in list order.
        codec: the economy's ``GroupCodec`` (groups, action layouts, masks).
        state_template: ``key -> EnvState`` of the economy (abstractly
            evaluated, for the spaces of hooks that declare none).
        default_params: the economy's ``EnvParams``.
    """

    def __init__(self, scenario, components: list, codec: GroupCodec,
                 state_template: Callable[[jax.Array], EnvState], default_params: EnvParams):
        self.scenario = scenario
        self.components = list(components)
        self.codec = codec
        self._state_template = state_template
        self._default_params = default_params
        self.spaces = self._build_spaces()

    # ------------------------------------------------------------------ arrays
    def sources(self, state: EnvState, params: EnvParams) -> list:
        """Every observation hook's output, unprefixed, in Foundation's order:
        ``[("world", generate_observations), (component name, its observe), ...]``,
        each an ``Observed`` (``jaxecon.core.agent_kinds``)."""
        scn = f"scenario {self.scenario.name!r}"
        return [("world", as_observed(self.scenario.generate_observations(state, params), scn))] + [
            (c.name, as_observed(c.observe(state, params.components[c.name]), f"component {c.name!r}"))
            for c in self.components
        ]

    def mask_sources(self, state: EnvState, params: EnvParams) -> list:
        """Every component's ``masks`` output, in list order (``PerKind`` each)."""
        return [c.masks(state, params.components[c.name]) for c in self.components]

    def assemble(self, sources: list, mask_sources: list, state: EnvState) -> dict:
        """``{group: observation}`` from the hooks' outputs (``sources``,
        ``mask_sources``): prefixes, ``time``, packing and masks
        (``Economy.observe``). The stateful shim's host engine calls it with
        some outputs computed on the host."""
        scn = self.scenario
        t = state.timestep.astype(jnp.float32) / (
            float(scn.episode_length) if scn.allow_observation_scaling else 1.0)
        masks = self.codec.assemble_masks(mask_sources)
        out = {}
        for g in self.codec.agent_groups:
            if g.is_planner:
                entries = self._group_entries(sources, "planner", g, jnp.asarray)
                entries["time"] = jnp.reshape(t, (1,))
                obs = self._pack(entries, batched=False)
                pa = self._group_entries(sources, "planner_view", g, jnp.asarray)
                if pa:
                    pa = self._pack(pa, batched=True, with_time=False)
                    obs[AGENTS_FIELD] = pa["flat"] if scn.flatten_observations else pa
            else:
                entries = self._group_entries(sources, "mobile", g, lambda v: self.codec.rows(jnp.asarray(v), g))
                entries["time"] = jnp.broadcast_to(t, (g.count, 1))
                obs = self._pack(entries, batched=True)
            obs["action_mask"] = masks[g.name]
            out[g.name] = obs
        return out

    def observes(self, group: AgentGroup, prefix: str) -> bool:
        """Whether ``group`` observes the observation hook ``prefix`` (``"world"``
        or a component's name): the planner and Foundation's one mobile group
        observe every hook; a declared mobile-agent type (or agent class)
        observes the world and every component except those with mobile-agent
        actions that do not act on it (``Component.acts_on``)."""
        if group.is_planner or (group.components is None and group.agent_class == group.kind):
            return True
        with_mobile_actions = {n.split(".")[0] for n in self.codec.agent_actions.names}
        return prefix not in with_mobile_actions or any(c.name == prefix and c.acts_on(group)
                                                          for c in self.components)

    def _group_entries(self, sources: list, kind: str, group: AgentGroup, take) -> dict:
        """``{"<prefix>-<key>": take(value)}`` of the hooks' ``kind`` fields
        (an ``Observed`` field: ``"mobile"``, ``"planner"``, ``"planner_view"``)
        that ``group`` observes, in hook order."""
        return {f"{prefix}-{k}": take(v)
                for prefix, source in sources if self.observes(group, prefix)
                for k, v in getattr(source, kind).items()}

    def _pack(self, entries: dict, batched: bool, with_time: bool = True) -> dict:
        """Foundation's observation packager (``base_env._generate_observations``)
        over arrays (a leading agent axis where ``batched``); see ``flat_split``."""
        if not self.scenario.flatten_observations:
            return dict(entries)
        base = 1 if batched else 0
        kept, packed = flat_split({k: v.shape[base:] for k, v in entries.items()}, with_time)
        keep = {k: entries[k] for k in kept}
        if packed:
            keep["flat"] = fusible_concatenate(
                [entries[k].reshape(entries[k].shape[:base] + (-1,)).astype(jnp.float32) for k in packed], axis=-1)
        return keep

    # ------------------------------------------------------------------ spaces
    def space_sources(self) -> list:
        """Every observation hook's spaces, as ``sources`` lists the arrays:
        ``[("world", generate_observation_spaces), (component name, its
        observation_spaces), ...]``; an undeclared hook's are inferred
        (``jax.eval_shape``, infinite bounds).

        Raises:
            NotImplementedError: a Foundation-style (host) component.
        """
        def declared(spaces, source):
            return None if spaces is None else as_observed(spaces, source)

        out = [("world", declared(self.scenario.generate_observation_spaces(), f"scenario {self.scenario.name!r}"))]
        for c in self.components:
            if c.runs_on_host:
                raise NotImplementedError(
                    f"observation_space is not available: component {c.name!r} is a Foundation-style "
                    "(numpy) component whose observations are known only when it runs on the host")
            out.append((c.name, declared(c.observation_spaces(), f"component {c.name!r}")))
        if any(d is None for _, d in out):
            inferred = self._inferred_spaces()
            out = [(name, inferred[i] if d is None else d) for i, (name, d) in enumerate(out)]
        return out

    def _inferred_spaces(self) -> list:
        """``[Observed of Boxes]`` per observation source: ``sources``'s shapes
        and dtypes (``jax.eval_shape``), one agent's entry, infinite bounds
        (integer dtypes: the dtype's range)."""
        params = self._default_params

        def sources(key):
            return [groups for _, groups in self.sources(self._state_template(key), params)]

        shapes = jax.eval_shape(sources, jax.random.key(0))

        def box(x, batched):
            shape = tuple(x.shape[1:] if batched else x.shape)
            dtype = np.dtype(x.dtype)
            if dtype == np.bool_:
                return spaces.Box(0, 1, shape, dtype)
            if np.issubdtype(dtype, np.integer):
                info = np.iinfo(dtype)
                return spaces.Box(info.min, info.max, shape, dtype)
            return spaces.Box(-np.inf, np.inf, shape, dtype)

        return [Observed(mobile={k: box(v, True) for k, v in obs.mobile.items()},
                         planner={k: box(v, False) for k, v in obs.planner.items()},
                         planner_view={k: box(v, True) for k, v in obs.planner_view.items()})
                for obs in shapes]

    def _build_spaces(self):
        """``{group: Dict}`` assembled as ``assemble`` assembles the arrays, or
        the reason it is not available (a str)."""
        try:
            sources = self.space_sources()
        except NotImplementedError as e:
            return str(e)
        scn = self.scenario
        # time: t / episode_length in [0, 1] when scaled (widened: the division may
        # round up by an ulp), else t in [0, episode_length]; stepping past the
        # end (quirk Q12) leaves the space.
        if scn.allow_observation_scaling:
            time = spaces.Box(0.0, 1.0, (1,), np.float32).widen()
        else:
            time = spaces.Box(0.0, float(scn.episode_length), (1,), np.float32)
        out = {}
        for g in self.codec.agent_groups:
            entries = self._group_entries(sources, "planner" if g.is_planner else "mobile", g, lambda box: box)
            entries["time"] = time
            obs = self._pack_spaces(entries)
            pa = self._group_entries(sources, "planner_view", g, lambda box: box) if g.is_planner else {}
            if pa:
                pa = self._pack_spaces(pa, with_time=False)
                rows = {k: spaces.stack(box, scn.n_agents) for k, box in pa.items()}
                obs[AGENTS_FIELD] = rows["flat"] if scn.flatten_observations else spaces.Dict(rows)
            obs["action_mask"] = self.codec.mask_space(g.name)
            out[g.name] = spaces.Dict(obs)
        return out

    def _pack_spaces(self, entries: dict, with_time: bool = True) -> dict:
        """``_pack`` over one agent's spaces: ``flat`` is the float32 Box of the
        packed fields (``spaces.concatenate``); see ``flat_split``."""
        if not self.scenario.flatten_observations:
            return dict(entries)
        kept, packed = flat_split({k: box.shape for k, box in entries.items()}, with_time)
        keep = {k: entries[k] for k in kept}
        if packed:
            keep["flat"] = spaces.concatenate([entries[k] for k in packed], np.float32)
        return keep
