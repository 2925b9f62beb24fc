"""Converting a live ``ai_economist`` environment's state into jaxecon.

Used by the differential tests (both implementations continue from one
identical state) and by users migrating saved Foundation environments. The
env-level orchestration is here; each component reads its own internals in its
``load_foundation_state`` method, and the scenario in its own.
"""

from jaxecon.interop.foundation_state import load_foundation_state, state_from_foundation

__all__ = ["load_foundation_state", "state_from_foundation"]
