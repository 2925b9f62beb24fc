"""Host-side interfaces of jaxecon's economies for other RL libraries (optional extras)."""
