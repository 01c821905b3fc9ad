"""What the switch-process tests share: a runtime file that routes to every host of a
one-switch network through basic_forward.p4, and stopping a process for good
(:func:`netweft.emulation.process_lifetime.stop_process`)."""

import json

from netweft.emulation.process_lifetime import stop_process  # noqa: F401 - shared


def basic_forward_runtime(net, path):
    """Write a runtime file with a /32 route per host of ``net``; returns ``path``."""
    entries = []
    for host in net.hosts:
        peer = net.peer_of(host.interfaces[0])
        entries.append({"table": "MyIngress.ipv4_lpm",
                        "match": {"hdr.ipv4.dstAddr": [host.ip_address, 32]},
                        "action_name": "MyIngress.ipv4_forward",
                        "action_params": {"dstAddr": host.mac, "port": peer.port}})
    path.write_text(json.dumps({"target": "netweft-embedded", "table_entries": entries}))
    return path
