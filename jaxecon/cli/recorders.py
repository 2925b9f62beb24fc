"""What ``jaxecon run`` keeps of env 0's last episode and writes, per family of scenarios.

- gridworld scenarios (:class:`GridworldRecorder`): ``dense_log.json``, in
  Foundation's dense-log layout (``jaxecon.dense_log``) with the components'
  logs; ``replay.html``, the episode's interactive replay
  (``jaxecon.plotting.replay``); ``world.png``, the final world with a title and a legend
  (``jaxecon.render``); the dense-log plots (``jaxecon.plotting``:
  ``world_over_time.png``, ``agents.png``, ``trades.png``, ``taxes.png``,
  those the economy's components allow); and ``episode.mp4``, the episode's
  video (``jaxecon.video``; unless ``video=False``);
- ``CovidAndEconomySimulation`` (:class:`CovidRecorder`): ``series.npz``,
  the per-step global state, and its plots against the recorded data
  (``jaxecon.scenarios.covid19.plots``).

``RECORDERS`` names them; a scenario class names its own (its
``run_recorder``, ``"gridworld"`` unless it says otherwise) and
``recorder_for(env)`` builds that one. Recorders read only top-level
``EnvState`` fields and ``env.step_info``/``info``; the components' own
``dense_log_entry`` reads their sub-states.
"""

from __future__ import annotations

import pathlib

import jax
import numpy as np

from jaxecon.cli.output import write_json
from jaxecon.core.groups import MOBILE_GROUP, PLANNER_GROUP
from jaxecon.dense_log import component_log_entries, dense_log_from_slices, tolist
from jaxecon.plotting import replay, save_plots
from jaxecon.render import render_world_annotated, save_png
from jaxecon.scenarios.covid19.plots import plot_covid_episode
from jaxecon.video import write_world_video

__all__ = ["RECORDERS", "CovidRecorder", "GridworldRecorder", "RunRecorder", "recorder_for"]


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

    @classmethod
    def for_run(cls, video: bool) -> "RunRecorder":
        """The recorder ``jaxecon run`` uses; ``video``: whether a video may be
        written (not ``--no-video``). Default: ``cls()``, for recorders that write none."""
        return cls()

    def policy(self, env) -> str:
        """What chooses the actions, for the run's header line."""
        return "random valid actions"

    def reset_slice(self, env, state, params):
        """Env 0's record of timestep 0 from its ``EnvState`` after reset."""
        raise NotImplementedError

    def step_slice(self, env, state, actions, reward, info, params):
        """Env 0's record of one step from ``env.step``'s outputs (unbatched), its
        actions and reward in Foundation's joint layout, the dense log's:
        ``actions = {"a": int32 [n(, subspaces)], "p": int32 [...]}``
        (``GroupCodec.joint_actions``), ``reward = {"a": float [n], "p": float []}``
        (``GroupCodec.joint_rewards``)."""
        raise NotImplementedError

    def write(self, env, record: dict, out: pathlib.Path) -> list:
        """Write the record's files into ``out``; return their paths."""
        raise NotImplementedError


