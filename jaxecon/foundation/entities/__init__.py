"""Foundation's ``entities`` package: resources, landmarks, endogenous quantities.

The classes are jaxecon's (``jaxecon.entities``) and the registries are the
core registries, so an entity added here is seen by ``jaxecon.make`` too.
"""

from jaxecon.foundation.entities.endogenous import endogenous_registry
from jaxecon.foundation.entities.landmarks import landmark_registry
from jaxecon.foundation.entities.resources import resource_registry

__all__ = ["endogenous_registry", "landmark_registry", "resource_registry"]
