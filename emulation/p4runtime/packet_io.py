"""PacketIn and PacketOut through the CPU port, with ``@controller_header`` metadata.

As in BMv2, a frame the program sends to the CPU port starts with the header
the program marks ``@controller_header("packet_in")``: its fields become the
PacketIn's metadata and the rest is the payload.  A PacketOut becomes a frame
arriving on the CPU port that starts with the ``packet_out`` header built
from its metadata.  Without such a header in the P4Info, frames pass whole.
"""

from __future__ import annotations

from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.errors import invalid
from netweft.emulation.p4runtime.p4info_index import P4InfoIndex


class PacketIO:
    """Converts between CPU-port frames and stream packets for one P4Info."""

    def __init__(self, index: P4InfoIndex) -> None:
        self.packet_in_header = index.packet_metadata.get("packet_in")
        self.packet_out_header = index.packet_metadata.get("packet_out")

    def packet_in(self, frame: bytes) -> p4runtime_pb2.PacketIn:
        """The PacketIn for a frame the switch sent to the CPU port."""
        out = p4runtime_pb2.PacketIn()
        header = self.packet_in_header
        if header is None:
            out.payload = frame
            return out
        bits = sum(m.bitwidth for m in header.metadata)
        nbytes = (bits + 7) // 8
        if len(frame) < nbytes:
            raise invalid(f"a CPU-port frame of {len(frame)} bytes is shorter than the "
                          f"packet_in header ({nbytes} bytes)")
        value = int.from_bytes(frame[:nbytes], "big") >> (nbytes * 8 - bits)
        shift = bits
        for m in header.metadata:
            shift -= m.bitwidth
            field = (value >> shift) & ((1 << m.bitwidth) - 1)
            out.metadata.add(metadata_id=m.id, value=bytestrings.encode(field))
        out.payload = frame[nbytes:]
        return out

    def frame(self, msg: p4runtime_pb2.PacketOut) -> bytes:
        """The frame a PacketOut enters the switch as (on the CPU port)."""
        header = self.packet_out_header
        if header is None:
            if msg.metadata:
                raise invalid("packet out: the P4Info has no packet_out controller header, "
                              "so metadata cannot be sent")
            return msg.payload
        specs = {m.id: m for m in header.metadata}
        given: dict[int, int] = {}
        for md in msg.metadata:
            spec = specs.get(md.metadata_id)
            if spec is None:
                raise invalid(f"packet out: no packet_out metadata with id {md.metadata_id}")
            if md.metadata_id in given:
                raise invalid(f"packet out: metadata {spec.name} given twice")
            given[md.metadata_id] = bytestrings.decode(md.value, spec.bitwidth,
                                                       f"packet out metadata {spec.name}")
        missing = [m.name for m in header.metadata if m.id not in given]
        if missing:
            raise invalid(f"packet out: missing metadata {', '.join(missing)}")
        value, bits = 0, 0
        for m in header.metadata:
            value = (value << m.bitwidth) | given[m.id]
            bits += m.bitwidth
        pad = (-bits) % 8
        return bytestrings.encode_width(value << pad, bits + pad) + msg.payload
