"""Plots for experiments, drawn headless (Agg) into PNG files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


def _pyplot() -> Any:
    """matplotlib's pyplot on the headless Agg backend (imported on first use: start-up
    of commands that draw nothing stays cheap)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> Path:
    """Lay out, write and release a figure."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_cdf(values_by_label: Mapping[str, Sequence[float]], path: Path, title: str,
             xlabel: str, ylabel: str, size: tuple[float, float] = (6, 4)) -> Path:
    """One empirical CDF line per label, on a log x axis."""
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=size, dpi=100)
    for label, values in values_by_label.items():
        xs = sorted(values)
        if xs:
            ax.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    return _save(fig, path)


def plot_rtt_cdf(rtts_ms: Mapping[str, Sequence[float]], path: Path, title: str) -> Path:
    """One CDF line per flow of round-trip times in milliseconds."""
    return plot_cdf(rtts_ms, path, title, "round-trip time (ms, log scale)",
                    "fraction of datagrams")


def plot_queue_occupancy(samples: Sequence[tuple[float, int]], path: Path, title: str,
                         limit: int | None = None,
                         phases: Mapping[str, tuple[float, float]] | None = None) -> Path:
    """A queue's occupancy (packets) over time (seconds), its depth limit and shaded phases."""
    plt = _pyplot()

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
    return _save(fig, path)


def plot_latency_cdf(rtts_us: Mapping[str, Sequence[float]], path: Path, title: str) -> Path:
    """One CDF line per ping-pong test of round-trip times in microseconds."""
    return plot_cdf(rtts_us, path, title, "round-trip time (us, log scale)",
                    "fraction of round trips", size=(6.5, 4))


def plot_sweep(rows: Sequence, path: Path, spray: bool = False) -> Path:
    """Goodput and messages/s of a perf sweep (rows of ``perf.sweep.SweepRow``): against
    message size, one line per (packet path, depth, burst) plus TCP; for a spray run,
    against burst, one line per packet path."""
    plt = _pyplot()

    fig, (gbps, rate) = plt.subplots(1, 2, figsize=(11, 4), dpi=100)
    if spray:
        paths: dict[str, list] = {}
        for r in rows:
            paths.setdefault(getattr(r, "tx", "ports"), []).append(r)
        tcp_rows = next(iter(paths.values()))
        for ax, key in ((gbps, "goodput_gbps"), (rate, "msgs_per_s")):
            for tx, series in paths.items():
                ax.plot([r.burst for r in series], [getattr(r.netweft, key) for r in series],
                        "o-", label=f"netweft tx={tx}")
            if all(r.tcp for r in tcp_rows):
                ax.plot([r.burst for r in tcp_rows], [getattr(r.tcp, key) for r in tcp_rows],
                        "ks--", label="kernel TCP")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("entropy_burst (packets per source port)")
    else:
        lines: dict[str, list] = {}
        tcp: dict[int, object] = {}
        for r in rows:
            tx = getattr(r, "tx", "ports")
            lines.setdefault(f"netweft tx={tx} depth {r.depth} burst {r.burst}", []).append(r)
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
    return _save(fig, path)


