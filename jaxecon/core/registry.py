"""Registries of building blocks, keyed by Foundation's names.

Follows ``ai_economist/foundation/base/registrar.py``: one registry per kind of
building block (scenarios, components, agents, resources, landmarks,
endogenous), names are case-insensitive for lookup, unique, and may not
contain ``"."`` (the '.' separates component and sub-action names in action
subspace names such as ``ContinuousDoubleAuction.Buy_Stone``). As in
Foundation, registering a name again replaces the entry (a notebook cell run
twice, a class redefined). A registry may check what it accepts: the
component registry takes jaxecon components and Foundation-style ones
(``jaxecon.core.component.validate_component_class``), the scenario registry
jaxecon scenarios (``validate_scenario_class``); a class that
is neither is a ``TypeError`` at registration, naming what it lacks.

The registries fill themselves: the first read of any of them (``get``,
``has``, ``entries``, ``classes``, ``in``) imports ``jaxecon.components``,
``jaxecon.entities`` and ``jaxecon.scenarios``, whose modules register
jaxecon's building blocks (``load_builtins``). So ``import jaxecon`` stays
cheap, and no import order can leave a registry without them.
"""

from __future__ import annotations

import importlib
from typing import Callable, Generic, TypeVar

from jaxecon.core.component import validate_component_class

T = TypeVar("T")

#: The packages whose import registers jaxecon's components, entities and scenarios.
BUILTIN_PACKAGES = ("jaxecon.components", "jaxecon.entities", "jaxecon.scenarios")
_builtins = "unloaded"  # -> "loading" -> "loaded"


def load_builtins() -> None:
    """Import ``BUILTIN_PACKAGES`` once per process, registering jaxecon's own entries.

    Called by every registry read; a read made while they are being imported
    (a module registering itself) sees what is registered so far. An import
    that fails is retried on the next read. Raises what the import raises.
    """
    global _builtins
    if _builtins != "unloaded":
        return
    _builtins = "loading"
    try:
        for package in BUILTIN_PACKAGES:
            importlib.import_module(package)
    except BaseException:
        _builtins = "unloaded"
        raise
    _builtins = "loaded"


class Registry(Generic[T]):
    """A name -> class table with a decorator to add entries.

    Args:
        kind: what the registry holds ("scenario", "component", ...); used in
            error messages only.
        validate: optional check of a class being added; raises ``TypeError``
            saying what the class lacks.

    ``@registry.add`` registers a class under its ``name`` attribute (again:
    the new class replaces the old one, as in Foundation).
    ``registry.get(name)`` returns it (case-insensitive) and raises ``KeyError``
    listing the known names otherwise. ``registry.has(name)`` tests presence,
    ``registry.entries`` is the sorted list of names, ``registry.classes()``
    the classes in registration order.
    """

    def __init__(self, kind: str, validate: Callable[[type], None] | None = None):
        self.kind = kind
        self.validate = validate
        self._lookup: dict[str, type] = {}

    def add(self, cls: type) -> type:
        """Register ``cls`` under ``cls.name``, replacing any class registered
        under that name (case-insensitive), as Foundation's ``Registry.add``.

        Raises:
            ValueError: if ``cls.name`` is missing/empty or contains '.'.
            TypeError: if ``cls`` is not a class, or fails the registry's
                ``validate`` check (the message names what it lacks).
        """
        load_builtins()  # a user's entry replaces a built-in one, not the reverse
        if not isinstance(cls, type):
            raise TypeError(f"{self.kind} registry takes classes, got {cls!r}")
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} class {cls!r} needs a non-empty string `name`")
        if "." in name:
            raise ValueError(f"{self.kind} name {name!r} may not contain '.'")
        if self.validate is not None:
            self.validate(cls)
        self._lookup[name.lower()] = cls
        return cls

    def get(self, name: str) -> type:
        """The class registered as ``name`` (case-insensitive).

        Raises:
            KeyError: if no such entry; the message lists the known names.
        """
        load_builtins()
        try:
            return self._lookup[str(name).lower()]
        except KeyError:
            raise KeyError(
                f"unknown {self.kind} {name!r}; known {self.kind}s: {self.entries}"
            ) from None

    def has(self, name: str) -> bool:
        """Whether ``name`` is registered (case-insensitive)."""
        load_builtins()
        return str(name).lower() in self._lookup

    @property
    def entries(self) -> list[str]:
        """Sorted registered names (original capitalisation)."""
        load_builtins()
        return sorted(cls.name for cls in self._lookup.values())

    def classes(self) -> list[type]:
        """The registered classes, in the order their names were first registered
        (a class registered again under a name takes that name's place)."""
        load_builtins()
        return list(self._lookup.values())

    def __contains__(self, name: str) -> bool:
        return self.has(name)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.entries})"


def validate_scenario_class(cls) -> None:
    """Check that ``cls`` can be registered as a jaxecon scenario: a subclass of
    ``jaxecon.core.scenario.Scenario``, which declares ``jaxecon_scenario``.

    Raises:
        TypeError: ``cls`` is not a jaxecon scenario class (the message
            points Foundation-style (numpy) scenarios to
            ``jaxecon.foundation.scenarios.add``), or defines a Foundation-facing
            hook without its mixin (``jaxecon.interop.foundation_hooks.check_declared``).
    """
    if getattr(cls, "jaxecon_scenario", False) is True:
        from jaxecon.interop.foundation_hooks import check_declared  # host-side hooks: above core

        check_declared(cls)
        return
    raise TypeError(
        f"scenario class {cls.__name__!r} is not a jaxecon scenario (a subclass of "
        "jaxecon.core.scenario.Scenario); a Foundation-style scenario subclasses "
        "jaxecon.foundation.base.base_env.BaseEnvironment and registers with "
        "jaxecon.foundation.scenarios.add (it runs in the stateful shim only)"
    )


scenario_registry: Registry = Registry("scenario", validate_scenario_class)
component_registry: Registry = Registry("component", validate_component_class)
agent_registry: Registry = Registry("agent")
resource_registry: Registry = Registry("resource")
landmark_registry: Registry = Registry("landmark")
endogenous_registry: Registry = Registry("endogenous")
