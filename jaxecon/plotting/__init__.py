"""Plots of one episode from its dense log, in the spirit of Foundation's tutorial plots.

Foundation's tutorials (``tutorials/utils/plotting.py``) draw an episode from
its dense log; ``jaxecon.plotting`` draws the same quantities from the same
log (``jaxecon.dense_log``: ``dense_log.json`` of ``jaxecon run``, or
``env.previous_episode_dense_log`` of the shim or of Foundation itself):

====================  ===========================================  ======================
function              what                                         needs
====================  ===========================================  ======================
plot_world_over_time  a grid of world snapshots with one legend    ``world``, ``states``
plot_log_state        one snapshot on your Axes                    ``world``, ``states``
plot_agent_states     inventory + escrow per resource, labor,      ``states``
                      one line per agent
plot_trades           each trade's price, trades per time bin,     ``Trade``
                      per resource
plot_taxes            rates per bracket, incomes, taxes paid,      ``PeriodicTax``
                      rebate, taxes collected per bracket
replay                an interactive replay page (one HTML file,   ``states``
                      map, scrubber, agents, market, taxes,
                      metrics; ``jaxecon.plotting.replay``)
breakdown             all that apply, as figures                   
save_plots            all that apply, as PNG files                 
====================  ===========================================  ======================

Every function returns a ``matplotlib.figure.Figure`` built without
``pyplot`` (no global state; show it in a notebook by leaving it as the
cell's value, or save it with ``fig.savefig``). Fonts, grid and colours
come from :mod:`jaxecon.plotting.style`; agent ``i`` has the colour of the
world pictures (``jaxecon.render.agent_colors``).

Example::

    from jaxecon.plotting import load_dense_log, save_plots
    log = load_dense_log("runs/x/dense_log.json")
    save_plots(log, "runs/x/plots")   # world_over_time.png, agents.png, trades.png, taxes.png

One job per module: ``logs`` (reading a dense log), ``style``, ``world``,
``agents``, ``trades``, ``taxes``, ``breakdown``; and ``throughput``, the
benchmark's plot (``plot_throughput``, from ``jaxecon bench``'s result; also
``jaxecon.bench.report.plot_throughput``). The episode video is
``jaxecon.video``.

Three plots stay beside what they read, as importing them here would import
a layer above or the scenario (and JAX): the training run's learning curves
(``jaxecon.training.logging.plot_learning_curves``, beside the
``metrics.csv`` writer and reader) and the protocol's curves over seeds
(``jaxecon.training.plots``, which finds the runs and reads their configs
through ``jaxecon.training``, itself an importer of
:mod:`jaxecon.plotting.style`), and the COVID-19 episode plots
(``jaxecon.scenarios.covid19.plots``, which read the scenario's recorded
data). The training plots draw with :mod:`jaxecon.plotting.style`.
"""

from jaxecon.plotting.agents import plot_agent_states
from jaxecon.plotting.breakdown import PLOTS, breakdown, save_plots
from jaxecon.plotting.logs import check_dense_log, load_dense_log
from jaxecon.plotting.replay import Replay, replay
from jaxecon.plotting.taxes import plot_taxes, tax_per_bracket
from jaxecon.plotting.throughput import plot_throughput
from jaxecon.plotting.trades import plot_trades
from jaxecon.plotting.world import plot_log_state, plot_world_over_time

__all__ = [
    "PLOTS",
    "Replay",
    "breakdown",
    "check_dense_log",
    "load_dense_log",
    "plot_agent_states",
    "plot_log_state",
    "plot_taxes",
    "plot_throughput",
    "plot_trades",
    "plot_world_over_time",
    "replay",
    "save_plots",
    "tax_per_bracket",
]
