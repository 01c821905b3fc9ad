"""The C engine's folders keep their promise: only ``src/io/`` (the I/O driver,
its rings, the tcx program, the frame parser, the neighbour cache) includes
socket, network-interface or packet-socket headers; the engine at the top of
``src/``, its congestion control (``cc/``) and erasure coding (``ec/``) are
sans-IO."""

import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "nic_offload" / "src"
IO_HEADERS = re.compile(r"#include\s*<(sys/socket|arpa/|netinet/|net/|linux/if_|linux/bpf|"
                        r"ifaddrs|poll|sys/eventfd|sys/ioctl)")


def test_only_the_io_folder_includes_socket_headers():
    offenders = sorted(str(c.relative_to(SRC)) for c in SRC.rglob("*.c")
                       if c.parent.name != "io" and IO_HEADERS.search(c.read_text()))
    assert not offenders, f"sans-IO sources include socket headers: {offenders}"


def test_the_io_folder_is_where_the_sockets_are():
    # the pattern matches what the driver really includes (so the test above can fail)
    assert IO_HEADERS.search((SRC / "io" / "io_driver.c").read_text())
    assert IO_HEADERS.search((SRC / "io" / "packet_ring.c").read_text())
