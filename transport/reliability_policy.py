"""How a PDC repairs loss: selective repeat, Reed-Solomon coding, or a choice between them.

A :class:`Reliability` names what the application asked for (``sr``,
``ec:K,M`` or ``adaptive``; :func:`parse_reliability` reads the text form used by
``netweft perf --reliability``). :func:`expected_completion` is the explicit
model of a message's expected completion time under each choice, given a
:class:`PathEstimate` (RTT, rate, loss, RTO); docs/reliability.md derives it and
lists its assumptions. :class:`AdaptivePolicy` keeps a PDC's estimate up to date
from what the engine measures (``nw_peer_path``: smoothed RTT, request bytes sent
and bytes the peer reported receiving) and from message completion times, and
picks the choice with the lowest expected completion time before each message.
Pure: no I/O, no clock (times are passed in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from netweft.transport.errors import InvalidArgumentError

MAX_K = 32  # the engine's limits (erasure_code.h)
MAX_M = 8
#: Codes the adaptive policy considers, besides selective repeat.
CANDIDATE_CODES: tuple[tuple[int, int], ...] = ((32, 1), (32, 2), (16, 2), (32, 4), (16, 4),
                                                (8, 2), (32, 8), (10, 4), (4, 2))
SR: tuple[int, int] = (0, 0)
#: The engine's loss detection: reorder_pkts (a lost packet at the very end is
#: found by the RTO) and the RACK wait of 5/4 smoothed RTT.
TAIL_PKTS = 8
RACK_FACTOR = 1.25
#: Bytes on the wire per packet besides its payload (PDS + SES headers).
HEADER_BYTES = 56


@dataclass(frozen=True)
class Reliability:
    """``kind`` is "sr", "ec" (with ``k`` data + ``m`` parity packets per block) or "adaptive"."""

    kind: str = "sr"
    k: int = 0
    m: int = 0

    def __post_init__(self) -> None:
        if self.kind not in ("sr", "ec", "adaptive"):
            raise InvalidArgumentError(f"reliability must be sr, ec:K,M or adaptive, "
                                       f"got {self.kind!r}")
        if self.kind == "ec":
            if not (1 <= self.k <= MAX_K and 1 <= self.m <= MAX_M):
                raise InvalidArgumentError(f"ec:K,M needs 1 <= K <= {MAX_K} and "
                                           f"1 <= M <= {MAX_M}, got ec:{self.k},{self.m}")
        elif self.k or self.m:
            raise InvalidArgumentError(f"reliability {self.kind} takes no K,M")

    def __str__(self) -> str:
        return f"ec:{self.k},{self.m}" if self.kind == "ec" else self.kind


def parse_reliability(text: str | Reliability) -> Reliability:
    """``"sr"``, ``"adaptive"`` or ``"ec:K,M"`` (e.g. ``"ec:10,4"``) as a :class:`Reliability`."""
    if isinstance(text, Reliability):
        return text
    if not isinstance(text, str):
        raise InvalidArgumentError(f"reliability must be a string such as 'sr', 'ec:8,2' or "
                                   f"'adaptive', got {text!r}")
    spec = text.strip().lower()
    if spec in ("sr", "adaptive"):
        return Reliability(spec)
    if spec.startswith("ec:"):
        parts = spec[3:].split(",")
        if len(parts) == 2 and all(p.strip().isdigit() for p in parts):
            return Reliability("ec", int(parts[0]), int(parts[1]))
    raise InvalidArgumentError(f"reliability must be sr, ec:K,M (e.g. ec:10,4) or adaptive, "
                               f"got {text!r}")


@dataclass(frozen=True)
class PathEstimate:
    """What the model needs to know about a path."""

    rtt_s: float           # round-trip time
    rate_bps: float        # the rate the sender's packets leave at
    loss: float            # probability that a packet is lost (independently)
    rto_s: float           # retransmission timeout (what a lost tail costs)
    payload: int = 4040    # payload bytes per packet
    reorder_pkts: int = TAIL_PKTS
    rack_s: float = 0.0    # loss detection's wait after a send (0: 5/4 RTT)


def _pkt_time(path: PathEstimate) -> float:
    return (path.payload + HEADER_BYTES) * 8 / path.rate_bps


def _last_failure_extra(n_units: int, fail: float, unit_s: float, rack_s: float,
                        tail_s: float, tail_units: int) -> float:
    """E[time the last failed unit adds after the last unit's ACK would have come back].

    Units (packets for SR, blocks for coding) fail independently with ``fail``;
    the last failed one, ``j`` units from the end, is repaired ``rack_s`` after it
    was sent (``tail_s`` if it is within ``tail_units`` of the end: only the
    timeout finds it) and the repair costs what is left of that wait after the
    remaining ``j`` units went out."""
    if fail <= 0.0 or n_units <= 0:
        return 0.0
    reach = min(n_units, tail_units + int(rack_s / unit_s) + 2)
    j = np.arange(reach, dtype=float)
    p_last = (1.0 - fail) ** j * fail
    extra = np.where(j < tail_units, tail_s - j * unit_s, rack_s - j * unit_s)
    return float(np.sum(p_last * np.maximum(extra, 0.0)))


def _binom_tail(n: int, p: float, m: int) -> float:
    """P(more than m of n independent events with probability p)."""
    if p <= 0.0:
        return 0.0
    below = sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(m + 1))
    return max(0.0, 1.0 - below)


def expected_completion(size: int, path: PathEstimate, code: tuple[int, int] = SR) -> float:
    """Expected seconds from posting a ``size``-byte message until its last ACK, with
    selective repeat (``code`` = (0, 0)) or ``code`` = (k, m) Reed-Solomon blocks.

    SR: the packets go out back to back; a lost packet is resent once later packets
    are acknowledged and 5/4 RTT passed (free unless it is near the end), by the
    RTO if it is among the last ``reorder_pkts``; a lost resend costs an RTO.
    Coding: every block is followed by its m parity packets; a block with more
    than m losses is repaired by SR once its verdict (an ACK of one of its parity
    packets) is in, by the RTO if all m are lost. See docs/reliability.md."""
    k, m = code
    t = _pkt_time(path)
    p, rtt, rto = path.loss, path.rtt_s, path.rto_s
    rack = (path.rack_s or RACK_FACTOR * rtt) + rtt  # detection wait, then the resend's ACK
    if k == 0:
        n = max(1, math.ceil(size / path.payload))
        base = n * t * (1 + p) + rtt
        extra = _last_failure_extra(n, p, t, rack, rto, min(n, path.reorder_pkts))
        again = (1.0 - (1.0 - p * p) ** n) * rto
        acks = p**2 * rto  # the last packet's ACK and the one after it lost: a timeout
        return base + extra + again + acks
    payload = path.payload - 16  # a coded packet leaves room for its parity's header
    n = max(1, math.ceil(size / payload))
    blocks = math.ceil(n / k)
    kk = min(k, n)
    fail = _binom_tail(kk + m, p, m)
    block_s = (kk + m) * t
    base = (n + blocks * m) * t * (1 + fail * p) + rtt
    tail = (1 - p**m) * rack + p**m * rto  # the verdict needs one of the m parity ACKed
    extra = _last_failure_extra(blocks, fail, block_s, rack, tail, 1)
    again = (1.0 - (1.0 - fail * p) ** blocks) * rto
    acks = p ** (2 + m) * rto  # every parity packet arriving late is ACKed too
    return base + extra + again + acks


def best_choice(size: int, path: PathEstimate,
                codes: tuple[tuple[int, int], ...] = CANDIDATE_CODES) -> tuple[int, int]:
    """The choice (SR = (0, 0) or a code) with the lowest expected completion time."""
    best, best_t = SR, expected_completion(size, path, SR)
    for code in codes:
        t = expected_completion(size, path, code)
        if t < best_t:
            best, best_t = code, t
    return best


class AdaptivePolicy:
    """One PDC's choice between selective repeat and coding, from live measurements.

    ``observe_path`` takes the engine's path counters (``nw_peer_path``) after a
    message completed, ``observe_message`` the message's size and completion
    time; ``choose`` gives the code for the next message of ``size`` bytes.
    Loss is estimated from data bytes sent (first transmissions and resends)
    versus data bytes the peer reported receiving (decoded packets are not
    received; parity counts on neither side), averaged over about
    ``loss_half_life_bytes`` of traffic so that the estimate follows a change of
    conditions within a few messages; the average starts from ``prior_loss``
    over ``prior_bytes`` (1 % over 1 MiB), which the first few MiB wash out.
    Until the first RTT sample exists the
    choice is ``initial`` (default (32, 4): 12.5 % parity), a hedge: on a clean
    path it costs one message's parity, on a lossy one it spares the first
    messages selective repeat's timeouts (which also raise the PDC's learnt
    RTO floor for the messages after them)."""

    def __init__(self, *, rto_floor_s: float = 1e-3, payload: int = 4040,
                 rate_bps: float | None = None, loss_half_life_bytes: float = 8 * 2**20,
                 hysteresis: float = 0.03, initial: tuple[int, int] = (32, 4),
                 prior_loss: float = 0.01, prior_bytes: float = 2**20) -> None:
        self.rto_floor_s = rto_floor_s
        self.payload = payload
        self.rate_hint = rate_bps
        self.half_life = loss_half_life_bytes
        self.hysteresis = hysteresis
        self.rtt_s = 0.0
        self.rttvar_s = 0.0
        self.rto_s = 0.0
        self.rack_s = 0.0
        self.rate_bps = 0.0
        # Decayed data bytes sent and lost, starting from a pessimistic prior
        # (prior_loss over prior_bytes) that the first few MiB of traffic wash out:
        # a few lucky packets must not talk the policy out of coding.
        self._sent = float(prior_bytes)
        self._lost = prior_loss * prior_bytes
        self._last = (0, 0)  # the PDC's counters start at zero: the first message counts
        self.code: tuple[int, int] = initial

    @property
    def loss(self) -> float:
        """Estimated packet loss probability."""
        return max(0.0, self._lost / self._sent) if self._sent > 0 else 0.0

    def observe_path(self, path: dict[str, int]) -> None:
        """Fold in ``nw_peer_path``'s counters (call when the PDC has nothing in flight):
        RTT, the engine's current RTO (its learnt floor included) and bytes."""
        if path["srtt_ns"]:
            self.rtt_s = path["srtt_ns"] / 1e9
            self.rttvar_s = path["rttvar_ns"] / 1e9
        self.rto_s = path.get("rto_ns", 0) / 1e9
        self.rack_s = path.get("rack_wait_ns", 0) / 1e9
        tx, rx = path["tx_bytes"], path["rx_bytes"]
        dtx, drx = tx - self._last[0], rx - self._last[1]
        if dtx > 0:
            decay = 0.5 ** (dtx / self.half_life)
            self._sent = self._sent * decay + dtx
            self._lost = self._lost * decay + max(0, dtx - max(0, drx))
        self._last = (tx, rx)

    def observe_message(self, size: int, seconds: float) -> None:
        """A message of ``size`` bytes completed ``seconds`` after it was posted."""
        busy = seconds - self.rtt_s
        if size >= 16 * self.payload and busy > 0:
            self.rate_bps = max(self.rate_bps, size * 8 / busy)

    @property
    def loss_bound(self) -> float:
        """The loss estimate plus two standard errors over the packets it rests on: the
        policy plans for this, because too little parity costs timeouts while too much
        costs only bandwidth."""
        p = self.loss
        n = max(1.0, self._sent / (self.payload + HEADER_BYTES))
        return min(0.5, p + 2.0 * math.sqrt(p * (1.0 - p) / n))

    def estimate(self) -> PathEstimate | None:
        """The current path estimate (loss: :attr:`loss_bound`), or None before any RTT sample."""
        if self.rtt_s <= 0:
            return None
        rate = self.rate_hint or self.rate_bps or 10e9
        rto = max(self.rto_floor_s, self.rtt_s + 4 * self.rttvar_s, self.rto_s)
        return PathEstimate(self.rtt_s, rate, self.loss_bound, rto, self.payload,
                            rack_s=self.rack_s)

    def choose(self, size: int) -> tuple[int, int]:
        """The code for the next ``size``-byte message ((0, 0) = selective repeat)."""
        path = self.estimate()
        if path is None:
            return self.code
        best = best_choice(size, path)
        if best != self.code:
            now_t = expected_completion(size, path, self.code)
            if expected_completion(size, path, best) < now_t * (1 - self.hysteresis):
                self.code = best
        return self.code
