"""Plots for experiments, drawn headless (Agg) into PNG files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def plot_rtt_cdf(rtts_ms: Mapping[str, Sequence[float]], path: Path, title: str) -> Path:
    """One CDF line per flow of round-trip times in milliseconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for label, values in rtts_ms.items():
        xs = sorted(values)
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("round-trip time (ms, log scale)")
    ax.set_ylabel("fraction of datagrams")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_queue_occupancy(samples: Sequence[tuple[float, int]], path: Path, title: str,
                         limit: int | None = None,
                         phases: Mapping[str, tuple[float, float]] | None = None) -> Path:
    """A queue's occupancy (packets) over time (seconds), its depth limit and shaded phases."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
    if samples:
        ax.step([t for t, _ in samples], [d for _, d in samples], where="post",
                label="packets queued")
    if limit:
        ax.axhline(limit, color="tab:red", linestyle="--", label=f"depth limit ({limit})")
    for label, (start, end) in (phases or {}).items():
        ax.axvspan(start, end, alpha=0.15, color="tab:green", label=label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue occupancy (packets)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
