"""Converting a live ``ai_economist`` environment's state into jaxecon.

Used by the differential tests (both implementations continue from one
identical state) and by users migrating saved Foundation environments.
"""

from jaxecon.interop.foundation_state import (
    COMPONENT_LOADERS,
    load_foundation_state,
    register_component_loader,
    state_from_foundation,
)

__all__ = ["COMPONENT_LOADERS", "load_foundation_state", "register_component_loader", "state_from_foundation"]
