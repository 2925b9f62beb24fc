"""What ``jaxecon run`` keeps of env 0's last episode and writes, per family of scenarios.

- gridworld scenarios (:class:`GridworldRecorder`): ``dense_log.json``, in
  Foundation's dense-log layout (``jaxecon.dense_log``), and ``world.png``,
  the final world map (``jaxecon.render``);
- ``CovidAndEconomySimulation`` (:class:`CovidRecorder`): ``series.npz``,
  the per-step global state, and its plots against the recorded data
  (``jaxecon.scenarios.covid19.plots``).

``recorder_for(env)`` picks one. Recorders read only top-level ``EnvState``
fields and ``env.step_info``/``info``, never a component's sub-state.
"""

from __future__ import annotations

import pathlib

import numpy as np

from jaxecon.cli.output import write_json
from jaxecon.dense_log import dense_log_from_slices
from jaxecon.render import render_world, save_png
from jaxecon.scenarios.covid19 import CovidAndEconomySimulation
from jaxecon.scenarios.covid19.plots import plot_covid_episode

__all__ = ["CovidRecorder", "GridworldRecorder", "RunRecorder", "recorder_for"]


class RunRecorder:
    """What ``jaxecon run`` keeps of env 0's last episode and writes, for one family of scenarios.

    ``reset_slice`` and ``step_slice`` are traced inside the jitted reset and
    step scan (env 0's unbatched arrays in, a pytree of arrays out);
    ``write`` runs on the host after the last episode with
    ``record = {"episode": int, "first": reset slice (numpy), "steps": step
    slices stacked over the T steps (numpy, leading axis T, row t-1 = timestep t)}``.
    """

    #: (column title, ``env.metrics`` key) of the printed per-episode table.
    table_columns: tuple = ()

    def policy(self, env) -> str:
        """What chooses the actions, for the run's header line."""
        return "random valid actions"

    def reset_slice(self, env, state, params):
        """Env 0's record of timestep 0 from its ``EnvState`` after reset."""
        raise NotImplementedError

    def step_slice(self, env, state, actions, reward, info, params):
        """Env 0's record of one step from ``env.step``'s outputs (unbatched)."""
        raise NotImplementedError

    def write(self, env, record: dict, out: pathlib.Path) -> list:
        """Write the record's files into ``out``; return their paths."""
        raise NotImplementedError


class GridworldRecorder(RunRecorder):
    """Gridworld scenarios (maps, locations, inventories): ``dense_log.json`` and ``world.png``.

    Slices per timestep: ``loc`` int32 [n, 2], ``inventory``/``escrow``/
    ``endogenous`` ``{name: float [n]}``, ``planner_inventory``/``planner_escrow``
    ``{name: float []}``, ``maps`` ``{name: float [H, W]}``, ``owner``
    ``{landmark: int [H, W]}``; per step also ``action_a`` (int32 [n] or
    [n, subspaces]), ``action_p``, ``reward_a`` float [n], ``reward_p`` float [].
    """

    table_columns = (
        ("productivity", "social/productivity"),
        ("equality", "social/equality"),
        ("welfare", "social_welfare/coin_eq_times_productivity"),
        ("total_builds", "Build/total_builds"),
    )

    def reset_slice(self, env, state, params):
        return {
            "loc": state.loc,
            "inventory": state.inventory,
            "escrow": state.escrow,
            "endogenous": state.endogenous,
            "planner_inventory": state.planner_inventory,
            "planner_escrow": state.planner_escrow,
            "maps": state.maps,
            "owner": state.owner,
        }

    def step_slice(self, env, state, actions, reward, info, params):
        return {
            **self.reset_slice(env, state, params),
            "action_a": actions["a"],
            "action_p": actions["p"],
            "reward_a": reward["a"],
            "reward_p": reward["p"],
        }

    def write(self, env, record, out):
        steps = record["steps"]
        dense_log = dense_log_from_slices(
            env, record["first"], steps, record["episode"], env.world_dense_log_frequency
        )
        write_json(out / "dense_log.json", dense_log)
        house = steps["owner"].get("House")
        rgb = render_world(
            {k: v[-1] for k, v in steps["maps"].items()},
            owner=None if house is None else house[-1],
            loc=steps["loc"][-1],
        )
        save_png(rgb, out / "world.png")
        return [out / "dense_log.json", out / "world.png"]


class CovidRecorder(RunRecorder):
    """``CovidAndEconomySimulation``: the global-state series of env 0 and their plots.

    Slices per timestep: the scenario's ``step_info``, Foundation's
    ``world.global_state`` row t: ``{"Susceptible", "Infected", "Recovered",
    "Deaths", "Vaccinated", "Unemployed" (people), "Stringency Level" (1..10),
    "Subsidy" (US$ per day), "Postsubsidy Productivity" (US$ per day): float [n]}``.
    ``write`` stores them as ``series.npz`` (each float64 [T + 1, n], rows =
    timesteps 0..T) and plots infections, deaths, unemployment and subsidies
    against the recorded data (``plot_covid_episode``: ``infected.png``,
    ``deaths.png``, ``unemployment.png``, ``subsidies.png``).
    """

    table_columns = (
        ("deaths (k)", "usa/deaths (thousands)"),
        ("unemployment %", "usa/mean_unemployment_rate (%)"),
        ("subsidies T$", "usa/total_amount_subsidized (trillion $)"),
        ("productivity T$", "usa/total_productivity (trillion $)"),
    )

    def policy(self, env) -> str:
        if env.use_real_world_policies:
            return "the recorded real-world policies (the random actions are ignored)"
        return "random valid actions"

    def reset_slice(self, env, state, params):
        return env.step_info(state, params)

    def step_slice(self, env, state, actions, reward, info, params):
        return info

    def write(self, env, record, out):
        first, steps = record["first"], record["steps"]
        series = {
            k: np.concatenate([np.asarray(first[k], np.float64)[None], np.asarray(v, np.float64)])
            for k, v in steps.items()
        }
        np.savez(out / "series.npz", **series)
        plots = plot_covid_episode(
            series, env.data, str(out),
            start_date=env.start_date.strftime(env.date_format), first_timestep=0,
        )
        return [out / "series.npz"] + [pathlib.Path(p) for p in plots]


def recorder_for(env) -> RunRecorder:
    """The :class:`RunRecorder` of ``env``'s scenario: ``CovidRecorder`` for
    ``CovidAndEconomySimulation`` (and subclasses), else ``GridworldRecorder``."""
    if isinstance(env, CovidAndEconomySimulation):
        return CovidRecorder()
    return GridworldRecorder()
