"""Taxes over an episode: the rates per bracket, incomes, taxes paid and what each bracket collected.

Reads the ``"PeriodicTax"`` log of ``PeriodicBracketTax`` (one entry per tax
day: the schedule, the bracket cutoffs and each agent's income, tax paid,
marginal and effective rate, and the lump-sum rebate). Foundation's bracket
tax: an income ``z`` pays ``sum_b rate_b * clip(z - cutoff_b, 0,
cutoff_{b+1} - cutoff_b)`` (the top bracket unbounded), of which it pays
at most the Coin in its inventory; the collected taxes go back to every
agent as one equal lump sum.
"""

from __future__ import annotations

import numpy as np

from jaxecon.plotting.logs import check_dense_log, n_agents, tax_days
from jaxecon.plotting.style import agent_color, new_figure, style

__all__ = ["bracket_labels", "collected_per_bracket", "plot_taxes", "tax_per_bracket"]


def bracket_labels(cutoffs) -> list:
    """``["0-9.7", "9.7-39.5", ..., "510+"]`` of lower bounds ``cutoffs`` (coin)."""
    c = [float(x) for x in cutoffs]
    fmt = "{:.4g}".format
    return [f"{fmt(lo)}-{fmt(hi)}" for lo, hi in zip(c[:-1], c[1:])] + [f"{fmt(c[-1])}+"]


def tax_per_bracket(income, schedule, cutoffs) -> np.ndarray:
    """float ``[..., B]``: the tax each bracket takes of ``income`` (``[...]``, coin).

    Args:
        income: float ``[...]``; schedule: rates ``[B]`` (0..1); cutoffs: lower
            bounds ``[B]`` (coin), increasing.
    """
    income = np.asarray(income, np.float64)[..., None]
    lo = np.asarray(cutoffs, np.float64)
    hi = np.append(lo[1:], np.inf)
    return np.asarray(schedule, np.float64) * np.clip(income - lo, 0.0, hi - lo)


def collected_per_bracket(days) -> np.ndarray:
    """float ``[B]``: the coin each bracket collected over the tax days of ``days`` (:func:`tax_days`).

    Each agent's tax due per bracket (:func:`tax_per_bracket`) scaled by what
    it paid over what it owed: Foundation takes ``min(tax due, the agent's
    Coin inventory)`` (never escrow), so an agent short of coin pays every
    bracket's share in proportion. The result sums to the tax paid.
    """
    B = days["schedule"].shape[1]
    out = np.zeros(B)
    for d in range(days["t"].size):
        due = tax_per_bracket(days["income"][d], days["schedule"][d], days["cutoffs"][d])  # [n, B]
        total = due.sum(-1)
        paid_share = np.where(total > 0, days["tax_paid"][d] / np.where(total > 0, total, 1.0), 0.0)
        out += (due * paid_share[:, None]).sum(0)
    return out


