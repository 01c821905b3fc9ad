"""Where a switch would send a frame, asked of an in-process replica of it.

The replica is a :class:`~netweft.emulation.switch.SoftSwitch` running the same
program behind a P4Runtime :class:`~netweft.emulation.p4runtime.device.Device`,
given the same writes the controller installs; the frame goes through
``process`` (no sockets, no clock). The experiments use it to pick flows whose
flow hashes collide on a real switch, with the program's own hash.
"""

from __future__ import annotations

from pathlib import Path

from netweft.emulation.p4runtime.device import Device
from netweft.emulation.switch import SoftSwitch
from netweft.p4.compiler import compile_p4
from netweft.p4.compiler.p4info import build_p4info
from netweft.testbed.control.entity_encoder import EntityEncoder
from netweft.testbed.control.fabric.installer import InstallError, binding_for
from netweft.testbed.control.fabric.plan import SwitchPlan
from netweft.testbed.control.fabric.settings import FabricSettings
from netweft.testbed.control.p4runtime_installer import updates_for


class SwitchReplica:
    """One switch's program with one switch's plan installed, in this process."""

    def __init__(self, program: Path, plan: SwitchPlan, settings: FabricSettings) -> None:
        compiled = compile_p4(str(program))
        p4info = build_p4info(compiled)

        def no_loader(_config: bytes):
            raise ValueError("the replica loads its program directly")

        self.device = Device(no_loader, device_id=0)
        self.device.install(p4info, b"", switch=SoftSwitch(compiled))
        encoder = EntityEncoder(p4info)
        binding = binding_for(encoder, plan.switch)
        updates = updates_for(encoder, binding.writes(plan, settings, encoder.has_table))
        errors = [e for e in self.device.write([u for u, _ in updates]) if e is not None]
        if errors:
            raise InstallError(f"replica of {plan.switch}: {errors[0]}")

    def ports(self, in_port: int, frame: bytes) -> list[int]:
        """The ports ``frame`` arriving on ``in_port`` leaves by (empty: dropped)."""
        return [port for port, _ in self.device.process(in_port, frame)]
