"""Attributes of Foundation's scenario objects that a jaxecon scenario computes from its economy.

Foundation's scenarios keep some quantities as attributes that jaxecon does
not store (``energy_weight``, ``curr_optimization_metric`` of the
wood-and-stone scenarios, ``current_date`` of COVID-19, ...). A scenario
declares them with ``BaseEnvironment.foundation_attributes()``:
``{Foundation name: FoundationAttribute}``; the stateful shim
(``jaxecon.foundation.scenario_attributes``) serves them as ``env.<name>``
and ``env.world.<name>``, reading the economy through an :class:`EconomyView`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

__all__ = ["EconomyView", "FoundationAttribute"]


class EconomyView(Protocol):
    """One stateful environment's economy, read when a property is accessed (so a
    function that keeps the view reads the economy current at its call)."""

    @property
    def state(self) -> Any:
        """The current ``EnvState`` (leaves numpy arrays)."""

    @property
    def params(self) -> Any:
        """The current ``EnvParams``."""

    @property
    def completions(self) -> int:
        """Episodes completed (Foundation's ``_completions``)."""


@dataclass(frozen=True)
class FoundationAttribute:
    """One computed attribute of Foundation's scenario object.

    Attributes:
        get: ``get(view: EconomyView) -> value``: the attribute's value (a
            Python scalar, dict, numpy array, datetime, ...; for a method of
            Foundation's, a function that reads ``view`` when called).
        set: None for a read-only attribute (the shim raises
            ``AttributeError`` on assignment), or ``set(value) -> {field:
            new value}``: the fields of the scenario's sub-state
            (``EnvState.scenario``) that hold ``value``; the shim writes them,
            each with the field's shape and dtype (a wrong shape or a NaN/inf
            is a ``ValueError`` naming the attribute). ``set`` raises
            ``ValueError`` naming the attribute and what it accepts for a
            value of the wrong form.
    """

    get: Callable[[EconomyView], Any]
    set: Optional[Callable[[Any], dict]] = None
