"""The device config of SetForwardingPipelineConfig, as clients send it.

p4runtime-shell sends the compiler's device config file as it is; the p4lang
tutorials' ``p4runtime_lib`` wraps it in ``p4.tmp.P4DeviceConfig`` (PI's
message: ``reassign = 1, extras = 2, device_data = 3``; PI's newer layout drops
``reassign``: ``extras = 1, device_data = 2``).  The ``p4runtime`` package has
no ``p4.tmp`` module, so both layouts are declared here as descriptors and
decoded with protobuf itself.
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import DecodeError


def _wrapper_classes() -> list[type]:
    pool = descriptor_pool.DescriptorPool()
    classes = []
    for package, fields in (
            ("netweft.p4tmp.legacy", (("reassign", 1, "TYPE_BOOL"),
                                      ("device_data", 3, "TYPE_BYTES"))),
            ("netweft.p4tmp.current", (("device_data", 2, "TYPE_BYTES"),))):
        proto = descriptor_pb2.FileDescriptorProto(name=f"{package}.proto", package=package,
                                                   syntax="proto3")
        message = proto.message_type.add(name="P4DeviceConfig")
        for name, number, kind in fields:
            message.field.add(name=name, number=number,
                              type=getattr(descriptor_pb2.FieldDescriptorProto, kind),
                              label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
        pool.Add(proto)
        descriptor = pool.FindMessageTypeByName(f"{package}.P4DeviceConfig")
        classes.append(message_factory.MessageFactory(pool).GetPrototype(descriptor))
    return classes


_LEGACY, _CURRENT = _wrapper_classes()


def unwrap_device_config(data: bytes) -> bytes:
    """The compiler's device config file inside ``data`` (as it is, or unwrapped)."""
    if data.lstrip()[:1] in (b"{", b"["):
        return data  # a JSON file sent as it is (p4runtime-shell)
    for cls in (_LEGACY, _CURRENT):
        wrapper = cls()
        try:
            wrapper.ParseFromString(data)
        except DecodeError:
            continue
        if wrapper.device_data:
            return wrapper.device_data
    return data
