"""What fills jaxecon's registries, installed from above the core.

The registries live in ``jaxecon.core.registry``, and the core imports
nothing above it. What they need from the layers above is installed here,
when ``import jaxecon`` imports this module (Python imports the package
``jaxecon`` before any of its submodules, so no import order reaches a
registry before this ran):

- the built-in loader, ``load_builtins``: the first read of any registry
  runs it once; it imports ``jaxecon.components``, ``jaxecon.entities`` and
  ``jaxecon.scenarios``, whose modules register jaxecon's components,
  entities and scenarios;
- the Foundation-facing checks, ``check_component`` and ``check_scenario``:
  a jaxecon component or scenario that defines a Foundation-facing hook
  without its mixin is refused at registration
  (``jaxecon.interop.foundation_hooks.check_declared``).

Importing this module is cheap (no JAX): everything above the core is
imported when a registry is first read or added to.
"""

from __future__ import annotations

from jaxecon.core import registry as _registry

__all__ = ["check_component", "check_scenario", "install", "load_builtins"]


def load_builtins() -> None:
    """Import the packages whose modules register jaxecon's components,
    entities and scenarios. Raises what the imports raise."""
    import jaxecon.components  # noqa: F401
    import jaxecon.entities  # noqa: F401
    import jaxecon.scenarios  # noqa: F401


def check_component(cls: type) -> None:
    """The component registry's extra check: a jaxecon component (a subclass of
    ``jaxecon.core.component.Component``) declares its Foundation-facing hooks
    with ``FoundationComponentHooks``; a Foundation-style component passes.

    Raises:
        TypeError: from ``jaxecon.interop.foundation_hooks.check_declared``,
            naming the class, the hooks and the mixin to add.
    """
    from jaxecon.core.component import Component
    from jaxecon.interop.foundation_hooks import check_declared

    if issubclass(cls, Component):
        check_declared(cls)


def check_scenario(cls: type) -> None:
    """The scenario registry's extra check: a jaxecon scenario declares its
    Foundation-facing hooks with ``FoundationScenarioHooks``.

    Raises:
        TypeError: from ``jaxecon.interop.foundation_hooks.check_declared``.
    """
    from jaxecon.interop.foundation_hooks import check_declared

    check_declared(cls)


def install() -> None:
    """Install the loader and the checks into ``jaxecon.core.registry``'s
    registries (again: nothing changes). Run when this module is imported."""
    _registry.install_builtin_loader(load_builtins)
    _registry.component_registry.add_check(check_component)
    _registry.scenario_registry.add_check(check_scenario)


install()
