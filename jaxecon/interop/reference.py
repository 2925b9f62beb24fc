"""The reference simulator, ai-economist 1.7.1, built from a Foundation env config (optional).

This is the route by which the differential tests and the throughput
benchmark (``jaxecon bench``) reach Salesforce's Foundation. It needs the
``ai-economist`` package, which is not a dependency of jaxecon: its pinned
requirements do not resolve on modern Python, so it is installed without
them, with its runtime imports beside it::

    pip install --no-deps ai-economist==1.7.1
    pip install lz4 pycryptodome GPUtil pandas

Without it every function here that needs the reference raises
``ImportError`` with that command; nothing is imported at module import.

- :func:`load_foundation` imports ``ai_economist.foundation`` under numpy 2:
  it restores the aliases ``np.int``, ``np.float``, ``np.bool`` that numpy
  1.24 removed and the reference still uses, and swallows the GPU-probe
  prints the reference emits on import.
- :func:`make_reference_env` builds a reference env from any config, the
  COVID-19 scenario (:data:`COVID_SCENARIO`) included: it is built past its
  activation-code gate, on jaxecon's copy of its data (:data:`COVID_DATA_DIR`;
  the pip package's data folder is empty).
- :func:`random_valid_actions` samples a uniformly random mask-valid action
  for every agent, planner included; :func:`flat_action_mask` flattens a
  mask like ``BaseAgent.flatten_masks``.
- :func:`reference_steps_per_second` times the reference on a config with
  random valid actions (the reference figure of ``jaxecon bench``).
- :func:`reference_market` runs Foundation's own double-auction matching on
  given order books (the matching tests, ``benchmarks/double_auction.py``).
"""

from __future__ import annotations

import contextlib
import copy
import io
import random
import sys
import time

import numpy as np

from jaxecon.scenarios.covid19 import DEFAULT_DATA_DIR

__all__ = [
    "COVID_DATA_DIR",
    "COVID_SCENARIO",
    "INSTALL_HINT",
    "flat_action_mask",
    "load_foundation",
    "make_reference_env",
    "random_valid_actions",
    "reference_market",
    "reference_steps_per_second",
]

#: How to install the reference (named in the ``ImportError`` when it is missing).
INSTALL_HINT = (
    "pip install --no-deps ai-economist==1.7.1 && pip install lz4 pycryptodome GPUtil pandas"
)

#: Foundation's COVID-19 and economy scenario (``scenarios/covid19/covid19_env.py``).
COVID_SCENARIO = "CovidAndEconomySimulation"

#: jaxecon's copy of the COVID-19 data folder (``real_world_data.npz``,
#: ``model_constants.json``, ``fitted_params.json``), which the reference reads
#: when a config leaves ``path_to_data_and_fitted_params`` empty (the pip
#: package ships its ``data_and_fitted_params/`` empty); the same folder as
#: ``jaxecon.scenarios.covid19.DEFAULT_DATA_DIR``.
COVID_DATA_DIR = DEFAULT_DATA_DIR

_FOUNDATION = None


def load_foundation():
    """Import and return ``ai_economist.foundation``.

    Sets ``np.int``, ``np.float`` and ``np.bool`` to the Python builtins if
    numpy lacks them (numpy >= 1.24 removed them; the reference uses them),
    and redirects stdout during the import to silence the reference's
    "N GPUs are available" probe prints.

    Raises:
        ImportError: if ``ai_economist`` (or one of its runtime dependencies)
            is not installed; the message names :data:`INSTALL_HINT`.
    """
    global _FOUNDATION
    if _FOUNDATION is not None:
        return _FOUNDATION
    for name, alias in (("int", int), ("float", float), ("bool", bool)):
        if name not in np.__dict__:
            setattr(np, name, alias)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            from ai_economist import foundation
    except ImportError as exc:
        raise ImportError(
            f"the reference simulator ai-economist 1.7.1 is not importable ({exc}); "
            f"install it with: {INSTALL_HINT}"
        ) from exc
    _FOUNDATION = foundation
    return foundation


