"""Foundation's ``scenarios/utils/social_metrics.py`` path: jaxecon's social metrics
(``jaxecon.social_metrics``; same names and arguments, JAX arrays in and out)."""

from jaxecon.social_metrics import get_equality, get_gini, get_productivity

__all__ = ["get_gini", "get_equality", "get_productivity"]
