"""Foundation's ``scenarios/utils`` package: ``rewards`` and ``social_metrics``."""

from jaxecon.foundation.scenarios.utils import rewards, social_metrics

__all__ = ["rewards", "social_metrics"]