def reference_market(orders, floats: dict, commodities, n_prices: int):
    """Foundation's ``ContinuousDoubleAuction.match_orders``, ready to run on given books.

    The market is a stand-in component (Foundation's method reads only the
    attributes set here) with stand-in agents holding ``floats``.

    Args:
        orders: per commodity, ``(bids, asks)`` as Foundation's lists (dicts
            ``buyer, bid, bid_lifetime`` / ``seller, ask, ask_lifetime``;
            prices in coin, lifetimes in steps); copied.
        floats: numpy arrays: ``coin``, ``esc_coin`` [n]; ``goods``,
            ``goods_esc`` [C, n] (the commodities' inventory and escrow);
            ``ph`` [C, n, P] (price histories).
        commodities: the C commodity names, in matching order.
        n_prices: P, the number of price levels.
    Returns:
        ``(match, market)``: ``match()`` runs the matching, which changes
        ``market.bids``, ``.asks``, ``.executed_trades`` (one list, this
        step's trades), ``.price_history[c][i]`` and
        ``.world.agents[i].state["inventory" / "escrow"]``.
    Raises:
        ImportError: ai-economist is not installed (the message says how).
    """
    from types import SimpleNamespace

    load_foundation()
    from ai_economist.foundation.components.continuous_double_auction import ContinuousDoubleAuction

    n = len(floats["coin"])
    agents = [SimpleNamespace(idx=i, state={
        "inventory": {"Coin": float(floats["coin"][i]),
                      **{c: float(floats["goods"][ci, i]) for ci, c in enumerate(commodities)}},
        "escrow": {"Coin": float(floats["esc_coin"][i]),
                   **{c: float(floats["goods_esc"][ci, i]) for ci, c in enumerate(commodities)}},
    }) for i in range(n)]
    market = SimpleNamespace(
        commodities=list(commodities), n_agents=n, price_floor=0, executed_trades=[],
        bids={c: copy.deepcopy(orders[ci][0]) for ci, c in enumerate(commodities)},
        asks={c: copy.deepcopy(orders[ci][1]) for ci, c in enumerate(commodities)},
        bid_hists={c: {i: np.zeros(n_prices, int) for i in range(n)} for c in commodities},
        ask_hists={c: {i: np.zeros(n_prices, int) for i in range(n)} for c in commodities},
        n_orders={c: {i: 0 for i in range(n)} for c in commodities},
        price_history={c: {i: np.array(floats["ph"][ci, i], dtype=np.float64) for i in range(n)}
                       for ci, c in enumerate(commodities)},
        world=SimpleNamespace(agents=agents),
    )
    return (lambda: ContinuousDoubleAuction.match_orders(market)), market


def make_reference_env(config: dict, seed: int | None = 1):
    """Build a reference env from a Foundation env config dict (deep-copied first).

    ``seed`` (> 0, or None to leave the global streams alone) seeds numpy's
    and Python's global RNGs, which is all the reference uses, *before*
    construction (``BaseEnvironment.seed``). The env is not reset. A config
    of :data:`COVID_SCENARIO` is built past its activation gate (see
    :func:`_make_covid_reference_env`).

    Raises:
        ValueError: ``seed`` <= 0 (``BaseEnvironment.seed`` asserts seed > 0,
            quirk Q11).
        ImportError: the reference is not installed.
    """
    foundation = load_foundation()
    if seed is not None:
        seed = int(seed)
        if seed <= 0:  # BaseEnvironment.seed asserts seed > 0 (quirk Q11)
            raise ValueError(f"seed must be > 0, got {seed}")
        np.random.seed(seed)  # == BaseEnvironment.seed(seed)
        random.seed(seed)
    cfg = copy.deepcopy(dict(config))
    if cfg.get("scenario_name") == COVID_SCENARIO:
        return _make_covid_reference_env(foundation, cfg)
    return foundation.make_env_instance(**cfg)


