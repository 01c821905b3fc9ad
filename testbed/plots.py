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


def plot_latency_cdf(rtts_us: Mapping[str, Sequence[float]], path: Path, title: str) -> Path:
    """One CDF line per ping-pong test of round-trip times in microseconds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4), dpi=100)
    for label, values in rtts_us.items():
        xs = sorted(values)
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("round-trip time (us, log scale)")
    ax.set_ylabel("fraction of round trips")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_sweep(rows: Sequence, path: Path, spray: bool = False) -> Path:
    """Goodput and messages/s of a perf sweep (rows of ``perf_sweep.SweepRow``): against
    message size, one line per (depth, burst) plus TCP; for a spray run, against burst."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (gbps, rate) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    if spray:
        xs = [r.burst for r in rows]
        for ax, key in ((gbps, "goodput_gbps"), (rate, "msgs_per_s")):
            ax.plot(xs, [getattr(r.netweft, key) for r in rows], "o-", label="netweft")
            if all(r.tcp for r in rows):
                ax.plot(xs, [getattr(r.tcp, key) for r in rows], "s--", label="kernel TCP")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("entropy_burst (packets per source port)")
    else:
        lines: dict[str, list] = {}
        tcp: dict[int, object] = {}
        for r in rows:
            lines.setdefault(f"netweft depth {r.depth} burst {r.burst}", []).append(r)
            if r.tcp is not None:
                tcp.setdefault(r.size, r.tcp)
        for ax, key in ((gbps, "goodput_gbps"), (rate, "msgs_per_s")):
            for label, series in lines.items():
                ax.plot([r.size for r in series], [getattr(r.netweft, key) for r in series],
                        "o-", label=label)
            if tcp:
                sizes = sorted(tcp)
                ax.plot(sizes, [getattr(tcp[s], key) for s in sizes], "ks--",
                        label="kernel TCP")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("message size (bytes)")
    gbps.set_ylabel("goodput (Gbit/s)")
    rate.set_ylabel("messages/s")
    rate.set_yscale("log")
    for ax in (gbps, rate):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
