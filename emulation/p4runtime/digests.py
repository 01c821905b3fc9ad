"""DigestEntry configuration and DigestList delivery with acknowledgements.

A digest the program sends is matched to its P4Info digest by the struct's
field names, converted to ``p4.v1.P4Data`` and queued.  A list is sent when
it holds ``max_list_size`` digests or its oldest digest is ``max_timeout_ns``
old (0: at once).  Until the controller acknowledges a list, or
``ack_timeout_ns`` passes, the same data is not sent again (the
specification's duplicate suppression).  Digests without a configuration
are not sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from p4.config.v1 import p4info_pb2
from p4.v1 import p4data_pb2, p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.errors import already_exists, invalid, not_found
from netweft.emulation.p4runtime.pipeline import Pipeline

INSERT, MODIFY, DELETE = (p4runtime_pb2.Update.INSERT, p4runtime_pb2.Update.MODIFY,
                          p4runtime_pb2.Update.DELETE)


@dataclass
class _Stream:
    config: p4runtime_pb2.DigestEntry.Config
    pending: list[p4data_pb2.P4Data] = field(default_factory=list)
    pending_keys: set[bytes] = field(default_factory=set)
    unacked: dict[int, tuple[set[bytes], int]] = field(default_factory=dict)
    next_list_id: int = 1
    timer: threading.Timer | None = None


class Digests:
    """Digest configuration and delivery of one pipeline."""

    def __init__(self, pipeline: Pipeline, send: Callable[[p4runtime_pb2.DigestList], None],
                 lock: threading.RLock, clock: Callable[[], int] = time.monotonic_ns) -> None:
        self.pipeline = pipeline
        self._send = send
        self._lock = lock
        self._clock = clock
        self.streams: dict[int, _Stream] = {}
        type_info = pipeline.p4info.type_info
        self._shapes: list[tuple[int, list[str], p4info_pb2.P4DataTypeSpec]] = []
        for d in pipeline.index.all("digests"):
            names = _member_names(type_info, d.type_spec)
            self._shapes.append((d.preamble.id, names, d.type_spec))

    # ---------------------------------------------------------------- configuration

    def write(self, kind: int, msg: p4runtime_pb2.DigestEntry) -> None:
        info = self.pipeline.index.get("digests", msg.digest_id, "digest entry")
        did = info.preamble.id
        what = f"digest {info.preamble.name}"
        if kind == INSERT and did in self.streams:
            raise already_exists(f"{what} is configured")
        if kind in (MODIFY, DELETE) and did not in self.streams:
            raise not_found(f"{what} is not configured")
        if kind == DELETE:
            stream = self.streams.pop(did)
            if stream.timer:
                stream.timer.cancel()
            return
        config = msg.config
        if config.max_timeout_ns < 0 or config.ack_timeout_ns < 0 or config.max_list_size < 0:
            raise invalid(f"{what}: timeouts and list size cannot be negative")
        if kind == INSERT:
            self.streams[did] = _Stream(p4runtime_pb2.DigestEntry.Config())
        self.streams[did].config.CopyFrom(config)

    def read(self, msg: p4runtime_pb2.DigestEntry) -> Iterator[p4runtime_pb2.Entity]:
        if msg.digest_id:
            self.pipeline.index.get("digests", msg.digest_id, "digest entry")
        for did, stream in sorted(self.streams.items()):
            if msg.digest_id and did != msg.digest_id:
                continue
            entity = p4runtime_pb2.Entity()
            entity.digest_entry.digest_id = did
            entity.digest_entry.config.CopyFrom(stream.config)
            yield entity

    # ---------------------------------------------------------------- delivery

    def collect(self, raw: list[tuple[int, Any]]) -> None:
        """Queue the digests the switch produced (call with the device lock held)."""
        now = self._clock()
        for _receiver, value in raw:
            match = self._digest_of(value)
            if match is None:
                continue
            did, spec, value = match
            stream = self.streams.get(did)
            if stream is None:
                continue
            data = _to_p4data(self.pipeline.p4info.type_info, spec, value)
            key = data.SerializeToString(deterministic=True)
            if key in stream.pending_keys or any(
                    key in keys and now < deadline for keys, deadline in stream.unacked.values()):
                continue
            stream.pending.append(data)
            stream.pending_keys.add(key)
            config = stream.config
            if config.max_timeout_ns == 0 or (config.max_list_size and
                                              len(stream.pending) >= config.max_list_size):
                self._flush(did, stream)
            elif stream.timer is None:
                stream.timer = threading.Timer(config.max_timeout_ns / 1e9, self._expire, (did,))
                stream.timer.daemon = True
                stream.timer.start()

    def _expire(self, did: int) -> None:
        with self._lock:
            stream = self.streams.get(did)
            if stream is not None:
                stream.timer = None
                self._flush(did, stream)

    def _flush(self, did: int, stream: _Stream) -> None:
        if stream.timer is not None:
            stream.timer.cancel()
            stream.timer = None
        if not stream.pending:
            return
        now = self._clock()
        msg = p4runtime_pb2.DigestList(digest_id=did, list_id=stream.next_list_id,
                                       timestamp=time.time_ns())
        msg.data.extend(stream.pending)
        if stream.config.ack_timeout_ns:
            stream.unacked[stream.next_list_id] = (stream.pending_keys,
                                                   now + stream.config.ack_timeout_ns)
        stream.next_list_id += 1
        stream.pending, stream.pending_keys = [], set()
        stream.unacked = {k: v for k, v in stream.unacked.items() if v[1] > now}
        self._send(msg)

    def ack(self, msg: p4runtime_pb2.DigestListAck) -> None:
        """The controller acknowledged a list: its data may be sent again."""
        stream = self.streams.get(msg.digest_id)
        if stream is not None:
            stream.unacked.pop(msg.list_id, None)

    def close(self) -> None:
        """Stop pending timers (the pipeline is being replaced)."""
        for stream in self.streams.values():
            if stream.timer:
                stream.timer.cancel()

    def _digest_of(self, value: Any) -> tuple[int, p4info_pb2.P4DataTypeSpec, Any] | None:
        """The P4Info digest whose fields are the value's: by name for a struct value,
        by count for a list expression (``digest<T>(r, {a, b})``)."""
        for did, shape, spec in self._shapes:
            if isinstance(value, dict) and list(value) == shape:
                return did, spec, value
            if isinstance(value, tuple) and len(value) == len(shape):
                if spec.WhichOneof("type_spec") == "tuple":
                    return did, spec, value
                return did, spec, dict(zip(shape, value, strict=True))
        return None


def _member_names(type_info: p4info_pb2.P4TypeInfo, spec: p4info_pb2.P4DataTypeSpec
                  ) -> list[str]:
    kind = spec.WhichOneof("type_spec")
    if kind == "struct":
        return [m.name for m in type_info.structs[spec.struct.name].members]
    if kind == "header":
        return [m.name for m in type_info.headers[spec.header.name].members]
    if kind == "tuple":
        return [str(i) for i in range(len(spec.tuple.members))]
    return []


def _to_p4data(type_info: p4info_pb2.P4TypeInfo, spec: p4info_pb2.P4DataTypeSpec,
               value: Any) -> p4data_pb2.P4Data:
    out = p4data_pb2.P4Data()
    kind = spec.WhichOneof("type_spec")
    if kind == "struct":
        for m in type_info.structs[spec.struct.name].members:
            out.struct.members.append(_to_p4data(type_info, m.type_spec, _get(value, m.name)))
    elif kind == "header":
        out.header.is_valid = True
        for m in type_info.headers[spec.header.name].members:
            out.header.bitstrings.append(bytestrings.encode(int(_get(value, m.name))))
    elif kind == "tuple":
        for m, v in zip(spec.tuple.members, value, strict=False):
            out.tuple.members.append(_to_p4data(type_info, m, v))
    elif kind == "bool":
        out.bool = bool(value)
    else:
        out.bitstring = bytestrings.encode(int(value))
    return out


def _get(value: Any, name: str) -> Any:
    if isinstance(value, dict):
        return value[name]
    return getattr(value, name)