def _make_covid_reference_env(foundation, cfg: dict):
    """The reference COVID-19 env of ``cfg`` (modified in place), made usable here.

    Three workarounds, none of which changes the dynamics:

    - the scenario's constructor calls ``verify_activation_code()``, which
      asks for a code on stdin; it is replaced by a no-op in the reference's
      ``covid19_env`` module for the duration of the construction only;
    - an empty ``path_to_data_and_fitted_params`` (the default) becomes
      :data:`COVID_DATA_DIR`;
    - with ``use_real_world_policies``, ``world.real_world_subsidy`` (float
      ``[episode_length, 1]``) is reshaped to ``[episode_length]``:
      ``FederalGovernmentSubsidy`` stores its row ``t - 1``, a shape-(1,)
      array, into a scalar slot, which numpy 2 rejects.

    The construction's prints ("Loading fit parameters ...") are swallowed.
    """
    module = sys.modules["ai_economist.foundation.scenarios.covid19.covid19_env"]
    if cfg.get("path_to_data_and_fitted_params", "") == "":
        cfg["path_to_data_and_fitted_params"] = COVID_DATA_DIR
    gate = module.verify_activation_code
    module.verify_activation_code = lambda: None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            env = foundation.make_env_instance(**cfg)
    finally:
        module.verify_activation_code = gate
    if cfg.get("use_real_world_policies"):
        env.world.real_world_subsidy = np.asarray(env.world.real_world_subsidy).reshape(-1)
    return env


# --------------------------------------------------------------------------
# Random valid actions
# --------------------------------------------------------------------------


def flat_action_mask(agent, mask) -> np.ndarray:
    """The agent's action mask as Foundation's flattened float vector.

    ``mask`` is ``obs[str(agent.idx)]["action_mask"]``: already flat (with
    ``flatten_masks=True``) or a dict ``{subspace_name: mask}`` (with
    ``flatten_masks=False``), which is flattened like
    ``BaseAgent.flatten_masks``: single-action mode ``[1] + masks...``,
    multi-action mode ``[1] + mask`` per subspace.
    """
    if not isinstance(mask, dict):
        return np.asarray(mask, dtype=np.float32).reshape(-1)
    if agent.multi_action_mode and getattr(agent, "_passive_multi_action_agent", False):
        return np.ones(1, np.float32)
    parts = [] if agent.multi_action_mode else [np.ones(1)]
    for name in agent._action_names:
        if agent.multi_action_mode:
            parts.append(np.ones(1))
        parts.append(np.asarray(mask[name], dtype=np.float64).reshape(-1))
    return np.concatenate(parts).astype(np.float32)


def _choice_nonzero(mask: np.ndarray, rng: np.random.Generator) -> int:
    valid = np.flatnonzero(mask)
    if valid.size == 0:
        raise ValueError("action mask has no valid entry")
    return int(valid[rng.integers(valid.size)])


def _agent_slice(mask, i: int):
    """Agent ``i``'s entry of a collated mask (array, or dict of arrays, agents on the last axis)."""
    if isinstance(mask, dict):
        return {k: np.asarray(v)[..., i] for k, v in mask.items()}
    return np.asarray(mask)[..., i]


