"""Emulated networks: hosts and switches in network namespaces joined by veth links.

The builder (:mod:`~.builder`) is this package's public face, so
``from netweft.emulation.network import Network`` reads as before;
:mod:`~.mininet` holds :class:`~.mininet.NetweftSwitch`, netweft's switch for
Mininet scripts (imported on its own: it needs Mininet).
"""

from netweft.emulation.network.builder import (
    DEFAULT_PREFIX,
    OWNER_DIR,
    Host,
    Interface,
    Link,
    Network,
    NetworkError,
    Node,
    Switch,
    leftover_namespaces,
    leftover_owner_files,
    leftover_root_links,
    link_has_switch,
    remove_namespace,
    remove_root_link,
)

__all__ = [
    "DEFAULT_PREFIX",
    "OWNER_DIR",
    "Host",
    "Interface",
    "Link",
    "Network",
    "NetworkError",
    "Node",
    "Switch",
    "leftover_namespaces",
    "leftover_owner_files",
    "leftover_root_links",
    "link_has_switch",
    "remove_namespace",
    "remove_root_link",
]
