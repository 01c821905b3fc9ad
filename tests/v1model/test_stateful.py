"""Meters (BMv2 trTCM), counters, registers, the PRE and clone sessions."""

import pytest

from netweft.emulation.v1model.counters import CounterArray
from netweft.emulation.v1model.meters import GREEN, RED, YELLOW, Meter, MeterArray
from netweft.emulation.v1model.registers import RegisterArray
from netweft.emulation.v1model.replication import CloneSessions, PacketReplicationEngine


def test_unconfigured_meter_is_green():
    assert Meter("packets").execute(0, 1500) == GREEN


def test_packet_meter_colours_over_time():
    m = Meter("packets")
    # CIR 1 packet per 1000 us burst 2, PIR 1 packet per 500 us burst 3
    m.set_rates([(0.001, 2), (0.002, 3)])
    colours = [m.execute(0, 1) for _ in range(4)]
    assert colours == [GREEN, GREEN, YELLOW, RED]
    # after 1000 us: +2 peak tokens, +1 committed token
    assert m.execute(1000, 1) == GREEN
    assert m.execute(1000, 1) == YELLOW
    assert m.execute(1000, 1) == RED


def test_byte_meter_uses_size_and_refills_up_to_burst():
    m = Meter("bytes")
    m.set_rates([(1.0, 1000), (2.0, 2000)])
    assert m.execute(0, 1500) == YELLOW
    assert m.execute(0, 600) == RED  # peak bucket has 500 left
    assert m.execute(0, 400) == GREEN
    assert m.execute(10_000_000, 1000) == GREEN  # refilled but capped at the bursts
    assert m.execute(10_000_000, 1000) == YELLOW


def test_meter_rates_must_increase():
    with pytest.raises(ValueError):
        Meter().set_rates([(2.0, 10), (1.0, 10)])


def test_meter_array_index_and_rates():
    arr = MeterArray("m", 2, "packets")
    arr.set_rates([(0.0, 1), (0.0, 1)], index=1)
    assert arr.execute(0, 0, 1) == GREEN
    assert arr.execute(1, 0, 1) == GREEN
    assert arr.execute(1, 0, 1) == RED
    assert arr.execute(5, 0, 1) == GREEN


def test_counter_and_register_arrays():
    c = CounterArray("c", 4)
    c.count(1, 100)
    c.count(1, 60)
    c.count(9, 60)  # ignored
    assert c.read(1) == (2, 160)
    with pytest.raises(IndexError):
        c.read(4)
    r = RegisterArray("r", 3, 8)
    r.write(0, 0x1FF)
    assert r.read(0) == 0xFF
    assert r.read(7) == 0


def test_pre_groups_and_clone_sessions():
    pre = PacketReplicationEngine()
    pre.set_group(1, [(2, 0), (3, 5)])
    assert pre.replicate(1) == [(2, 0), (3, 5)]
    assert pre.replicate(2) == []
    pre.set_group(1, [])
    assert pre.replicate(1) == []
    with pytest.raises(ValueError):
        pre.set_group(1, [(600, 0)])
    sessions = CloneSessions()
    sessions.set(5, 4, truncate=64)
    assert sessions.get(5).port == 4 and sessions.get(5).truncate == 64
    assert sessions.get(6) is None