def plot_taxes(dense_log):
    """Four panels: rates per bracket, incomes, taxes paid (and the rebate), taxes collected per bracket.

    x of the first three: the timestep of each tax day (the rates of a tax
    day are those the period that ends there was taxed at; a heatmap with
    the values written in when there are at most 16 tax days). The incomes
    panel draws the bracket cutoffs (dotted) within its range. The last
    panel is :func:`collected_per_bracket`.

    Returns:
        ``matplotlib.figure.Figure``; with no tax day in the log (an episode
        shorter than the period) each panel says so.

    Raises:
        ValueError: not a dense log, or no ``"PeriodicTax"`` list (the economy
            has no ``PeriodicBracketTax``, or it has ``disable_taxes``).
    """
    from matplotlib.ticker import MaxNLocator

    check_dense_log(dense_log)
    days = tax_days(dense_log)
    n = n_agents(dense_log)
    with style():
        fig, axes = new_figure(2, 2, panel_size=(6.6, 3.9))
        (ax_rate, ax_inc), (ax_paid, ax_bracket) = axes
        ax_rate.set_title("tax rate of each bracket (%) on each tax day")
        ax_inc.set_title("income of each agent in the tax period")
        ax_paid.set_title("tax paid by each agent, and the rebate")
        ax_bracket.set_title("taxes collected in each bracket (episode)")
        if days["t"].size == 0:
            for ax in axes.flat:
                ax.text(0.5, 0.5, "no tax day in this episode", transform=ax.transAxes,
                        ha="center", va="center", fontsize=12, color="0.4")
            fig.suptitle("taxes")
            return fig
        t, labels = days["t"], bracket_labels(days["cutoffs"][-1])
        B = days["schedule"].shape[1]
        image = ax_rate.imshow(100 * days["schedule"].T, aspect="auto", origin="lower", cmap="viridis",
                               vmin=0, vmax=max(1e-9, 100 * days["schedule"].max()),
                               extent=(-0.5, t.size - 0.5, -0.5, B - 0.5))
        ax_rate.set_yticks(np.arange(B), labels)
        ax_rate.set_ylabel("bracket (coin)")
        ticks = np.arange(t.size) if t.size <= 16 else np.unique(np.linspace(0, t.size - 1, 8).round().astype(int))
        ax_rate.set_xticks(ticks, [str(x) for x in t[ticks]])
        ax_rate.grid(False)
        if t.size <= 16:
            top = 100 * days["schedule"].max()
            for d in range(t.size):
                for b in range(B):
                    v = 100 * days["schedule"][d, b]
                    ax_rate.text(d, b, f"{v:.3g}", ha="center", va="center", fontsize=8,
                                 color="black" if v > 0.6 * top else "white")
        fig.colorbar(image, ax=ax_rate, label="rate (%)", pad=0.02)
        for i in range(n):
            ax_inc.plot(t, days["income"][:, i], "o-", color=agent_color(i, n), lw=1.8, ms=4, label=f"agent {i}")
            ax_paid.plot(t, days["tax_paid"][:, i], "o-", color=agent_color(i, n), lw=1.8, ms=4,
                         label=f"agent {i}")
        ax_paid.plot(t, days["lump_sum"], "s--", color="black", lw=1.5, ms=4, label="rebate (each agent)")
        lo, hi = ax_inc.get_ylim()
        shown = [c for c in days["cutoffs"][-1][1:] if lo < c < hi]
        if any(c > hi - 0.08 * (hi - lo) for c in shown):  # room above a cutoff at the top edge
            ax_inc.set_ylim(lo, hi + 0.08 * (hi - lo))
        for c in shown:
            ax_inc.axhline(c, color="0.35", ls=":", lw=1.2)
            ax_inc.text(t[0], c, f" cutoff {c:.4g}", va="bottom", ha="left", fontsize=9, color="0.3")
        for ax in (ax_inc, ax_paid):
            ax.set_ylabel("coin")
        handles, names = ax_paid.get_legend_handles_labels()
        fig.legend(handles, names, loc="outside right center")
        for ax in (ax_rate, ax_inc, ax_paid):
            ax.set_xlabel("timestep (tax day)")
        for ax in (ax_inc, ax_paid):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        per_bracket = collected_per_bracket(days)
        bars = ax_bracket.bar(np.arange(B), per_bracket, color="tab:blue", edgecolor="black",
                              linewidth=0.5, label="tax collected")
        ax_bracket.bar_label(bars, fmt="%.3g", fontsize=9, padding=2)
        ax_bracket.set_xticks(np.arange(B), labels, rotation=30, ha="right")
        ax_bracket.set_xlabel("bracket (coin)")
        ax_bracket.set_ylabel("coin")
        ax_bracket.set_ylim(0, max(1.0, 1.2 * per_bracket.max()))
        ax_bracket.legend(loc="upper right")
        fig.suptitle(f"taxes: {t.size} tax days, {days['tax_paid'].sum():.4g} coin collected")
    return fig
