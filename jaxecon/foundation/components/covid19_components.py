"""Foundation's ``components/covid19_components.py`` path: ``ControlUSStateOpenCloseStatus``,
``FederalGovernmentSubsidy`` and ``VaccinationCampaign``."""

from jaxecon.components import (
    ControlUSStateOpenCloseStatus,
    FederalGovernmentSubsidy,
    VaccinationCampaign,
)
from jaxecon.core.registry import component_registry

__all__ = [
    "ControlUSStateOpenCloseStatus", "FederalGovernmentSubsidy", "VaccinationCampaign",
    "component_registry",
]