class GridworldRecorder(RunRecorder):
    """Gridworld scenarios (maps, locations, inventories): the dense log, its pictures and a video.

    Slices: ``state``, env 0's whole ``EnvState`` (after reset; after each
    step), and per step ``action_a`` (int32 [n] or [n, subspaces]),
    ``action_p``, ``reward_a`` float [n], ``reward_p`` float []. ``write``
    makes Foundation's dense log of them (``jaxecon.dense_log``; world
    snapshots every ``world_dense_log_frequency`` steps, the components'
    ``dense_log_entry`` of every step under their shorthands) and writes
    ``dense_log.json``, ``replay.html`` (its interactive replay,
    ``jaxecon.plotting.replay``), ``world.png`` (the last timestep,
    ``jaxecon.render.render_world_annotated``), the plots of
    ``jaxecon.plotting.save_plots`` and, with ``video``, ``episode.mp4``:
    every step's world when the episode has at most ``max_video_frames``
    timesteps, else every k-th (k = ceil((T + 1) / max_video_frames)) and
    the last, at ``video_fps`` frames per second, ``video_scale`` pixels per
    cell.

    Args:
        video: write the video.
        max_video_frames, video_fps, video_scale: see above (ints >= 1).
    Raises:
        ValueError: a bad ``max_video_frames``, ``video_fps`` or ``video_scale``.
    """

    table_columns = (
        ("productivity", "social/productivity"),
        ("equality", "social/equality"),
        ("welfare", "social_welfare/coin_eq_times_productivity"),
        ("total_builds", "Build/total_builds"),
    )

    def __init__(self, video: bool = True, max_video_frames: int = 200, video_fps: int = 20,
                 video_scale: int = 12):
        for name, v in (("max_video_frames", max_video_frames), ("video_fps", video_fps),
                        ("video_scale", video_scale)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        self.video = bool(video)
        self.max_video_frames, self.video_fps, self.video_scale = max_video_frames, video_fps, video_scale

    @classmethod
    def for_run(cls, video: bool) -> "GridworldRecorder":
        """``GridworldRecorder(video=video)``."""
        return cls(video=video)

    def reset_slice(self, env, state, params):
        return {"state": state}

    def step_slice(self, env, state, actions, reward, info, params):
        # the dense log's joint actions and rewards, keyed by Foundation's "a"/"p" (the edge:
        # GroupCodec.joint_actions / joint_rewards, as jaxecon.cli.simulate hands them over)
        return {
            "state": state,
            "action_a": actions[MOBILE_GROUP],
            "action_p": actions[PLANNER_GROUP],
            "reward_a": reward[MOBILE_GROUP],
            "reward_p": reward[PLANNER_GROUP],
        }

    def dense_log(self, env, record) -> dict:
        """Foundation's dense log of the record (``jaxecon.dense_log``), with the components' logs.

        Returns:
            ``dense_log_from_slices``'s dict plus, per component that logs,
            ``{shorthand: [entry of step 1, ..., entry of step T]}``;
            ``"agent_skills"``: the per-agent fields the components add to
            Foundation's ``agent.state``, at reset (``{"build_skill": [n],
            "build_payment": [n], "bonus_gather_prob": [n], ...}``; the states
            keep Foundation's core four fields); and
            for an economy with declared agent groups (``mobile_agent_groups``)
            ``"agent_groups"``: ``{group name: [agent indices]}``.
        """
        first, steps = record["first"]["state"], record["steps"]["state"]
        log = dense_log_from_slices(env, _core_fields(first), {**_core_fields(steps), **{
            k: record["steps"][k] for k in ("action_a", "action_p", "reward_a", "reward_p")}},
            record["episode"], env.world_dense_log_frequency)
        T = log["episode_length"]
        comp_logs = {}
        prev = first
        for t in range(T):
            state = jax.tree.map(lambda x, t=t: x[t], steps)
            for name, entry in component_log_entries(env.components, prev, state).items():
                comp_logs.setdefault(name, []).append(entry)
            prev = state
        log.update({k: v for k, v in comp_logs.items() if len(v) == T})
        skills = {}  # Foundation's per-agent fields of the components at reset (skills: fixed for the episode)
        for comp in env.components:
            fields = getattr(comp, "agent_state_fields", None)
            skills.update({k: tolist(v) for k, v in (fields(first) if fields else {}).items()})
        if skills:
            log["agent_skills"] = skills
        groups = tuple(env.mobile_groups)
        if [g.name for g in groups] != [MOBILE_GROUP]:  # declared groups: their names, for the replay page
            log["agent_groups"] = {g.name: list(range(g.start, g.stop)) for g in groups}
        return log

    def write(self, env, record, out):
        log = self.dense_log(env, record)
        write_json(out / "dense_log.json", log)
        replay(log).save(out / "replay.html")  # the episode to scrub through, in a browser
        written = [out / "dense_log.json", out / "replay.html"]
        steps = record["steps"]["state"]
        T, episode = log["episode_length"], record["episode"]
        rgb = render_world_annotated(
            {k: v[-1] for k, v in steps.maps.items()},
            owner=steps.owner["House"][-1] if "House" in steps.owner else None,
            loc=steps.loc[-1], timestep=T, env_index=0, episode=episode, episode_length=T,
        )
        save_png(rgb, out / "world.png")
        written.append(out / "world.png")
        written += [pathlib.Path(p) for p in save_plots(log, out)]
        if self.video:
            written.append(pathlib.Path(self._write_video(record, out / "episode.mp4", T, episode)))
        return written

    def _write_video(self, record, path, T, episode):
        """``episode.mp4`` from the per-step states (timesteps 0..T, subsampled)."""
        first, steps = record["first"]["state"], record["steps"]["state"]
        every = -(-(T + 1) // self.max_video_frames)
        ts = list(range(0, T + 1, every))
        if ts[-1] != T:
            ts.append(T)

        def frames(tree):  # timesteps ts of (first, steps) as one [F, ...] array
            return np.stack([np.asarray(tree[0]) if t == 0 else np.asarray(tree[1][t - 1]) for t in ts])

        maps = {k: frames((first.maps[k], steps.maps[k])) for k in steps.maps}
        owner = frames((first.owner["House"], steps.owner["House"])) if "House" in steps.owner else None
        return write_world_video(path, maps, owner, frames((first.loc, steps.loc)), timesteps=ts,
                                 env_index=0, episode=episode, episode_length=T, fps=self.video_fps,
                                 scale=self.video_scale)


def _core_fields(state) -> dict:
    """The ``EnvState`` fields ``dense_log_from_slices`` reads (leading time axis or not)."""
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
        return env.scenario.step_info(state, params)

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


#: ``run_recorder`` name of a scenario class -> its :class:`RunRecorder`.
RECORDERS: dict = {"gridworld": GridworldRecorder, "covid19": CovidRecorder}


def recorder_for(env, video: bool = True) -> RunRecorder:
    """The :class:`RunRecorder` that ``env``'s scenario class names (its ``run_recorder``).

    Args:
        env: a jaxecon economy (``jaxecon.core.env.Economy``).
        video: whether the recorder may write a video (``episode.mp4``).
    Raises:
        ValueError: the scenario's ``run_recorder`` is not a key of ``RECORDERS``.
    """
    name = type(env.scenario).run_recorder
    if name not in RECORDERS:
        raise ValueError(f"scenario {env.name!r} has run_recorder {name!r}; "
                         f"run_recorder must be one of {list(RECORDERS)}")
    return RECORDERS[name].for_run(video)
