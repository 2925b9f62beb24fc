"""Per-agent metrics as arrays, and Foundation's per-agent metric keys from them.

Foundation's ``env.metrics`` holds one key per mobile agent and quantity
(``"Build/0/n_builds"``, ``"endow/3/Coin"``, ...;
``ai_economist/foundation/base/base_env.py``, ``metrics``). Built inside a
traced function, one scalar per agent makes the program grow with the number
of agents. So a component or scenario returns a per-agent quantity once, as
an array with a trailing agent axis ``[..., n]``, under a *template* key that
holds ``AGENT_INDEX`` where Foundation writes the agent's index
(``"{i}/n_builds"``); ``expand`` writes Foundation's keys from the
templates, inside a trace (the boundary: ``BaseEnvironment.metrics``) or on
the host with numpy (the shim, ``jaxecon run``).

Order: a run of consecutive template keys expands agent-major (agent 0's
entries of every template of the run, then agent 1's, ...), which is the
order of Foundation's nested loops; other keys keep their place.
"""

from __future__ import annotations

__all__ = ["AGENT_INDEX", "expand", "locate"]

#: The placeholder of a mobile agent's index in a template key.
AGENT_INDEX = "{i}"


def locate(keys, n_agents: int) -> dict:
    """``{Foundation key: (key of keys, agent index or None)}`` in Foundation's order.

    Args:
        keys: metric keys in order, some of them templates (holding ``AGENT_INDEX``).
        n_agents: number of mobile agents.
    """
    out, run = {}, []

    def flush():
        for i in range(n_agents):
            for t in run:
                out[t.replace(AGENT_INDEX, str(i))] = (t, i)
        run.clear()

    for k in keys:
        if AGENT_INDEX in k:
            run.append(k)
            continue
        flush()
        out[k] = (k, None)
    flush()
    return out


def expand(metrics: dict, n_agents: int) -> dict:
    """Foundation's metrics dict from one with template keys.

    Args:
        metrics: ``{key: value}``; a template key's value has a trailing agent
            axis ``[..., n_agents]`` (jax or numpy arrays; a leading batch axis
            is kept).
        n_agents: number of mobile agents.
    Returns:
        ``{key: value}`` with each template replaced by ``n_agents`` keys, the
        value ``metrics[template][..., i]``.
    """
    return {k: metrics[src] if i is None else metrics[src][..., i]
            for k, (src, i) in locate(list(metrics), n_agents).items()}