def plot_allreduce(rows: Sequence[Mapping], path: Path) -> Path:
    """In-network vs ring all-reduce: completion time and bytes per host link against buffer
    size, one panel pair per topology; projected in-network points drawn hollow."""
    plt = _pyplot()

    topologies = sorted({r["topology"] for r in rows}, key=lambda t: t != "star")
    fig, axes = plt.subplots(2, len(topologies), figsize=(5.2 * len(topologies), 7), dpi=100,
                             squeeze=False)
    for col, topology in enumerate(topologies):
        t_ax, b_ax = axes[0][col], axes[1][col]
        for n in sorted({r["workers"] for r in rows if r["topology"] == topology}):
            pts = sorted((r for r in rows if r["topology"] == topology and r["workers"] == n),
                         key=lambda r: r["size"])
            mib = [r["size"] / (1 << 20) for r in pts]
            line = t_ax.plot(mib, [r["ring_ms"] for r in pts], "--s", markersize=4,
                             label=f"ring, {n} workers")[0]
            # in-network on one switch (solid) and hierarchical (dash-dot), when measured
            for prefix, style, what in (("in_network", "-", "in-network"),
                                        ("hierarchical", "-.", "hierarchical")):
                if any(f"{prefix}_ms" not in r for r in pts):
                    continue
                t_ax.plot(mib, [r[f"{prefix}_ms"] for r in pts], style,
                          color=line.get_color(), label=f"{what}, {n} workers")
                for r, x in zip(pts, mib, strict=True):
                    t_ax.plot([x], [r[f"{prefix}_ms"]], "o", markersize=4,
                              color=line.get_color(), fillstyle="full"
                              if r[f"{prefix}_source"] == "switch" else "none")
                b_ax.plot(mib, [r[f"{prefix}_bytes_ratio"] for r in pts], style + "o"
                          if style == "-" else style, markersize=4, color=line.get_color(),
                          label=f"{what}, {n} workers")
            b_ax.axhline(2 * (n - 1) / n, color=line.get_color(), lw=0.8, ls=":")
        t_ax.set_xscale("log")
        t_ax.set_yscale("log")
        t_ax.set_title(f"{topology}: completion time (virtual)", fontsize=9)
        t_ax.set_xlabel("buffer per worker (MiB)", fontsize=8)
        t_ax.set_ylabel("ms", fontsize=8)
        t_ax.grid(True, which="both", alpha=0.3)
        t_ax.legend(fontsize=7)
        b_ax.set_xscale("log")
        b_ax.set_title(f"{topology}: ring / in-network bytes per host link "
                       "(dotted: 2(n-1)/n)", fontsize=9)
        b_ax.set_xlabel("buffer per worker (MiB)", fontsize=8)
        b_ax.set_ylabel("ratio", fontsize=8)
        b_ax.grid(True, which="both", alpha=0.3)
        b_ax.legend(fontsize=7)
    return _save(fig, path)


def plot_spray(rows: Sequence[Mapping], path: Path, title: str) -> Path:
    """Per spray mode: aggregate goodput against the offer, each spine's share of the
    packets, and the share of datagrams the receivers got out of order."""
    plt = _pyplot()

    modes = [r["mode"] for r in rows]
    xs = range(len(rows))
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(12, 3.8), dpi=100)
    ax1.bar(xs, [r["goodput_mbit"] for r in rows], color="tab:blue", label="goodput")
    ax1.plot(xs, [r["offered_mbit"] for r in rows], "k_", markersize=30, label="offered")
    ax1.set_ylabel("Mbit/s (UDP payload)")
    ax1.set_title("aggregate goodput")
    ax1.legend(loc="lower right")
    share = [100 * r["spine1_share"] for r in rows]
    ax2.bar(xs, share, color="tab:orange", label="spine1")
    ax2.bar(xs, [100 - s for s in share], bottom=share, color="tab:green", label="spine2")
    ax2.set_ylabel("% of packets")
    ax2.set_title("per-spine load")
    ax2.legend(loc="lower right")
    ax3.bar(xs, [100 * r["reordered_fraction"] for r in rows], color="tab:red")
    ax3.set_ylabel("% of datagrams")
    ax3.set_title("received out of order")
    for ax in (ax1, ax2, ax3):
        ax.set_xticks(list(xs), modes, rotation=30, ha="right")
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title)
    return _save(fig, path)


def plot_queue_runs(runs: Mapping[str, Sequence[tuple[float, int]]], path: Path, title: str,
                    lines: Mapping[str, int]) -> Path:
    """Several runs' queue occupancy (packets) over time, with labelled thresholds."""
    plt = _pyplot()

    fig, ax = plt.subplots(figsize=(7, 3.5), dpi=100)
    for label, samples in runs.items():
        if samples:
            t0 = samples[0][0]
            ax.step([t - t0 for t, _ in samples], [d for _, d in samples], where="post",
                    label=label)
    for (label, value), style in zip(lines.items(), ("--", ":", "-."), strict=False):
        ax.axhline(value, color="gray", linestyle=style, label=f"{label} ({value})")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("queue occupancy (packets)")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")
    return _save(fig, path)


def plot_multicast(runs: Sequence[Mapping], path: Path, title: str) -> Path:
    """Per run: completion time, bytes the sender sent and ACKs it processed."""
    plt = _pyplot()

    labels = [r["label"] for r in runs]
    xs = range(len(runs))
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.8), dpi=100)
    for ax, key, scale, name, color in (
            (axes[0], "seconds", 1, "completion time (s)", "tab:blue"),
            (axes[1], "bytes", 1e-6, "sender bytes (MB)", "tab:orange"),
            (axes[2], "acks", 1, "ACKs at the sender", "tab:green")):
        ax.bar(xs, [r[key] * scale for r in runs], color=color)
        ax.set_title(name)
        ax.set_xticks(list(xs), labels, rotation=20, ha="right")
        ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title)
    return _save(fig, path)


