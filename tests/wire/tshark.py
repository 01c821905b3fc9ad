"""Run tshark with netweft's Lua dissector and read back what it decoded."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import netweft.transport

LUA_DISSECTOR = Path(netweft.transport.__file__).parent / "wire" / "wireshark" / "netweft_uet.lua"
TSHARK = shutil.which("tshark")
EXTRA = {"nwuet.payload", "nwuet.payload_len", "nwuet.trimmed", "nwuet.error", "nwuet.gso_size",
         "nwuet.gso_segment"}


def _collect(node: list, out: dict) -> None:
    """Flatten tshark's JSON into ``out``. Objects arrive as lists of (key, value)
    tuples because tshark repeats keys; arrays arrive as plain lists."""
    for item in node:
        if not isinstance(item, tuple):
            if isinstance(item, list):
                _collect(item, out)
            continue
        key, value = item
        if isinstance(value, list):
            _collect(value, out)
        elif key.startswith("nwuet."):
            out[key] = value


def _run(pcap: Path, options: tuple[str, ...]) -> list:
    run = subprocess.run(
        [TSHARK, "-n", "-X", f"lua_script:{LUA_DISSECTOR}", *options, "-r", str(pcap),
         "-T", "json"],
        capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert "Lua: Error" not in run.stderr, run.stderr
    assert "Lua Error" not in run.stdout, "the dissector raised an error on some packet"
    return json.loads(run.stdout, object_pairs_hook=list)


def _layers(node: list, name: str, out: list) -> None:
    """Every value of key ``name`` anywhere in tshark's JSON, in order."""
    for item in node:
        if isinstance(item, tuple):
            key, value = item
            if key == name:
                out.append(value)
            elif isinstance(value, list):
                _layers(value, name, out)
        elif isinstance(item, list):
            _layers(item, name, out)


def decode_pcap_segments(pcap: Path, *options: str) -> list[list[dict]]:
    """Per frame, one dict of ``nwuet.*`` fields per UET packet the dissector found in
    it (several for a UDP GSO super-datagram)."""
    decoded = []
    for frame in _run(pcap, options):
        trees: list = []
        _layers(frame, "nwuet", trees)
        segments = []
        for tree in trees:
            fields: dict = {}
            _collect(tree, fields)
            segments.append(fields)
        decoded.append(segments)
    return decoded


def decode_pcap(pcap: Path, *options: str) -> list[dict]:
    """One dict per frame: the ``nwuet.*`` fields tshark's Lua dissector produced
    (``options`` are extra tshark arguments such as ``-o``/``-d``)."""
    run = subprocess.run(
        [TSHARK, "-n", "-X", f"lua_script:{LUA_DISSECTOR}", *options, "-r", str(pcap),
         "-T", "json"],
        capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    assert "Lua: Error" not in run.stderr, run.stderr
    assert "Lua Error" not in run.stdout, "the dissector raised an error on some packet"
    frames = json.loads(run.stdout, object_pairs_hook=list)
    decoded = []
    for frame in frames:
        fields: dict = {}
        _collect(frame, fields)
        decoded.append(fields)
    return decoded


def as_c_fields(tshark_fields: dict) -> dict:
    """The header fields of one frame keyed like the C struct (``pds.psn``), as ints/bytes."""
    out = {}
    for key, value in tshark_fields.items():
        if key in EXTRA:
            continue
        name = key[len("nwuet."):]
        out[name] = bytes.fromhex(value.replace(":", "")) if name.endswith("ccx_state") \
            else int(value, 0)
    return out


def payload_of(tshark_fields: dict) -> bytes:
    return bytes.fromhex(tshark_fields.get("nwuet.payload", "").replace(":", ""))
