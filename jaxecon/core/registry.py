"""Registries of building blocks, keyed by Foundation's names.

Follows ``ai_economist/foundation/base/registrar.py``: one registry per kind of
building block (scenarios, components, agents, resources, landmarks,
endogenous), names are case-insensitive for lookup, unique, and may not
contain ``"."`` (the '.' separates component and sub-action names in action
subspace names such as ``ContinuousDoubleAuction.Buy_Stone``).
"""

from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(Generic[T]):
    """A name -> class table with a decorator to add entries.

    Args:
        kind: what the registry holds ("scenario", "component", ...); used in
            error messages only.

    ``@registry.add`` registers a class under its ``name`` attribute.
    ``registry.get(name)`` returns it (case-insensitive) and raises ``KeyError``
    listing the known names otherwise. ``registry.has(name)`` tests presence,
    ``registry.entries`` is the sorted list of names.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._lookup: dict[str, type] = {}

    def add(self, cls: type) -> type:
        """Register ``cls`` under ``cls.name``.

        Raises:
            ValueError: if ``cls.name`` is missing/empty, contains '.', or is
                already registered to a different class.
        """
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name:
            raise ValueError(f"{self.kind} class {cls!r} needs a non-empty string `name`")
        if "." in name:
            raise ValueError(f"{self.kind} name {name!r} may not contain '.'")
        key = name.lower()
        existing = self._lookup.get(key)
        if existing is not None and existing is not cls:
            raise ValueError(
                f"{self.kind} name {name!r} is already registered to {existing!r}"
            )
        self._lookup[key] = cls
        return cls

    def get(self, name: str) -> type:
        """The class registered as ``name`` (case-insensitive).

        Raises:
            KeyError: if no such entry; the message lists the known names.
        """
        try:
            return self._lookup[str(name).lower()]
        except KeyError:
            raise KeyError(
                f"unknown {self.kind} {name!r}; known {self.kind}s: {self.entries}"
            ) from None

    def has(self, name: str) -> bool:
        """Whether ``name`` is registered (case-insensitive)."""
        return str(name).lower() in self._lookup

    @property
    def entries(self) -> list[str]:
        """Sorted registered names (original capitalisation)."""
        return sorted(cls.name for cls in self._lookup.values())

    def __contains__(self, name: str) -> bool:
        return self.has(name)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.entries})"


scenario_registry: Registry = Registry("scenario")
component_registry: Registry = Registry("component")
agent_registry: Registry = Registry("agent")
resource_registry: Registry = Registry("resource")
landmark_registry: Registry = Registry("landmark")
endogenous_registry: Registry = Registry("endogenous")
