"""Foundation's ``scenarios/covid19`` package: ``covid19_env``."""

from jaxecon.foundation.scenarios.covid19 import covid19_env

__all__ = ["covid19_env"]
