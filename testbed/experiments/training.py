"""Data-parallel training whose gradients netweft all-reduces, in virtual time.

A small model (a two-layer MLP, numpy only) learns a seeded Gaussian-mixture
classification set. ``workers`` data-parallel workers each hold a shard of the
training set; at every step each computes its float32 gradient on a minibatch of
its shard, the gradients are summed across the workers by one of three methods,
and every worker applies the same SGD step with the mean:

- ``exact``: the exact sum of the workers' float32 gradients, rounded once to
  float32 (the reference);
- ``in-network``: netweft's in-network aggregation through the embedded switch
  running ``p4/aggregation.p4`` (:mod:`netweft.testbed.experiments.allreduce_fabric`'s
  fabric and job, packet by packet), quantized to block-wise fixed point
  (:mod:`netweft.transport.collectives.aggregation.quantization`);
- ``ring``: ring all-reduce over netweft's transport (the C engines) in the
  transport's simulation (float32 additions in ring order).

Every method starts from the same initial weights and sees the same minibatches,
so the loss curves differ only by what the all-reduce did to the gradients. Each
step records the training loss, the all-reduce's virtual time and the largest
error of the all-reduced sum against the exact one, as a fraction of the
documented bound (quantization's ``error_bound`` for in-network; (workers - 1)
float32 roundings of the sum of magnitudes for the ring).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from netweft.testbed.experiments.allreduce_fabric import (
    FabricSpec,
    aggregation_fabric,
    host_name,
    ring_path_delay_ns,
)
from netweft.transport.collectives.aggregation.worker import AggregationJob, AggregationWorker
from netweft.transport.collectives.ring_allreduce import RingAllreduce, RingGroup
from netweft.transport.collectives.ring_allreduce import run_ring as drive_ring
from netweft.transport.sim.simulation import Simulation
from netweft.transport.sim.wire import Link

METHODS = ("exact", "in-network", "ring")


@dataclass(frozen=True)
class TrainingSpec:
    """One training comparison: data, model, optimiser and the all-reduce fabric."""

    workers: int = 4
    steps: int = 100
    batch: int = 16            # samples per worker per step
    features: int = 16
    classes: int = 4
    hidden: int = 32
    samples: int = 4096        # training samples (the test set is a quarter of that)
    spread: float = 1.6        # class-centre scale against unit-variance noise: overlap
    lr: float = 0.3
    seed: int = 1
    rate_gbps: float = 10.0
    link_delay_us: float = 1.0
    topology: str = "star"

    def fabric(self) -> FabricSpec:
        return FabricSpec(workers=self.workers, topology=self.topology,
                          rate_bps=self.rate_gbps * 1e9,
                          link_delay_ns=int(self.link_delay_us * 1000))


@dataclass
class Dataset:
    """A classification set split into training and test parts (float32 features)."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def gaussian_mixture(spec: TrainingSpec) -> Dataset:
    """``classes`` Gaussian clusters in ``features`` dimensions, two centres per class
    (so that a linear model is not enough), unit-variance noise; seeded."""
    rng = np.random.default_rng(spec.seed)
    centres = rng.normal(0.0, spec.spread, (spec.classes, 2, spec.features))
    n = spec.samples + spec.samples // 4
    y = rng.integers(0, spec.classes, n)
    which = rng.integers(0, 2, n)
    x = (centres[y, which] + rng.normal(0.0, 1.0, (n, spec.features))).astype(np.float32)
    return Dataset(x[:spec.samples], y[:spec.samples], x[spec.samples:], y[spec.samples:])