def random_valid_actions(obs: dict, env, rng: np.random.Generator) -> dict:
    """A uniformly random mask-valid action for every agent, planner included.

    Args:
        obs: the last observation dict returned by ``env.reset()`` /
            ``env.step()``, keyed ``"0".."n-1", "p"``, each entry holding
            ``"action_mask"``; or, with ``collate_agent_step_and_reset_data``
            (e.g. the COVID-19 scenario), keyed ``"a"``, ``"p"``, the agents'
            masks stacked along the last axis of ``obs["a"]["action_mask"]``.
        env: the live reference environment that produced ``obs``.
        rng: a ``numpy.random.Generator`` (never the reference's global
            ``np.random`` stream, so sampling does not perturb the env).

    Returns:
        ``{str(agent.idx): action}`` for every agent in ``env.all_agents``:
        single-action mode -> ``int`` index, drawn uniformly from the nonzero
        entries of the flat mask (index 0, NO-OP, is always valid);
        multi-action mode -> ``list[int]``, one local index per subspace,
        drawn uniformly from the nonzero entries of that subspace's
        ``[1 (NO-OP), mask...]`` block (a passive planner gets ``[0]``).

    Raises:
        ValueError: a mask whose length does not match the agent's action
            space, or with no valid entry.
    """
    actions = {}
    collated = "a" in obs and "0" not in obs
    for agent in env.all_agents:
        key = str(agent.idx)
        if collated and key != "p":
            raw = _agent_slice(obs["a"]["action_mask"], int(agent.idx))
        else:
            raw = obs[key]["action_mask"]
        mask = flat_action_mask(agent, raw)
        if agent.multi_action_mode:
            dims = np.asarray(agent.action_spaces, dtype=np.int64).reshape(-1)
            if int(dims.sum()) != mask.size:
                raise ValueError(
                    f"agent {key}: mask length {mask.size} != sum of "
                    f"subspace dims {dims.tolist()}"
                )
            bounds = np.cumsum(dims)[:-1]
            actions[key] = [
                _choice_nonzero(block, rng) for block in np.split(mask, bounds)
            ]
        else:
            if mask.size != int(agent.action_spaces):
                raise ValueError(
                    f"agent {key}: mask length {mask.size} != action_spaces "
                    f"{int(agent.action_spaces)}"
                )
            actions[key] = _choice_nonzero(mask, rng)
    return actions


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------


def reference_steps_per_second(config: dict, n_steps: int = 1000, seed: int = 1) -> dict:
    """Measure the reference's speed on ``config`` with random valid actions.

    Seeds the reference's global RNGs with ``seed`` (> 0) and the action
    sampler with ``np.random.default_rng(seed)``, builds and resets the env
    (not timed), then runs ``n_steps`` steps, resetting whenever ``done``.
    Dense logging is forced off (``dense_log_frequency=None``).

    Returns a dict with
        ``env_steps_per_s``: n_steps / time spent inside ``env.step`` only;
        ``loop_steps_per_s``: n_steps / wall time of the whole loop
        (action sampling + ``env.step`` + resets after ``done``);
        ``n_steps``, ``n_resets``, ``mean_step_ms``, ``mean_reset_ms``
        (NaN when no reset happened), ``n_agents``.
    All times are ``time.perf_counter`` seconds.

    Raises:
        ValueError: ``n_steps`` < 1 or ``seed`` <= 0.
        ImportError: the reference is not installed.
    """
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    cfg = dict(config)
    cfg["dense_log_frequency"] = None
    env = make_reference_env(cfg, seed=seed)
    rng = np.random.default_rng(seed)
    obs = env.reset()

    step_time = 0.0
    reset_time = 0.0
    n_resets = 0
    clock = time.perf_counter
    loop_start = clock()
    for _ in range(n_steps):
        actions = random_valid_actions(obs, env, rng)
        t0 = clock()
        obs, _rew, done, _info = env.step(actions)
        step_time += clock() - t0
        if done["__all__"]:
            t0 = clock()
            obs = env.reset()
            reset_time += clock() - t0
            n_resets += 1
    loop_time = clock() - loop_start

    return {
        "env_steps_per_s": n_steps / step_time,
        "loop_steps_per_s": n_steps / loop_time,
        "n_steps": n_steps,
        "n_resets": n_resets,
        "mean_step_ms": 1e3 * step_time / n_steps,
        "mean_reset_ms": 1e3 * reset_time / n_resets if n_resets else float("nan"),
        "n_agents": int(cfg["n_agents"]),
    }
