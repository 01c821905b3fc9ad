"""``p4.v1.Action`` <-> the switch's ``(action name, argument tuple)``."""

from __future__ import annotations

from p4.config.v1 import p4info_pb2
from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime import bytestrings
from netweft.emulation.p4runtime.errors import invalid
from netweft.emulation.p4runtime.pipeline import Pipeline

TABLE_ONLY = p4info_pb2.ActionRef.TABLE_ONLY
DEFAULT_ONLY = p4info_pb2.ActionRef.DEFAULT_ONLY


def action_from_proto(pipeline: Pipeline, table_id: int, action: p4runtime_pb2.Action,
                      default: bool = False) -> tuple[str, tuple[int, ...]]:
    """Check an action against the table's P4Info and decode its parameters."""
    index = pipeline.index
    info = index.action(action.action_id)
    name = info.preamble.name
    ref = index.table_actions[table_id].get(action.action_id)
    table_name = index.name("tables", table_id)
    if ref is None:
        raise invalid(f"action {name} is not an action of table {table_name}")
    if default and ref.scope == TABLE_ONLY:
        raise invalid(f"action {name} is @tableonly in table {table_name}: not a default")
    if not default and ref.scope == DEFAULT_ONLY:
        raise invalid(f"action {name} is @defaultonly in table {table_name}")
    given: dict[int, int] = {}
    specs = index.params[info.preamble.id]
    for param in action.params:
        spec = specs.get(param.param_id)
        if spec is None:
            raise invalid(f"action {name}: no parameter with id {param.param_id}")
        if param.param_id in given:
            raise invalid(f"action {name}: parameter {spec.name} given twice")
        given[param.param_id] = bytestrings.decode(param.value, spec.bitwidth,
                                                   f"action {name} parameter {spec.name}")
    missing = [p.name for p in info.params if p.id not in given]
    if missing:
        raise invalid(f"action {name}: missing parameter(s) {', '.join(missing)}")
    return name, tuple(given[p.id] for p in info.params)


def action_to_proto(pipeline: Pipeline, name: str, args: tuple[int, ...]
                    ) -> p4runtime_pb2.Action:
    """The ``p4.v1.Action`` of an installed action."""
    action_id = pipeline.action_ids[name]
    out = p4runtime_pb2.Action(action_id=action_id)
    for spec, value in zip(pipeline.index.action(action_id).params, args, strict=False):
        out.params.add(param_id=spec.id, value=bytestrings.encode(value))
    return out
