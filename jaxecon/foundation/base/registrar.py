"""Foundation's ``base/registrar.py`` path: ``Registry``, jaxecon's registry class."""

from jaxecon.core.registry import Registry

__all__ = ["Registry"]
