"""netweft's device config: the file ``netweft compile`` / ``netweft-p4c`` write as
``-o OUT.json`` and a P4Runtime server loads from SetForwardingPipelineConfig.

It is JSON holding the *preprocessed* program (so the switch needs none of the
include files) with the origin of each line (so that a load still reports
``file:line:col`` of the original source), tagged with a format name and version:

.. code-block:: json

    {"format": "netweft-p4-device-config", "version": 1, "program": "basic.p4",
     "compiler": "netweft 0.1.0", "source": "...", "files": ["basic.p4", ...],
     "lines": [[first_out_line, file_index, first_source_line, count], ...],
     "columns": {"12": [1, 2, ...]}}

:func:`load_device_config` also accepts the bytes wrapped in
``p4.tmp.P4DeviceConfig`` as the p4lang tutorials' ``p4runtime_lib`` sends them
(``device_data`` = the file; PI's layout and the one without ``reassign``); the
``p4runtime`` package has no ``p4.tmp`` module, so that wrapper is decoded here
from the protobuf wire format.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib.metadata import PackageNotFoundError, version

from netweft.p4.compiler.compiler import compile_preprocessed
from netweft.p4.compiler.errors import SourceLoc
from netweft.p4.compiler.preprocessor import PreprocessedSource, Preprocessor
from netweft.p4.compiler.program import Program

FORMAT = "netweft-p4-device-config"
VERSION = 1


class DeviceConfigError(ValueError):
    """The bytes are not a device config this netweft can load (message says why)."""


def _compiler_name() -> str:
    try:
        return f"netweft {version('netweft')}"
    except PackageNotFoundError:  # running from a source tree without installing
        return "netweft"


def device_config(src: PreprocessedSource, program_path: str) -> dict:
    """The device config (a JSON-ready dict) of a preprocessed program."""
    files: list[str] = []
    index: dict[str, int] = {}
    runs: list[list[int]] = []
    for out_line, loc in enumerate(src.line_origins, start=1):
        fi = index.get(loc.file)
        if fi is None:
            fi = index[loc.file] = len(files)
            files.append(loc.file)
        last = runs[-1] if runs else None
        if last is not None and last[1] == fi and last[0] + last[3] == out_line \
                and last[2] + last[3] == loc.line:
            last[3] += 1
        else:
            runs.append([out_line, fi, loc.line, 1])
    return {
        "format": FORMAT,
        "version": VERSION,
        "program": program_path,
        "compiler": _compiler_name(),
        "source": "\n".join(line.rstrip() for line in src.text.split("\n")),
        "files": files,
        "lines": runs,
        "columns": {str(k): v for k, v in src.column_maps.items()},
    }


def preprocess_file(path: str, include_dirs=(), defines=None) -> PreprocessedSource:
    """Run netweft's preprocessor over a P4 file (P4Error on a bad directive)."""
    return Preprocessor(include_dirs, defines).run_file(path)


def dumps(config: dict) -> bytes:
    """The device config file's bytes."""
    return (json.dumps(config, separators=(",", ":")) + "\n").encode()


# ------------------------------------------------------------------ loading


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise DeviceConfigError("truncated protobuf varint")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def unwrap_p4_device_config(data: bytes) -> bytes:
    """``device_data`` of a ``p4.tmp.P4DeviceConfig`` message: field 3 in PI's
    layout (1 reassign, 2 extras, 3 device_data), field 2 in the layout without
    ``reassign`` (1 extras, 2 device_data); empty if neither is there."""
    pos = 0
    fields: dict[int, bytes] = {}
    while pos < len(data):
        key, pos = _varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(data, pos)
            if pos + length > len(data):
                raise DeviceConfigError("truncated P4DeviceConfig field")
            fields[field] = data[pos:pos + length]
            pos += length
        else:
            raise DeviceConfigError(f"not a P4DeviceConfig message (wire type {wire})")
        if pos > len(data):
            raise DeviceConfigError("truncated P4DeviceConfig message")
    if 3 in fields:
        return fields[3]
    if fields.get(2, b"").lstrip().startswith(b"{"):  # an Extras message never does
        return fields[2]
    return b""


def _parse(data: bytes) -> dict:
    text = data.lstrip()
    if not text.startswith(b"{"):
        text = unwrap_p4_device_config(data).lstrip()
        if not text.startswith(b"{"):
            raise DeviceConfigError(
                "not a netweft device config (expected the JSON file that netweft-p4c or "
                "'netweft compile' writes with -o, or that file inside p4.tmp.P4DeviceConfig)")
    try:
        config = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DeviceConfigError(f"device config is not valid JSON: {exc}") from None
    if not isinstance(config, dict):
        raise DeviceConfigError("device config must be a JSON object")
    fmt = config.get("format")
    if fmt != FORMAT:
        if "header_types" in config or "pipelines" in config:
            raise DeviceConfigError("this is a BMv2 JSON written by p4c; netweft's switch loads "
                                    "the device config that netweft-p4c writes for the same "
                                    "program")
        raise DeviceConfigError(f"device config format is {fmt!r}, expected {FORMAT!r}")
    ver = config.get("version")
    if ver != VERSION:
        raise DeviceConfigError(f"device config version {ver!r} is not supported (this netweft "
                                f"reads version {VERSION}); recompile the program with "
                                "netweft-p4c")
    for key, kind in (("source", str), ("files", list), ("lines", list), ("program", str)):
        if not isinstance(config.get(key), kind):
            raise DeviceConfigError(f"device config has no valid {key!r}")
    return config


def _preprocessed(config: dict) -> PreprocessedSource:
    files = config["files"]
    origins: list[SourceLoc] = []
    try:
        for out_line, fi, line, count in config["lines"]:
            if out_line != len(origins) + 1:
                raise DeviceConfigError("device config line table is not contiguous")
            origins.extend(SourceLoc(files[fi], line + k, 1) for k in range(count))
        columns = {int(k): [int(c) for c in v] for k, v in config.get("columns", {}).items()}
    except (TypeError, ValueError, IndexError) as exc:
        if isinstance(exc, DeviceConfigError):
            raise
        raise DeviceConfigError(f"device config line table is malformed: {exc}") from None
    return PreprocessedSource(config["source"], origins, {}, columns)


def load_device_config(data: bytes) -> Program:
    """The program in a device config (the file's bytes, or them wrapped in
    ``p4.tmp.P4DeviceConfig``). DeviceConfigError for a wrong format or version,
    P4Error (``file:line:col``) if the program no longer compiles.

    The last few configs loaded are remembered: a controller that sets the same
    pipeline again (a PTF suite does before every test) gets the compiled program
    back at once instead of waiting seconds for the front end. A :class:`Program`
    is never changed after compilation, so switches built from it share it."""
    return _load(bytes(data))


@lru_cache(maxsize=4)
def _load(data: bytes) -> Program:
    config = _parse(data)
    return compile_preprocessed(_preprocessed(config), config["program"])
