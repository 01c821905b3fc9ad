"""``p4.v1.MeterConfig`` (rates per second) <-> the switch's meter rates (per microsecond)."""

from __future__ import annotations

from collections.abc import Sequence

from p4.v1 import p4runtime_pb2

from netweft.emulation.p4runtime.errors import invalid


def rates_from_proto(config: p4runtime_pb2.MeterConfig) -> list[tuple[float, int]]:
    """``[(CIR, CBS), (PIR, PBS)]`` per microsecond; empty for the all-zero config (unset)."""
    if not (config.cir or config.cburst or config.pir or config.pburst):
        return []
    if min(config.cir, config.cburst, config.pir, config.pburst) < 0:
        raise invalid("meter config: rates and bursts cannot be negative")
    if config.cir > config.pir:
        raise invalid(f"meter config: cir {config.cir} is above pir {config.pir}")
    return [(config.cir / 1e6, config.cburst), (config.pir / 1e6, config.pburst)]


def meter_config_to_proto(rates: Sequence[tuple[float, int]]) -> p4runtime_pb2.MeterConfig:
    """The MeterConfig of configured rates."""
    (cir, cburst), (pir, pburst) = rates[0], rates[-1]
    return p4runtime_pb2.MeterConfig(cir=round(cir * 1e6), cburst=cburst,
                                     pir=round(pir * 1e6), pburst=pburst)
