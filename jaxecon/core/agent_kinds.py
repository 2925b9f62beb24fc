"""What the hooks of components and scenarios take and return, per agent kind.

Foundation's hooks key their values by agent: ``generate_observations`` and
``generate_masks`` return ``{agent idx: ...}``, ``component_step`` reads each
agent's action, ``compute_reward`` returns ``{agent idx: reward}``
(``ai_economist/foundation/base/base_component.py``, ``base_env.py``).
jaxecon batches the agents of one Foundation agent class on one axis, so a
hook sees two kinds: the mobile agents (``BasicMobileAgent``, every mobile
agent on the state's agent axis) and the planner (``BasicPlanner``); the
planner's view of each mobile agent (Foundation's ``p0``..``p<n-1>``
observation entries) is a third part of an observation. The economy's agent
groups (``jaxecon.core.groups``) are made from these by the group codec
(``jaxecon.core.group_codec``); hooks never see groups.

- ``PerKind(mobile, planner)``: a component's decoded actions
  (``{subspace: int32 [n]}``, ``{subspace: int32 []}``), its masks
  (``{subspace: bool [n, size]}``, ``{subspace: bool [size]}``), and the
  scenario's rewards (float [n], float []).
- ``Observed(mobile, planner, planner_view)``: an observation hook's
  unprefixed fields (``{k: [n, ...]}``, ``{k: [...]}``, ``{k: [n, ...]}``),
  or their spaces (one agent's ``Box`` each).

Both are pytrees (``flax.struct``). Hooks written before these records
returned dicts keyed ``"a"``, ``"p"``, ``"pa"`` (and rewards as
``(reward_a, reward_p, state)``); ``as_observed`` / ``as_masks`` /
``as_rewards`` still accept those with a ``DeprecationWarning``, and the
records answer ``record["a"]`` the same way, so old hooks keep running.
"""

from __future__ import annotations

import warnings
from typing import Any

from flax import struct

__all__ = ["Observed", "PerKind", "as_masks", "as_observed", "as_rewards"]

#: Foundation-era keys of hook dicts -> the record's field.
_OLD_KEYS = {"a": "mobile", "p": "planner", "pa": "planner_view"}


def _warn(what: str) -> None:
    warnings.warn(f"{what} is deprecated: use the records of jaxecon.core.agent_kinds "
                  "(mobile=, planner=, planner_view=)", DeprecationWarning, stacklevel=3)


class _OldKeys:
    """Foundation's keys for a record: ``keyed`` / ``from_keyed`` at the
    Foundation edge (the shim, interop), and ``record["a"]`` / ``"p"`` /
    ``"pa"`` for hooks written against dicts (deprecated)."""

    def keyed(self) -> dict:
        """``{"a": mobile, "p": planner, "pa": planner_view}``, the non-empty parts."""
        out = {}
        for key, field in _OLD_KEYS.items():
            value = getattr(self, field, None)
            if value is not None and not (isinstance(value, dict) and not value):
                out[key] = value
        return out

    @classmethod
    def from_keyed(cls, d: dict):
        """The record of a dict keyed ``"a"``/``"p"``/``"pa"`` (``keyed``'s inverse)."""
        return cls(**{_OLD_KEYS[k]: dict(v) if isinstance(v, dict) else v for k, v in d.items()})

    def __getitem__(self, key: str):
        if key not in _OLD_KEYS or not hasattr(self, _OLD_KEYS[key]):
            raise KeyError(key)
        _warn(f"reading a {type(self).__name__} by the key {key!r}")
        return getattr(self, _OLD_KEYS[key])

    def get(self, key: str, default=None):
        try:
            return self[key]
        except KeyError:
            return default


@struct.dataclass
class PerKind(_OldKeys):
    """A hook's values per agent kind (module docstring).

    Attributes:
        mobile: the mobile agents' values, each with a leading axis over every
            mobile agent (``n_agents``): a dict of arrays, or an array (rewards).
        planner: the planner's values (no agent axis), in the same form.
    """

    mobile: Any = struct.field(default_factory=dict)
    planner: Any = struct.field(default_factory=dict)


@struct.dataclass
class Observed(_OldKeys):
    """An observation hook's unprefixed fields per agent kind (module docstring).

    Attributes:
        mobile: ``{field: [n_agents, ...]}``, each mobile agent's.
        planner: ``{field: [...]}``, the planner's own.
        planner_view: ``{field: [n_agents, ...]}``, the planner's view of each
            mobile agent (Foundation's ``p<i>`` entries).
    For spaces, each value is ONE agent's ``jaxecon.spaces.Box``.
    """

    mobile: dict = struct.field(default_factory=dict)
    planner: dict = struct.field(default_factory=dict)
    planner_view: dict = struct.field(default_factory=dict)


def _as_record(value, record: type, what: str, source: str):
    """``value`` as ``record`` (``Observed`` or ``PerKind``): itself, empty for
    None or ``{}``, or from a dict of Foundation's keys of ``record``'s fields
    (deprecated: warns). ``what`` names the output in messages.

    Raises:
        ValueError: a dict with other keys, or another type.
    """
    if isinstance(value, record):
        return value
    if value is None or (isinstance(value, dict) and not value):
        return record()
    if isinstance(value, dict):
        allowed = tuple(k for k, field in _OLD_KEYS.items() if field in record.__dataclass_fields__)
        bad = [k for k in value if k not in allowed]
        if bad:
            raise ValueError(f"{source}: the {what} has keys {bad}; a hook returns "
                             f"jaxecon.core.agent_kinds.{record.__name__}")
        _warn(f"{source}: {what} keyed " + "/".join(f"'{k}'" for k in allowed))
        return record.from_keyed(value)
    raise ValueError(f"{source}: {what} must be a jaxecon.core.agent_kinds.{record.__name__}, "
                     f"got {type(value).__qualname__}")


def as_observed(value, source: str) -> Observed:
    """An observation hook's output (or spaces) as ``Observed``.

    Args:
        value: ``Observed``, None or ``{}`` (nothing), or a dict keyed
            ``"a"``/``"p"``/``"pa"`` (deprecated: warns).
        source: the hook's owner, for messages (``"component 'Build'"``).
    Raises:
        ValueError: a dict with other keys, or another type.
    """
    return _as_record(value, Observed, "observations", source)


def as_masks(value, source: str) -> PerKind:
    """A ``masks`` hook's output as ``PerKind`` of ``{subspace: mask}`` dicts.

    Args:
        value: ``PerKind``, None or ``{}``, or a dict keyed ``"a"``/``"p"``
            (deprecated: warns).
        source: the hook's owner, for messages.
    Raises:
        ValueError: a dict with other keys, or another type.
    """
    return _as_record(value, PerKind, "masks", source)


def as_rewards(value, source: str) -> tuple:
    """``compute_reward``'s output as ``(PerKind(mobile=float [n], planner=float []), state)``.

    Args:
        value: ``(PerKind, state)``, or ``(reward_a, reward_p, state)``
            (deprecated: warns).
        source: the scenario, for messages.
    Raises:
        ValueError: anything else.
    """
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], PerKind):
        return value
    if isinstance(value, tuple) and len(value) == 3:
        _warn(f"{source}: compute_reward returning (reward_a, reward_p, state)")
        return PerKind(mobile=value[0], planner=value[1]), value[2]
    raise ValueError(f"{source}: compute_reward must return (jaxecon.core.agent_kinds.PerKind(mobile=float [n], "
                     f"planner=float []), state), got {type(value).__qualname__}")
