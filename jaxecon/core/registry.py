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

The core imports nothing above it, so what fills the registries and the
checks that need the layers above come from outside, installed by
``jaxecon.registries`` when ``import jaxecon`` runs (which Python does before
any ``jaxecon.core`` import):

- the built-in loader (``install_builtin_loader``): the first read of any
  registry (``get``, ``has``, ``entries``, ``classes``, ``in``) or ``add``
  calls it once (``load_builtins``); it imports ``jaxecon.components``,
  ``jaxecon.entities`` and ``jaxecon.scenarios``, whose modules register
  jaxecon's building blocks. So ``import jaxecon`` stays cheap, and no import
  order can leave a registry without them;
- extra checks (``Registry.add_check``), run after the registry's own
  ``validate``: the Foundation-facing hooks of a jaxecon component or scenario
  must be declared with their mixin
  (``jaxecon.interop.foundation_hooks.check_declared``).

This module imports nothing but the standard library, so ``import jaxecon``
can install them without loading JAX.
"""

from __future__ import annotations

from typing import Callable, Generic, TypeVar

T = TypeVar("T")

_builtin_loader: Callable[[], None] | None = None
_builtins = "unloaded"  # -> "loading" -> "loaded"


def install_builtin_loader(loader: Callable[[], None]) -> None:
    """Make ``loader`` (no arguments; it registers jaxecon's own entries, e.g. by
    importing their modules) what ``load_builtins`` runs. ``jaxecon.registries``
    installs jaxecon's when ``jaxecon`` is imported. A loader installed after the
    built-ins were loaded is not run."""
    global _builtin_loader
    _builtin_loader = loader


def load_builtins() -> None:
    """Run the installed built-in loader once per process, registering jaxecon's own entries.

    Called by every registry read and ``add``; a read made while the loader
    runs (a module registering itself) sees what is registered so far. A
    loader that fails is retried on the next read; with no loader installed
    there is nothing to load (and a loader installed later still runs).
    Raises what the loader raises.
    """
    global _builtins
    if _builtins != "unloaded" or _builtin_loader is None:
        return
    _builtins = "loading"
    try:
        _builtin_loader()
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

    Checks from the layers above the core are added with ``add_check``; ``add``
    runs them, in the order added, after ``validate``.

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
        self.checks: list[Callable[[type], None]] = []
        self._lookup: dict[str, type] = {}

    def add_check(self, check: Callable[[type], None]) -> None:
        """Also run ``check(cls)`` on every class ``add`` accepts, after
        ``validate`` (once: a check added again is not run twice). ``check``
        raises ``TypeError`` saying what the class lacks."""
        if check not in self.checks:
            self.checks.append(check)

    def add(self, cls: type) -> type:
        """Register ``cls`` under ``cls.name``, replacing any class registered
        under that name (case-insensitive), as Foundation's ``Registry.add``.

        Raises:
            ValueError: if ``cls.name`` is missing/empty or contains '.'.
            TypeError: if ``cls`` is not a class, or fails the registry's
                ``validate`` check or one of its ``checks`` (the message names
                what it lacks).
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
        for check in self.checks:
            check(cls)
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
    (The scenario registry's extra check, installed by ``jaxecon.registries``,
    then refuses a Foundation-facing hook defined without its mixin.)

    Raises:
        TypeError: ``cls`` is not a jaxecon scenario class (the message
            points Foundation-style (numpy) scenarios to
            ``jaxecon.foundation.scenarios.add``).
    """
    if getattr(cls, "jaxecon_scenario", False) is True:
        return
    raise TypeError(
        f"scenario class {cls.__name__!r} is not a jaxecon scenario (a subclass of "
        "jaxecon.core.scenario.Scenario); a Foundation-style scenario subclasses "
        "jaxecon.foundation.base.base_env.BaseEnvironment and registers with "
        "jaxecon.foundation.scenarios.add (it runs in the stateful shim only)"
    )


def _validate_component_class(cls) -> None:
    """``jaxecon.core.component.validate_component_class``, imported at the
    first registration (it needs flax; this module imports no JAX)."""
    from jaxecon.core.component import validate_component_class

    validate_component_class(cls)


scenario_registry: Registry = Registry("scenario", validate_scenario_class)
component_registry: Registry = Registry("component", _validate_component_class)
agent_registry: Registry = Registry("agent")
resource_registry: Registry = Registry("resource")
landmark_registry: Registry = Registry("landmark")
endogenous_registry: Registry = Registry("endogenous")
