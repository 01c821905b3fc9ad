"""Old module paths of ``netweft.transport`` that moved, kept for one release.

One table maps each old dotted name to the module's new one. A finder on
``sys.meta_path`` (installed by the package's ``__init__``) answers only for
those names, only when the ordinary finders find nothing there: importing the
old name warns with a ``DeprecationWarning`` and gives the new module itself
(the same object, so ``isinstance`` checks and module state are shared).
"""

from __future__ import annotations

import importlib
import sys
import warnings
from collections.abc import Sequence
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

# old name -> new name (issue 21: the transport's folders show its parts)
MOVED: dict[str, str] = {
    "netweft.transport.layers": "netweft.transport.wire.layers",
    "netweft.transport.udp_driver": "netweft.transport.udp.driver",
    "netweft.transport.socket_loss": "netweft.transport.udp.socket_loss",
    "netweft.transport.simulation": "netweft.transport.sim.simulation",
    "netweft.transport.event_loop": "netweft.transport.sim.event_loop",
    "netweft.transport.ring_allreduce": "netweft.transport.collectives.ring_allreduce",
    "netweft.transport.aggregation_codec": "netweft.transport.collectives.aggregation.codec",
    "netweft.transport.aggregation_layer": "netweft.transport.collectives.aggregation.layer",
    "netweft.transport.aggregation_sim": "netweft.transport.collectives.aggregation.sim",
    "netweft.transport.aggregation_udp": "netweft.transport.collectives.aggregation.udp",
    "netweft.transport.aggregation_worker": "netweft.transport.collectives.aggregation.worker",
    "netweft.transport.quantization": "netweft.transport.collectives.aggregation.quantization",
    "netweft.transport.multicast_header": "netweft.transport.collectives.multicast.header",
    "netweft.transport.multicast_udp": "netweft.transport.collectives.multicast.udp",
    "netweft.transport.reliable_multicast": "netweft.transport.collectives.multicast.reliable",
    "netweft.transport.broadcast_udp": "netweft.transport.collectives.multicast.broadcast",
    "netweft.transport.impairments": "netweft.transport.sim.wire",
    "netweft.transport.switch_port": "netweft.transport.sim.port",
    "netweft.transport.fabric": "netweft.transport.sim.network",
}


class _AliasLoader(Loader):
    """Loads an old name as the module now at ``target``, with a warning."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.target_spec: ModuleSpec | None = None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        # stacklevel 2: the warnings machinery skips importlib's own frames, so
        # the warning names the line holding the old import.
        warnings.warn(f"{spec.name} moved to {self.target}; the old name goes in the "
                      f"next release", DeprecationWarning, stacklevel=2)
        module = importlib.import_module(self.target)
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the target ran when it was imported); only give the
        module back its own spec, which the import system set to the old name's."""
        module.__spec__ = self.target_spec


class MovedModuleFinder(MetaPathFinder):
    """Finds the old names of :data:`MOVED`; every other name is not its business."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put the finder last on ``sys.meta_path`` (once), after the ordinary finders."""
    if not any(isinstance(f, MovedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
