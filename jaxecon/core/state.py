"""The state and parameter pytrees of an economy.

``EnvState`` holds everything about one economy at one timestep (nothing lives
outside it); ``EnvParams`` holds every numeric knob, traced so that it can be
vmapped over and differentiated. Static structure (which components, shapes,
episode length) lives on the environment object built by ``jaxecon.make``.

Field layout follows Foundation's ``World``/``Maps``/agent state
(``ai_economist/foundation/base/world.py``, ``base_agent.py``), batched over
agents along axis 0.
"""

from __future__ import annotations

from typing import Any, Protocol, Self

import jax
import jax.numpy as jnp
from flax import struct


class SubState(Protocol):
    """What a component's or scenario's sub-state is: a ``flax.struct``
    dataclass (a pytree of arrays), declared beside its owner's Params, e.g.
    ``BuildState``; ``NoState`` for one that keeps nothing. Only its owner
    writes it, with ``sub.replace(field=value)``."""

    def replace(self, **updates) -> Self:
        """A copy with ``updates`` (field name -> new value) applied."""
        ...


@struct.dataclass
class EnvState:
    """One economy's complete state.

    Shapes use ``n`` = n_agents (mobile agents), ``H, W`` = world_size.
    "float" is float32, or float64 under ``jax_enable_x64``.

    Attributes:
        timestep: int32 [] — steps taken in this episode (Foundation's ``world.timestep``).
        completions: int32 [] — episodes completed so far (Foundation's ``env._completions``);
            drives energy warm-up and tax annealing. Incremented by every step that
            returns ``done`` (also after the end, as Foundation does, quirk Q12).
        maps: dict name -> float [H, W] — resource health (``Wood``, ``Stone``),
            public/blocking landmarks (``WoodSourceBlock``, ``StoneSourceBlock``, ``Water``)
            and the health of private landmarks (``House``). Keys in Foundation's map order.
        owner: dict name -> int16 [H, W] — owner of each private landmark tile
            (agent index, -1 = unowned), e.g. ``owner["House"]``. int16 as in
            Foundation's owner maps (int32 with 32768 agents or more: ``owner_dtype``).
        loc: int32 [n, 2] — (row, col) of each mobile agent; -1 when not placed.
        inventory: dict resource -> float [n] — e.g. ``inventory["Coin"]`` (coin),
            ``inventory["Wood"]`` (units).
        escrow: dict resource -> float [n] — resources held in escrow by open orders.
        endogenous: dict name -> float [n] — ``endogenous["Labor"]`` (labor units).
        planner_inventory: dict resource -> float [] — the planner's inventory.
        planner_escrow: dict resource -> float [] — the planner's escrow.
        components: dict component name -> that component's typed sub-state
            (``SubState``: a ``flax.struct`` dataclass declared beside its Params,
            e.g. ``components["Build"].build_payment``; ``NoState()`` if it keeps none).
        scenario: the scenario's typed sub-state (``SubState``: reward baselines,
            trackers, e.g. ``WoodAndStoneState``), ``NoState()`` if it keeps none.
    """

    timestep: jax.Array
    completions: jax.Array
    maps: dict[str, jax.Array]
    owner: dict[str, jax.Array]
    loc: jax.Array
    inventory: dict[str, jax.Array]
    escrow: dict[str, jax.Array]
    endogenous: dict[str, jax.Array]
    planner_inventory: dict[str, jax.Array]
    planner_escrow: dict[str, jax.Array]
    components: dict[str, SubState]
    scenario: SubState

    def total_endowment(self, resource: str) -> jax.Array:
        """Inventory plus escrow of ``resource`` per mobile agent: float [n]."""
        return self.inventory[resource] + self.escrow[resource]


@struct.dataclass
class NoState:
    """The sub-state of a component or scenario that keeps nothing."""


@struct.dataclass
class EnvParams:
    """Every numeric knob of an economy, as a pytree of (traced) floats.

    Attributes:
        scenario: the scenario's parameter dataclass (e.g. isoelastic_eta, energy_cost).
        components: dict component name -> that component's parameter dataclass
            (e.g. ``components["Build"].payment``).

        max_steps_in_episode: int, static (not a leaf): the economy's
            ``episode_length``, under gymnax's name for it, so that gymnax code
            that reads ``env_params.max_steps_in_episode`` (rejax's default
            evaluation) finds it. Changing it does not change the episode: a
            ``.replace`` with another value is params of another economy, which
            ``env.check_params`` refuses (``ValueError``).

    Leaves are Python floats (or arrays), so ``jax.grad`` with respect to them and
    ``jax.vmap`` over a batch of them both work. Structure (which fields exist) is
    fixed by ``jaxecon.make``.
    """

    scenario: Any
    components: dict
    max_steps_in_episode: int = struct.field(pytree_node=False, kw_only=True)


def owner_dtype(n_agents: int):
    """The dtype of ``EnvState.owner`` maps: int16 (Foundation's), int32 if it cannot hold every agent index."""
    return jnp.int16 if n_agents < 2**15 else jnp.int32


def float_dtype():
    """The float dtype arrays are created with: float64 under ``jax_enable_x64``, else float32."""
    return jnp.result_type(float)


def as_float_tree(tree):
    """Every leaf of ``tree`` as a jax array of ``float_dtype()`` (e.g. parameter
    dataclasses holding Python floats and float64 numpy arrays)."""
    return jax.tree.map(lambda v: jnp.asarray(v, float_dtype()), tree)