class MLP:
    """features -> hidden (tanh) -> classes (softmax), its weights one flat float32 vector
    (the vector the workers all-reduce the gradients of)."""

    def __init__(self, features: int, hidden: int, classes: int) -> None:
        self.shapes = [(features, hidden), (hidden,), (hidden, classes), (classes,)]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        self.size = sum(self.sizes)

    def init(self, rng: np.random.Generator) -> np.ndarray:
        f, h = self.shapes[0]
        c = self.shapes[2][1]
        parts = [rng.normal(0, 1 / np.sqrt(f), f * h), np.zeros(h),
                 rng.normal(0, 1 / np.sqrt(h), h * c), np.zeros(c)]
        return np.concatenate(parts).astype(np.float32)

    def _unpack(self, params: np.ndarray) -> list[np.ndarray]:
        out, at = [], 0
        for shape, size in zip(self.shapes, self.sizes, strict=True):
            out.append(params[at:at + size].reshape(shape))
            at += size
        return out

    def logits(self, params: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        w1, b1, w2, b2 = self._unpack(params)
        h = np.tanh(x @ w1 + b1)
        return h, h @ w2 + b2

    def loss(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        """Mean cross-entropy (computed in float64)."""
        _, z = self.logits(params, x)
        z = z.astype(np.float64)
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(y)), y].mean())

    def accuracy(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
        _, z = self.logits(params, x)
        return float((z.argmax(axis=1) == y).mean())

    def gradient(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The float32 gradient of the mean cross-entropy over ``(x, y)``."""
        w1, b1, w2, b2 = self._unpack(params)
        h, z = self.logits(params, x)
        z = z - z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        p[np.arange(len(y)), y] -= 1
        dz = p / len(y)
        dh = (dz @ w2.T) * (1 - h * h)
        grads = [x.T @ dh, dh.sum(axis=0), h.T @ dz, dz.sum(axis=0)]
        return np.concatenate([g.reshape(-1) for g in grads]).astype(np.float32)


@dataclass
class Reduced:
    """One all-reduce: the sum every worker got, its virtual time, and its largest
    error against the exact sum as a fraction of the method's documented bound."""

    total: np.ndarray
    seconds: float
    bound_fraction: float
    max_abs_error: float


def exact_sum(grads: list[np.ndarray]) -> np.ndarray:
    """The workers' float32 gradients summed exactly (float64), rounded once to float32."""
    return np.sum([g.astype(np.float64) for g in grads], axis=0).astype(np.float32)


def _same_everywhere(results: list[np.ndarray], method: str) -> np.ndarray:
    for r in results[1:]:
        if not np.array_equal(r, results[0]):
            raise AssertionError(f"{method}: the workers got different sums")
    return results[0]


def _fraction(result: np.ndarray, exact: np.ndarray, bound: np.ndarray) -> tuple[float, float]:
    err = np.abs(result.astype(np.float64) - exact)
    return float(np.max(err / bound)), float(err.max())


class ExactReducer:
    """The reference: exact sums, no network."""

    def __call__(self, grads: list[np.ndarray]) -> Reduced:
        return Reduced(exact_sum(grads), 0.0, 0.0, 0.0)


class InNetworkReducer:
    """Sums through the embedded switch running ``p4/aggregation.p4``: each all-reduce on
    a freshly configured fabric (as :func:`~netweft.testbed.experiments.allreduce_fabric.
    run_in_network` runs one), so that every step is the bench's all-reduce."""

    def __init__(self, spec: TrainingSpec) -> None:
        self.fabric = spec.fabric()
        self.seed = spec.seed

    def __call__(self, grads: list[np.ndarray]) -> Reduced:
        n = len(grads)
        net, ids = aggregation_fabric(self.fabric, seed=self.seed)
        workers = {host_name(w): AggregationWorker(grads[w], AggregationJob(
            1, ids[host_name(w)], n, self.fabric.lanes, self.fabric.window,
            timeout_ns=self.fabric.timeout_ns)) for w in range(n)}
        times = net.run(workers)
        exact = np.sum([g.astype(np.float64) for g in grads], axis=0)
        results = [wk.result for wk in workers.values()]
        total = _same_everywhere(results, "in-network")
        first = next(iter(workers.values()))
        bound = first.quantizer.error_bound(first.exponents, exact)
        frac, err = _fraction(total, exact, bound)
        return Reduced(total, max(times.values()) / 1e9, frac, err)


class RingReducer:
    """Sums by ring all-reduce over netweft's transport in virtual time (the C engines),
    links as :func:`~netweft.testbed.experiments.allreduce_fabric.run_ring` has them."""

    def __init__(self, spec: TrainingSpec, mtu: int = 9000) -> None:
        self.fabric = spec.fabric()
        self.seed = spec.seed
        self.mtu = mtu

    def __call__(self, grads: list[np.ndarray]) -> Reduced:
        spec = self.fabric
        sim = Simulation(seed=self.seed, mtu=self.mtu)
        eps = [sim.endpoint(link=Link(rate_bps=spec.rate_bps,
                                      delay_ns=ring_path_delay_ns(spec, r), queue_pkts=4096))
               for r in range(len(grads))]
        addresses = [ep.address for ep in eps]
        jobs = [RingAllreduce(g, RingGroup(ep, r, addresses))
                for r, (g, ep) in enumerate(zip(grads, eps, strict=True))]
        start = sim.now
        drive_ring(jobs, sim)
        seconds = sim.now - start
        for ep in eps:
            ep.close()
        total = _same_everywhere([j.result for j in jobs], "ring")
        exact = np.sum([g.astype(np.float64) for g in grads], axis=0)
        bound = ((len(grads) - 1) * 2.0**-24 * np.sum([np.abs(g) for g in grads], axis=0)
                 + 2.0**-149)
        frac, err = _fraction(total, exact, bound)
        return Reduced(total, seconds, frac, err)


def reducer(method: str, spec: TrainingSpec) -> Callable[[list[np.ndarray]], Reduced]:
    """The all-reduce of ``method`` (one of :data:`METHODS`)."""
    if method == "exact":
        return ExactReducer()
    if method == "in-network":
        return InNetworkReducer(spec)
    if method == "ring":
        return RingReducer(spec)
    raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")


@dataclass
class TrainingRun:
    """What one method's training measured, per step and at the end."""

    method: str
    losses: list[float] = field(default_factory=list)       # training-set loss after each step
    comm_seconds: list[float] = field(default_factory=list)  # virtual time of each all-reduce
    bound_fractions: list[float] = field(default_factory=list)
    max_abs_errors: list[float] = field(default_factory=list)
    initial_loss: float = 0.0
    train_accuracy: float = 0.0
    test_accuracy: float = 0.0
    params: np.ndarray | None = None


def train(spec: TrainingSpec, method: str,
          progress: Callable[[str], None] | None = None) -> TrainingRun:
    """Train the MLP data-parallel with ``method``'s all-reduce; deterministic per spec."""
    data = gaussian_mixture(spec)
    model = MLP(spec.features, spec.hidden, spec.classes)
    params = model.init(np.random.default_rng(spec.seed + 1))
    shards = np.array_split(np.arange(len(data.y_train)), spec.workers)
    order = np.random.default_rng(spec.seed + 2)
    allreduce = reducer(method, spec)
    run = TrainingRun(method, initial_loss=model.loss(params, data.x_train, data.y_train))
    for step in range(spec.steps):
        grads = []
        for shard in shards:
            idx = order.choice(shard, spec.batch, replace=False)
            grads.append(model.gradient(params, data.x_train[idx], data.y_train[idx]))
        red = allreduce(grads)
        params = (params - np.float32(spec.lr / spec.workers) * red.total).astype(np.float32)
        run.losses.append(model.loss(params, data.x_train, data.y_train))
        run.comm_seconds.append(red.seconds)
        run.bound_fractions.append(red.bound_fraction)
        run.max_abs_errors.append(red.max_abs_error)
        if progress and (step + 1) % 25 == 0:
            progress(f"{method}: step {step + 1}/{spec.steps}, loss {run.losses[-1]:.4f}")
    run.train_accuracy = model.accuracy(params, data.x_train, data.y_train)
    run.test_accuracy = model.accuracy(params, data.x_test, data.y_test)
    run.params = params
    return run


def compare(spec: TrainingSpec, methods: tuple[str, ...] = METHODS,
            progress: Callable[[str], None] | None = None) -> dict[str, TrainingRun]:
    """The same training once per method."""
    return {m: train(spec, m, progress) for m in methods}


def summary(runs: dict[str, TrainingRun]) -> list[dict]:
    """One row per method: final loss and accuracies, the largest gap to the exact run's
    loss curve and weights, the all-reduce's error against its bound, virtual time."""
    ref = runs.get("exact")
    rows = []
    for m, r in runs.items():
        row = {"method": m, "final_loss": r.losses[-1], "initial_loss": r.initial_loss,
               "train_accuracy": r.train_accuracy, "test_accuracy": r.test_accuracy,
               "max_bound_fraction": max(r.bound_fractions),
               "max_abs_error": max(r.max_abs_errors),
               "comm_ms_per_step": 1e3 * float(np.mean(r.comm_seconds))}
        if ref is not None:
            row["max_loss_gap"] = float(np.max(np.abs(np.array(r.losses) - ref.losses)))
            row["weights_rel_gap"] = float(np.linalg.norm(r.params - ref.params)
                                           / np.linalg.norm(ref.params))
        rows.append(row)
    return rows
