"""Which scenario runs in the core, and which scenario hooks run on the host.

A shim scenario class (a subclass of ``jaxecon.foundation.base.base_env.
BaseEnvironment``) is one of:

- a jaxecon scenario's class (``scenario_registry.get(name)`` of a jaxecon
  name): its core is that jaxecon scenario, every hook jitted;
- a subclass of one that overrides some of Foundation's scenario hooks
  (``jaxecon.core.scenario.FOUNDATION_SCENARIO_HOOKS``) in numpy: the same
  core, with the overridden hooks run on the host in their places
  (``super().<hook>()`` runs the jaxecon one);
- a Foundation-style scenario written from scratch in numpy: its core is a
  ``HostScenarioCore`` (the static structure only: components, entities,
  sizes), and all its hooks run on the host.
"""

from __future__ import annotations

from jaxecon.core.scenario import FOUNDATION_SCENARIO_HOOKS
from jaxecon.core.scenario import Scenario as CoreScenario

__all__ = ["HostScenarioCore", "scenario_core"]


class HostScenarioCore(CoreScenario):
    """The core's stand-in for a Foundation-style numpy scenario.

    Takes ``BaseEnvironment``'s keyword arguments only (the scenario's own
    are the user's class's); every hook is the base's (no layout, no agent
    state, no dynamics, no observations, zero rewards): the user's hooks do
    all of it on the host. Subclassed per user class (``scenario_core``) for
    its ``name``, ``required_entities`` and ``agent_subclasses``.
    """


_CORES: dict = {}


def scenario_core(cls, base, builtin_core) -> tuple:
    """The core scenario class of shim class ``cls`` and its host hooks.

    Args:
        cls: a subclass of the shim's ``BaseEnvironment``.
        base: the shim's ``BaseEnvironment`` (its hooks are defaults, not host hooks).
        builtin_core: ``builtin_core(klass)`` -> the jaxecon scenario class that
            the shim class ``klass`` (of ``cls.__mro__``) stands for, or None.
    Returns:
        ``(core class, host hook names)``: the core class (a jaxecon
        scenario class, with the agent classes ``cls`` lists where they differ
        from its own), and the hooks (of ``FOUNDATION_SCENARIO_HOOKS``)
        that ``cls`` defines itself or inherits from a class below the
        nearest jaxecon scenario's class. A scenario written from scratch has
        as host hooks every hook it (or a base other than ``BaseEnvironment``)
        defines.
    """
    mro = cls.__mro__
    builtin_at, core_cls = None, None
    for depth, klass in enumerate(mro):
        found = builtin_core(klass)
        if found is not None:
            builtin_at, core_cls = depth, found
            break
    stop = builtin_at if builtin_at is not None else mro.index(base)
    hooks = []
    for name in FOUNDATION_SCENARIO_HOOKS:
        owner = next((d for d, k in enumerate(mro) if name in vars(k)), None)
        if owner is not None and owner < stop:
            hooks.append(name)
    if core_cls is None:
        core_cls = _CORES.get(cls)
        if core_cls is None:
            core_cls = _CORES[cls] = type(f"{cls.__name__}Core", (HostScenarioCore,), {
                "name": cls.name,
                "required_entities": tuple(cls.required_entities or ()),
                "agent_subclasses": tuple(cls.agent_subclasses or ()),
                "__module__": __name__,
                "__doc__": f"Core stand-in of the Foundation-style scenario {cls.name!r}.",
            })
    elif tuple(cls.agent_subclasses or ()) != tuple(core_cls.agent_subclasses):
        core_cls = _listing_core(cls, core_cls)
    return core_cls, tuple(hooks)


def _listing_core(cls, core_cls):
    """``core_cls`` with the agent classes that the shim class ``cls`` (a
    subclass of a jaxecon scenario's class) lists in its own
    ``agent_subclasses``, under ``cls.name`` (built once per class)."""
    key = (cls, core_cls)
    if key not in _CORES:
        _CORES[key] = type(f"{cls.__name__}Core", (core_cls,), {
            "name": cls.name or core_cls.name,
            "agent_subclasses": tuple(cls.agent_subclasses),
            "__module__": __name__,
            "__doc__": f"{core_cls.name!r} with the agent classes {list(cls.agent_subclasses)} of {cls.name!r}.",
        })
    return _CORES[key]
