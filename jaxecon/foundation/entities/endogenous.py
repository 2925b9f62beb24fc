"""Foundation's ``entities/endogenous.py`` path: ``Endogenous`` and ``Labor``."""

from jaxecon.core.registry import Registry, endogenous_registry
from jaxecon.entities import Endogenous, Labor

__all__ = ["Endogenous", "Labor", "Registry", "endogenous_registry"]
