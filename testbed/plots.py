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
