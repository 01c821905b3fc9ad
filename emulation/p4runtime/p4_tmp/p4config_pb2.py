"""``p4.tmp.P4DeviceConfig``, as PI's ``p4/tmp/p4config.proto`` defines it.

The p4lang tutorials' ``p4runtime_lib`` imports ``p4.tmp.p4config_pb2`` to wrap a
BMv2 JSON in this message (``reassign``, ``extras``, ``device_data``). The
``p4runtime`` package on PyPI does not ship PI's ``p4.tmp``, so netweft installs
this module as ``p4.tmp.p4config_pb2``. The descriptor is built here field by field
(what protoc would generate from the .proto), so no protoc is needed and it works
with the protobuf release the ``p4runtime`` package pins.
"""

from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.internal import builder as _builder

_F = descriptor_pb2.FieldDescriptorProto


def _file() -> descriptor_pb2.FileDescriptorProto:
    fd = descriptor_pb2.FileDescriptorProto(name="p4/tmp/p4config.proto", package="p4.tmp",
                                            syntax="proto3")
    msg = fd.message_type.add(name="P4DeviceConfig")
    extras = msg.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL,
                    json_name="key")
    entry.field.add(name="value", number=2, type=_F.TYPE_STRING, label=_F.LABEL_OPTIONAL,
                    json_name="value")
    extras.field.add(name="kv", number=1, type=_F.TYPE_MESSAGE, label=_F.LABEL_REPEATED,
                     type_name=".p4.tmp.P4DeviceConfig.Extras.KvEntry", json_name="kv")
    msg.field.add(name="reassign", number=1, type=_F.TYPE_BOOL, label=_F.LABEL_OPTIONAL,
                  json_name="reassign")
    msg.field.add(name="extras", number=2, type=_F.TYPE_MESSAGE, label=_F.LABEL_OPTIONAL,
                  type_name=".p4.tmp.P4DeviceConfig.Extras", json_name="extras")
    msg.field.add(name="device_data", number=3, type=_F.TYPE_BYTES, label=_F.LABEL_OPTIONAL,
                  json_name="deviceData")
    return fd


DESCRIPTOR = descriptor_pool.Default().AddSerializedFile(_file().SerializeToString())
_builder.BuildMessageAndEnumDescriptors(DESCRIPTOR, globals())
_builder.BuildTopDescriptorsAndMessages(DESCRIPTOR, "p4.tmp.p4config_pb2", globals())
