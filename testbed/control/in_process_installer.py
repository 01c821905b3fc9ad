"""Writes installed on an embedded switch in this process, through
:class:`~netweft.emulation.switch.SoftSwitch`'s own API: names resolved by the switch
(fully qualified or an unambiguous suffix, as over P4Runtime), no P4Info, no encoding.

The in-process fabrics and benches configure their switches with it; given the same
writes it leaves the state :mod:`.p4runtime_installer` leaves through a switch's
P4Runtime server.
"""

from __future__ import annotations

from collections.abc import Iterable

from netweft.emulation.switch import SoftSwitch, SwitchError
from netweft.emulation.v1model.match_table import TableError
from netweft.testbed.control.entries import (
    InstallError,
    Lpm,
    MulticastWrite,
    RegisterWrite,
    TableWrite,
    Write,
)


def install_in_process(switch: SoftSwitch, writes: Iterable[Write], name: str = "switch"
                       ) -> None:
    """Put ``writes`` on ``switch`` (which holds none of them yet), in order; raises
    :class:`~.entries.InstallError` naming ``name`` and the write the switch refused."""
    for write in writes:
        try:
            _install(switch, write)
        except (SwitchError, TableError) as err:
            raise InstallError(f"{name}: {write.describe()}: {err}") from None


def _install(switch: SoftSwitch, write: Write) -> None:
    if isinstance(write, TableWrite):
        params = dict(write.params)
        if write.default:
            switch.table_set_default(write.table, write.action, params)
            return
        match = {field: (value.value, value.prefix_len) if isinstance(value, Lpm) else value
                 for field, value in write.match}
        switch.table_add(write.table, match, write.action, params, write.priority or None)
    elif isinstance(write, MulticastWrite):
        if write.group_id in switch.pre.groups:  # mc_group_set would replace it
            raise SwitchError(f"multicast group {write.group_id} exists")
        switch.mc_group_set(write.group_id, write.replicas)
    elif isinstance(write, RegisterWrite):
        switch.register_write(write.register, write.index, write.value)
    else:
        raise TypeError(f"not a write: {write!r}")
