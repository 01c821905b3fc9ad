"""What the scapy layers decoded, keyed like the C codec's struct fields."""

from __future__ import annotations

from scapy.fields import ConditionalField
from scapy.packet import Packet, Raw

from netweft.transport.wire import layers

PART_OF = {
    layers.UETRequest: "pds", layers.UETUUD: "pds", layers.UETRUDI: "pds",
    layers.UETAck: "pds", layers.UETNack: "pds", layers.UETCtrl: "pds",
    layers.SESStd: "ses", layers.SESRsp: "rsp", layers.SESRspData: "rsp",
    layers.SESRspDataSmall: "rsp", layers.NWParity: "parity",
}


def _present_fields(layer: Packet):
    for field in layer.fields_desc:
        if isinstance(field, ConditionalField) and not field._evalcond(layer):
            continue
        if "rsvd" not in field.name:
            yield field.name


def scapy_fields(pkt: Packet) -> tuple[dict, bytes]:
    """The UET fields scapy decoded, keyed like the C struct, and the payload."""
    out, layer = {}, pkt
    while layer and not isinstance(layer, Raw):
        part = PART_OF.get(type(layer))
        if part is not None:
            for name in _present_fields(layer):
                value = layer.getfieldval(name)
                out[f"{part}.{name}"] = value if isinstance(value, bytes) else int(value)
        layer = layer.payload
    return out, bytes(layer) if isinstance(layer, Raw) else b""
