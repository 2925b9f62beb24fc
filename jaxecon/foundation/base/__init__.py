"""Foundation's ``foundation/base`` package path.

``base_env`` (``BaseEnvironment``, ``scenario_registry``) and
``base_component`` (``BaseComponent``, ``component_registry``) are the bases
of scenarios and components written against Foundation's API, as in
``ai_economist/foundation/base/``; the other modules of Foundation's layout
(``base_agent``, ``world``, ``registrar``) re-export the shim's views and
jaxecon's registries.
"""
