"""Mininet integration: :class:`NetweftSwitch`, a Mininet ``Switch`` that runs netweft's switch.

It starts ``python -m netweft.emulation.process.switch_process`` on the switch's
interfaces (Mininet's port numbers), with a P4 program, a runtime file, BMv2-style
pcaps, a packet trace and the traffic manager's per-port link settings::

    from mininet.net import Mininet
    from netweft.emulation.network.mininet import NetweftSwitch

    net = Mininet(controller=None, autoStaticArp=True)
    h1, h2 = net.addHost("h1", ip="10.0.0.1/24"), net.addHost("h2", ip="10.0.0.2/24")
    s1 = net.addSwitch("s1", cls=NetweftSwitch, program="basic_forward",
                       runtime="s1-runtime.json", pcap_dir="pcaps")
    net.addLink(h1, s1, delay="5ms", loss=1, bw=100, max_queue_size=64)
    net.addLink(h2, s1)
    net.start()

Link parameters are Mininet's ``TCLink`` keywords given to a plain ``Link``
(Mininet's default link class), which keeps them on the interfaces without
calling ``tc``; the switch reads them at its end and its traffic manager
applies them (``delay``, ``jitter``, ``loss`` in percent, ``bw`` in Mbit/s,
``max_queue_size`` in packets). This kernel has no ``netem``, so ``TCLink``'s
own delay and loss cannot work here. With ``mn``: ``mn --custom
$(python -c 'import netweft.emulation.network.mininet as m; print(m.__file__)')
--switch netweft,program=basic_forward,runtime=s1-runtime.json``.

Mininet is imported from the PyPI ``mininet`` package installed with netweft
(the same code as Debian's ``mininet``, whose ``mnexec`` it uses).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

from mininet.node import Switch

from netweft.emulation.links.link_params import LinkParams, LinkParamsError
from netweft.emulation.links.port_options import PortOptions
from netweft.p4.programs import program as shipped_program

# Mininet's TCLink keywords, read from a link's interface parameters.
_LINK_KEYS = ("delay", "jitter", "loss", "bw", "max_queue_size")


class NetweftSwitchError(RuntimeError):
    """The switch could not start; the message says why (and what its log said)."""


class _SwitchHandle:
    """What :func:`start_switch_process` needs from a node, over a Mininet switch."""

    def __init__(self, switch: NetweftSwitch) -> None:
        self.switch = switch
        self.netns = f"the namespace of Mininet switch {switch.name}"

    def port_map(self) -> dict[int, str]:
        return self.switch.port_map()

    def popen(self, *argv: str, **kwargs: Any) -> subprocess.Popen:
        return self.switch.popen(list(argv), **kwargs)


class NetweftSwitch(Switch):
    """A Mininet switch whose data plane is netweft's embedded P4 switch.

    ``program``: a P4-16 v1model file or the name of one of netweft's programs
    (default ``basic_forward``); ``runtime``: a runtime file (``sX-runtime.json``);
    ``pcap_dir``: BMv2-style ``<iface>_in.pcap``/``<iface>_out.pcap``; ``log_file``:
    the switch process's messages (default ``/tmp/<name>-netweft.log``);
    ``trace_file``: the per-packet trace; ``priority_queues``: per port, 1..8;
    ``links``: extra ``--link`` settings by port (``{2: "delay=5ms,queue=32"}``);
    ``backend``: ``auto``, ``c`` or ``python`` (``--switch netweft,backend=c``; None:
    ``$NETWEFT_SWITCH_BACKEND`` or the default), see docs/native-backend.md.
    """

    def __init__(self, name: str, program: str | Path = "basic_forward",
                 runtime: str | Path | None = None, pcap_dir: str | Path | None = None,
                 log_file: str | Path | None = None, trace_file: str | Path | None = None,
                 priority_queues: int | str = 1, links: dict[int, str] | None = None,
                 backend: str | None = None, **params: Any) -> None:
        super().__init__(name, **params)
        path = Path(program)
        self.program = path if path.suffix == ".p4" or path.is_file() else shipped_program(
            str(program))
        self.runtime = Path(runtime) if runtime else None
        self.pcap_dir = Path(pcap_dir) if pcap_dir else None
        self.log_file = Path(log_file) if log_file else Path(f"/tmp/{name}-netweft.log")
        self.trace_file = Path(trace_file) if trace_file else None
        self.priority_queues = int(priority_queues)
        self.extra_links = dict(links or {})
        if backend not in (None, "auto", "c", "python"):
            raise NetweftSwitchError(f"switch {name}: backend {backend!r}; use auto, c or python")
        self.backend = backend
        self.process: subprocess.Popen | None = None

    def port_map(self) -> dict[int, str]:
        """Mininet port number to interface name (``s1-eth1``)."""
        return {port: intf.name for intf, port in self.ports.items() if intf.name != "lo"}

    def port_settings(self) -> dict[int, PortOptions]:
        """Per-port traffic-manager settings from the links' TCLink-style parameters."""
        out: dict[int, PortOptions] = {}
        for intf, port in self.ports.items():
            if intf.name == "lo" or intf.link is None:
                continue
            params = {k: intf.params[k] for k in _LINK_KEYS if intf.params.get(k) is not None}
            if not params:
                continue
            try:
                link = LinkParams.parse(
                    delay=params.get("delay"), jitter=params.get("jitter"),
                    loss=None if "loss" not in params else f"{params['loss']}%",
                    rate=params.get("bw"), queue=params.get("max_queue_size"),
                    where=f"{self.name} port {port}")
            except LinkParamsError as exc:
                raise NetweftSwitchError(str(exc)) from None
            peer = intf.link.intf2 if intf.link.intf1 is intf else intf.link.intf1
            out[port] = link.port_options(ingress_too=not isinstance(peer.node, Switch))
        return out

    def start(self, controllers: list) -> None:
        """Turn offloads off on both ends of every port, then start the switch process."""
        from netweft.emulation.process.switch_process import start_switch_process

        if shutil.which("ethtool") is None:
            raise NetweftSwitchError("ethtool is not installed (apt-get install ethtool)")
        for intf in self.intfList():
            if intf.name == "lo" or intf.link is None:
                continue
            for end in (intf.link.intf1, intf.link.intf2):
                # AF_PACKET forwards frames as they are: they need real checksums
                end.node.cmd(f"ethtool -K {end.name} tx off rx off tso off gso off gro off "
                             ">/dev/null 2>&1")
        if self.pcap_dir is not None:
            self.pcap_dir.mkdir(parents=True, exist_ok=True)
        links = [f"{port}:{spec}" for port, spec in self.extra_links.items()]
        try:
            settings = [text for port, opts in self.port_settings().items()
                        for text in opts.to_option(port)]
            self.process = start_switch_process(
                _SwitchHandle(self), self.program, self.runtime, log=self.log_file,
                links=settings + links, pcap_dir=self.pcap_dir, trace_file=self.trace_file,
                priority_queues=self.priority_queues, backend=self.backend)
        except RuntimeError as exc:
            raise NetweftSwitchError(f"switch {self.name}: {exc}") from None

    def stop(self, deleteIntfs: bool = True) -> None:  # noqa: N803 - Mininet's name
        """Stop the switch process, then let Mininet remove the interfaces."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        super().stop(deleteIntfs)


# ``mn --custom this_file --switch netweft,program=...`` finds the class here.
switches = {"netweft": NetweftSwitch}
