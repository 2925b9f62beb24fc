"""End-to-end jitted PPO for the AI Economist's agents and planner (see docs/training.md)."""
