"""Per-switch context ``X`` that the generated pipeline code reads and writes.

It carries what BMv2 keeps in packet registers and switch-wide state: the
current time (microseconds, from the switch's injectable clock), the
packet's ingress length, clone/resubmit/recirculate/truncate requests made
by the program, the direct meter colour of the last table hit, and the
hash/checksum/random services.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from netweft.emulation.v1model.hash_algorithms import (
    HashAlgorithms,
    concat_fields,
    csum16_of_bits,
    pack_fields,
)

LOG = logging.getLogger("netweft.switch")


class PacketContext:
    """Mutable per-pass state; :meth:`start_pass` resets the per-packet requests."""

    def __init__(self, algorithms: HashAlgorithms) -> None:
        self.algorithms = algorithms
        self.now = 0
        self.ilen = 0
        self.sm: Any = None
        self.payload = b""
        self.digests: list[tuple[int, Any]] = []
        self.logs: list[str] = []
        self.start_pass(None, 0, 0)

    def start_pass(self, sm: Any, now: int, ilen: int) -> None:
        """Forget the previous pass's requests."""
        self.sm = sm
        self.now = now
        self.ilen = ilen
        self.clone_session: int | None = None
        self.clone_field_list: int | None = None
        self.resubmit: tuple[int | None] | None = None
        self.recirculate: tuple[int | None] | None = None
        self.truncate: int | None = None
        self.checksum_error = 0
        self.dmeter = 0
        self.pending_digest: tuple[int, Any] | None = None

    def hash(self, algorithm: str, fields: Iterable[tuple[int, int]]) -> int:
        """``algorithm`` over BMv2's packing of the field list."""
        return self.algorithms.get(algorithm)(pack_fields(fields))

    def checksum(self, algorithm: str, fields: Iterable[tuple[int, int]],
                 with_payload: bool) -> int:
        """A checksum over the field list (and the unparsed payload if asked)."""
        if algorithm == "csum16" and not with_payload:
            return csum16_of_bits(*concat_fields(fields))
        data = pack_fields(fields)
        if with_payload:
            data += self.payload
        return self.algorithms.get(algorithm)(data)

    def hash_bits(self, algorithm: str, acc: int, nbits: int) -> int:
        """``algorithm`` over a bit string (zero-padded to bytes at the end, as BMv2)."""
        pad = (-nbits) % 8
        return self.algorithms.get(algorithm)((acc << pad).to_bytes((nbits + pad) // 8, "big"))

    def checksum_bits(self, algorithm: str, acc: int, nbits: int, with_payload: bool) -> int:
        """A checksum over a bit string (and the unparsed payload if asked)."""
        if algorithm == "csum16" and not with_payload:
            return csum16_of_bits(acc, nbits)
        pad = (-nbits) % 8
        data = (acc << pad).to_bytes((nbits + pad) // 8, "big")
        if with_payload:
            data += self.payload
        return self.algorithms.get(algorithm)(data)

    def request_truncate(self, length: int) -> None:
        """v1model ``truncate``: as BMv2's ``Packet::truncate``, the smallest length wins."""
        if self.truncate is None or length < self.truncate:
            self.truncate = length

    def random(self, lo: int, hi: int) -> int:
        """v1model ``random``."""
        return self.algorithms.random_in(lo, hi)

    def digest(self, receiver: int, value: Any) -> None:
        """Request a digest; as simple_switch, the last request of an ingress pass is sent."""
        self.pending_digest = (receiver, value)

    def log_msg(self, msg: str, values: list[int]) -> None:
        """v1model ``log_msg``: ``{}`` placeholders are replaced by the values."""
        text = msg
        for v in values:
            text = text.replace("{}", str(v), 1)
        self.logs.append(text)
        LOG.info("log_msg: %s", text)
