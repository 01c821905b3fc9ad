"""netweft's device config: round trip, the p4.tmp.P4DeviceConfig wrapper, and the
errors a wrong file gets."""

import json

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from netweft.p4.compiler import P4Error, compile_p4
from netweft.p4.compiler.device_config import (
    DeviceConfigError,
    device_config,
    dumps,
    load_device_config,
    preprocess_file,
)
from netweft.p4.compiler.p4info import build_p4info
from netweft.p4.programs import program


def _config(name: str = "ecmp_spray") -> bytes:
    path = str(program(name))
    return dumps(device_config(preprocess_file(path), path))


def _p4_device_config_class(with_reassign: bool = True):
    """p4.tmp.P4DeviceConfig as PI's p4/tmp/p4config.proto defines it (or its layout
    without ``reassign``), built here because the p4runtime package has no p4.tmp."""
    package = "test.tmp" if with_reassign else "test.tmp2"
    fd = descriptor_pb2.FileDescriptorProto(name=f"{package}.proto", package=package,
                                            syntax="proto3")
    msg = fd.message_type.add(name="P4DeviceConfig")
    extras = msg.nested_type.add(name="Extras")
    entry = extras.nested_type.add(name="KvEntry")
    entry.options.map_entry = True
    F = descriptor_pb2.FieldDescriptorProto
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    entry.field.add(name="value", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    extras.field.add(name="kv", number=1, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                     type_name=f".{package}.P4DeviceConfig.Extras.KvEntry")
    first = 1
    if with_reassign:
        msg.field.add(name="reassign", number=1, type=F.TYPE_BOOL, label=F.LABEL_OPTIONAL)
        first = 2
    msg.field.add(name="extras", number=first, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL,
                  type_name=f".{package}.P4DeviceConfig.Extras")
    msg.field.add(name="device_data", number=first + 1, type=F.TYPE_BYTES,
                  label=F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    return message_factory.MessageFactory(pool).GetPrototype(
        pool.FindMessageTypeByName(f"{package}.P4DeviceConfig"))


def test_round_trip_gives_the_same_program():
    loaded = load_device_config(_config())
    direct = compile_p4(program("ecmp_spray"))
    assert list(loaded.tables) == list(direct.tables)
    assert build_p4info(loaded) == build_p4info(direct)


def test_setting_the_same_config_again_reuses_the_compiled_program():
    data = _config("basic_forward")
    first = load_device_config(data)
    assert load_device_config(bytearray(data)) is first
    assert load_device_config(_config("ecmp_spray")) is not first


def test_config_carries_format_version_and_no_include_files():
    config = json.loads(_config())
    assert config["format"] == "netweft-p4-device-config"
    assert config["version"] == 1
    assert "#include" not in config["source"]


@pytest.mark.parametrize("with_reassign", [True, False])
def test_tutorial_wrapper_is_accepted(with_reassign):
    cls = _p4_device_config_class(with_reassign)
    wrapped = cls(device_data=_config("basic_forward"))
    if with_reassign:
        wrapped.reassign = True
    wrapped.extras.kv["k"] = "v"
    loaded = load_device_config(wrapped.SerializeToString())
    assert list(loaded.tables) == ["MyIngress.ipv4_lpm"]


@pytest.mark.parametrize("change, message", [
    ({"format": "other"}, "format is 'other'"),
    ({"version": 99}, "version 99 is not supported"),
    ({"source": None}, "no valid 'source'"),
])
def test_wrong_format_or_version_is_refused(change, message):
    config = json.loads(_config("basic_forward"))
    config.update(change)
    with pytest.raises(DeviceConfigError, match=message):
        load_device_config(json.dumps(config).encode())


def test_bmv2_json_is_named():
    with pytest.raises(DeviceConfigError, match="BMv2 JSON"):
        load_device_config(b'{"header_types": [], "pipelines": []}')


def test_garbage_is_refused():
    with pytest.raises(DeviceConfigError, match="not a netweft device config"):
        load_device_config(b"\x08\x01\x1a\x03abc")
    with pytest.raises(DeviceConfigError):
        load_device_config(b"\xff\xff\xff")


def test_errors_after_loading_name_the_original_file():
    path = str(program("basic_forward"))
    config = json.loads(dumps(device_config(preprocess_file(path), path)))
    lines = config["source"].split("\n")
    at = next(i for i, line in enumerate(lines) if "table ipv4_lpm" in line)
    lines[at] = lines[at].replace("table ipv4_lpm", "table ipv4_lpm ipv4_lpm")
    config["source"] = "\n".join(lines)
    with pytest.raises(P4Error) as err:
        load_device_config(json.dumps(config).encode())
    text = open(path).read().split("\n")
    source_line = next(i for i, line in enumerate(text, 1) if "table ipv4_lpm" in line)
    assert str(err.value).startswith(f"{path}:{source_line}:")