def plot_time_sequence(events: Sequence, path: Path, title: str) -> Path:
    """A transport time-sequence plot of one PDC's trace events (``TraceEvent`` records):
    PSN over time (first sends, resends, losses and trim NACKs marked) above the NSCC
    window, the credit received and the DCQCN rate over time."""
    plt = _pyplot()

    t0 = min((e.t_ns for e in events), default=0)
    psns = [e.psn for e in events if e.event == "sent"]
    base = min(psns, key=lambda p: (p - psns[0]) & 0xFFFFFFFF) if psns else 0

    def rel(psn: int) -> int:
        d = (psn - base) & 0xFFFFFFFF
        return d - (1 << 32) if d >= 1 << 31 else d

    def pts(name: str, pred=lambda e: True) -> tuple[list[float], list[int]]:
        sel = [e for e in events if e.event == name and pred(e)]
        return [(e.t_ns - t0) / 1e3 for e in sel], [rel(e.psn) for e in sel]

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), dpi=100, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    x, y = pts("sent", lambda e: "retx" not in e.flags)
    top.scatter(x, y, s=4, label="sent", color="tab:blue")
    x, y = pts("acked")
    top.step(x, y, where="post", label="cumulative ACK", color="tab:green", linewidth=1)
    x, y = pts("sent", lambda e: "retx" in e.flags)
    top.scatter(x, y, s=18, marker="x", label="resent", color="tab:red")
    x, y = pts("lost")
    top.scatter(x, y, s=14, marker="v", label="declared lost", color="tab:orange")
    x, y = pts("trim_nack")
    top.scatter(x, y, s=14, marker="^", label="trim NACK", color="tab:purple")
    top.set_ylabel("PSN (from the first)")
    top.set_title(title)
    top.grid(True, alpha=0.3)
    top.legend(loc="upper left", fontsize=8)
    drawn = False
    for name, label, scale in (("cwnd", "NSCC window (KB)", 1e3),
                               ("credit_received", "credit received (KB, cumulative)", 1e3),
                               ("rate", "DCQCN rate (Gbit/s)", 1e6)):
        sel = [e for e in events if e.event == name]
        if sel:
            bottom.step([(e.t_ns - t0) / 1e3 for e in sel], [e.value / scale for e in sel],
                        where="post", label=label)
            drawn = True
    if not drawn:
        bottom.text(0.5, 0.5, "no window, credit or rate events (cc_mode none)",
                    ha="center", va="center", transform=bottom.transAxes)
    else:
        bottom.legend(loc="upper left", fontsize=8)
    bottom.set_xlabel("time (us)")
    bottom.grid(True, alpha=0.3)
    return _save(fig, path)


def plot_training(losses: Mapping[str, Sequence[float]], path: Path, title: str,
                  reference: str = "exact") -> Path:
    """Training-loss curves, one per all-reduce method (top), and each curve's absolute
    gap to the ``reference`` method's on a log axis (bottom): curves that coincide at the
    top show their differences below."""
    plt = _pyplot()

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), dpi=100, sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    for label, ys in losses.items():
        top.plot(range(len(ys)), ys, label=label, linewidth=1.2,
                 linestyle="--" if label != reference else "-")
    top.set_ylabel("training loss (cross-entropy)")
    top.set_yscale("log")
    top.set_title(title, fontsize=10)
    top.grid(True, which="both", alpha=0.3)
    top.legend()
    ref = list(losses.get(reference, ()))
    for label, ys in losses.items():
        if label == reference or not ref:
            continue
        gaps = [max(abs(a - b), 1e-18) for a, b in zip(ys, ref, strict=False)][1:]
        bottom.plot(range(1, len(gaps) + 1), gaps, label=f"|{label} - {reference}|",
                    linewidth=1)  # from step 1: every run starts from the same weights
    bottom.set_yscale("log")
    bottom.set_xlabel("step")
    bottom.set_ylabel("loss gap")
    bottom.grid(True, which="both", alpha=0.3)
    bottom.legend(fontsize=8)
    return _save(fig, path)
