"""Runtime files: the p4lang tutorials' ``sX-runtime.json`` applied to a switch.

They belong to the control plane (moved here from ``testbed/``).

The format holds ``table_entries`` (``table``, ``match``, ``action_name``,
``action_params``, optional ``priority``, or ``default_action: true``),
``multicast_group_entries`` (``multicast_group_id`` and ``replicas`` of
``egress_port``/``instance``) and ``clone_session_entries`` (``clone_session_id``,
``replicas``, optional ``packet_length_bytes``). Match values follow the tutorials:
a scalar (or a one-element list) for exact and optional keys, ``[value, prefix_len]`` for lpm,
``[value, mask]`` for ternary, ``[low, high]`` for range.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any


class RuntimeFileError(ValueError):
    """A runtime file is malformed or names something the program lacks."""


def load_runtime_file(path: str | Path) -> dict[str, Any]:
    """Read and shape-check a runtime file."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise RuntimeFileError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise RuntimeFileError(f"{path}: the top level must be a JSON object")
    return data


def _match(match: dict[str, Any]) -> dict[str, Any]:
    """The switch's match values: a list is a (value, prefix/mask/high) pair, and a
    one-element list is the value itself (the tutorials' p4runtime_lib writes exact
    keys either way)."""
    out = {}
    for key, value in match.items():
        if isinstance(value, list):
            value = value[0] if len(value) == 1 else tuple(value)
        out[key] = value
    return out


def _apply(section: str, items: list, where: str, install: Callable[[dict], None]) -> int:
    """Install each item of one section; any error names the file, section and index."""
    for n, item in enumerate(items):
        try:
            install(item)
        except (KeyError, TypeError, ValueError, LookupError) as exc:
            raise RuntimeFileError(f"{where}: {section}[{n}]: {exc}") from exc
    return len(items)


def _table_entry(switch, entry: dict) -> None:
    params = entry.get("action_params", {})
    if entry.get("default_action"):
        switch.table_set_default(entry["table"], entry["action_name"], params)
    else:
        switch.table_add(entry["table"], _match(entry.get("match", {})),
                         entry["action_name"], params, priority=entry.get("priority"))


def _multicast_group(switch, group: dict) -> None:
    replicas = [(r["egress_port"], r.get("instance", 0)) for r in group["replicas"]]
    switch.mc_group_set(group["multicast_group_id"], replicas)


def _clone_session(switch, session: dict) -> None:
    replicas = session["replicas"]
    if len(replicas) != 1:
        raise ValueError("netweft's clone sessions have exactly one replica")
    switch.clone_session_set(session["clone_session_id"], replicas[0]["egress_port"],
                             truncate=session.get("packet_length_bytes") or None)


def apply_runtime_file(switch, source: str | Path | dict[str, Any]) -> int:
    """Install every entry of a runtime file on ``switch``; returns the number applied."""
    data = source if isinstance(source, dict) else load_runtime_file(source)
    where = "<dict>" if isinstance(source, dict) else str(source)
    return (_apply("table_entries", data.get("table_entries", []), where,
                   lambda e: _table_entry(switch, e))
            + _apply("multicast_group_entries", data.get("multicast_group_entries", []),
                     where, lambda g: _multicast_group(switch, g))
            + _apply("clone_session_entries", data.get("clone_session_entries", []), where,
                     lambda c: _clone_session(switch, c)))
