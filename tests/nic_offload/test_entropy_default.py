"""The default entropy policy on the wire: a new UDP source port every second
packet (each pair can leave as one UDP GSO send), round robin over all values."""

from engine_net import EngineNet

from netweft.nic_offload import ffi, lib


def test_default_entropy_changes_every_second_packet_and_covers_every_value():
    cfg = ffi.new("nw_config_t *")
    lib.nw_config_default(cfg)
    assert cfg.entropy_burst == 2
    net = EngineNet(seed=4)
    a = net.add("10.0.0.1", entropy_base=2000, entropy_count=8)
    b = net.add("10.0.0.2")
    net.record = True
    size = 40 * lib.nw_max_payload(a.engine)
    src, _ = net.register(a, size, lib.NW_ACCESS_LOCAL)
    _, rkey = net.register(b, size, lib.NW_ACCESS_REMOTE_WRITE)
    assert lib.nw_post_write(a.engine, net.peer(a, b), 1, src, size, rkey, 0) == 0
    net.run(until=lambda: a.completions)
    ports = [sp for sp, dst, _ in net.sent if dst == b.addr][:40]
    pairs = [ports[i:i + 2] for i in range(0, 40, 2)]
    assert all(p[0] == p[1] for p in pairs)
    assert all(pairs[i][0] != pairs[i + 1][0] for i in range(len(pairs) - 1))
    assert set(ports) == set(range(2000, 2008))
