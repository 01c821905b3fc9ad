"""Checks of a class assembled from mixin parts against its declared host protocol.

A part may use, through ``self``, what it defines itself and what the host
protocol declares; nothing else, and never another part's ``_private`` name.
The protocol declares exactly what the parts share (no stale entries), with
the implementations' signatures.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from typing import Any


def _class_node(cls: type) -> ast.ClassDef:
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    node = tree.body[0]
    assert isinstance(node, ast.ClassDef) and node.name == cls.__name__
    return node


def own_and_used(cls: type) -> tuple[set[str], set[str]]:
    """Names ``cls``'s own body defines (methods, class attributes, ``self.x = ...``)
    and the ``self.x`` names its methods read or call."""
    node = _class_node(cls)
    own: set[str] = set()
    used: set[str] = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            own.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            own.add(item.target.id)
        elif isinstance(item, ast.Assign):
            own.update(t.id for t in item.targets if isinstance(t, ast.Name))
    for sub in ast.walk(node):
        targets = []
        if isinstance(sub, ast.Assign):
            targets = sub.targets
        elif isinstance(sub, ast.AnnAssign):
            targets = [sub.target]
        for target in targets:
            if (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                    and target.value.id == "self"):
                own.add(target.attr)
        if (isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name)
                and sub.value.id == "self"):
            used.add(sub.attr)
    return own, used


def protocol_members(protocol: type) -> set[str]:
    """Attributes and methods a Protocol class declares itself."""
    names = set(protocol.__dict__.get("__annotations__", {}))
    names.update(name for name, value in vars(protocol).items()
                 if inspect.isfunction(value) and not name.startswith("__"))
    return names


def host_problems(host: type, parts: list[type], protocol: type) -> list[str]:
    """What breaks the host contract; empty when the protocol is the parts' whole
    shared surface."""
    declared = protocol_members(protocol)
    owners: dict[str, str] = {}
    uses: dict[type, set[str]] = {}
    for cls in [host, *parts]:
        own, used = own_and_used(cls)
        for name in own:
            owners.setdefault(name, cls.__name__)
        uses[cls] = used - own
    problems = []
    shared: set[str] = set()
    for cls, external in uses.items():
        for name in sorted(external):
            if name.startswith("_"):
                problems.append(f"{cls.__name__} uses {owners.get(name, '?')}'s private {name}")
            elif name not in declared:
                problems.append(f"{cls.__name__} uses {name} ({owners.get(name, '?')}'s), "
                                f"which {protocol.__name__} does not declare")
            shared.add(name)
    for name in sorted(declared - shared):
        problems.append(f"{protocol.__name__} declares {name}, which no part uses of another")
    for name in sorted(declared):
        proto_attr = vars(protocol).get(name)
        if inspect.isfunction(proto_attr):
            impl: Any = getattr(host, name, None)
            if impl is None:
                problems.append(f"{host.__name__} has no {name}")
            elif inspect.signature(impl) != inspect.signature(proto_attr):
                problems.append(f"{name}: {protocol.__name__} says "
                                f"{inspect.signature(proto_attr)}, {host.__name__} has "
                                f"{inspect.signature(impl)}")
    return problems
