"""Which tables support idle timeouts: ``support_timeout = true`` in the P4 source.

Their entries count their hits (:attr:`~.match_table.TableEntry.hits`) so that
the P4Runtime server can tell an idle entry from a used one; P4Info marks them
``idle_timeout_behavior: NOTIFY_CONTROL``.
"""

from __future__ import annotations

from netweft.p4.compiler import ir


def supports_idle_timeout(table: ir.P4Table) -> bool:
    """True when ``table`` declares ``support_timeout = true``."""
    prop = table.other_properties.get("support_timeout") if table.other_properties else None
    return prop is not None and isinstance(prop.value, ir.BoolLiteral) and bool(prop.value.value)
