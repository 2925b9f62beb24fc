"""The benchmark's throughput plot: env-steps/s against batch size, log-log.

Drawn from the dict ``jaxecon.bench.suite.run_benchmark`` returns (what
``jaxecon bench`` writes as JSON); ``jaxecon.bench.report`` re-exports it
beside the printed table. Built without ``pyplot``, as every plot of
``jaxecon.plotting`` (:mod:`jaxecon.plotting.style`).
"""

from __future__ import annotations

from jaxecon.plotting.style import new_figure, save_figure, style

__all__ = ["plot_throughput"]


def plot_throughput(result: dict, path) -> str:
    """Write a log-log plot of env-steps/s against batch size (one line per
    economy, its reference as a dashed line of the same colour) to ``path``;
    returns ``str(path)``.

    Args:
        result: ``run_benchmark``'s dict (``economies``, ``results``: the
            ``"scan+vmap"`` rows are drawn, ``reference``, ``system``).
        path: the image to write (format from the suffix; its directory must exist).
    """
    with style():
        fig, axes = new_figure(1, 1, panel_size=(7, 4.5), dpi=120)
        ax = axes[0, 0]
        for i, (name, info) in enumerate(result["economies"].items()):
            rows = [r for r in result["results"] if r["economy"] == name and r["mode"] == "scan+vmap"]
            if not rows:
                continue
            colour = f"C{i}"
            ax.plot([r["batch"] for r in rows], [r["env_steps_per_s"] for r in rows], "o-",
                    color=colour, label=f"{name} ({info['n_agents']} agents)")
            ref = result["reference"].get(name, {}).get("env_steps_per_s")
            if ref:
                ax.axhline(ref, color=colour, ls="--", lw=1, label=f"{name}: ai-economist")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("parallel envs (batch size)")
        ax.set_ylabel("env-steps/s")
        s = result["system"]
        ax.set_title(f"jaxecon throughput on {s['device']} ({s['cpu_count']} CPUs)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        return save_figure(fig, path)
