"""The embedded P4 switch, switch processes, the network builder and captures.

Modules that moved keep their old import paths for one release
(:mod:`netweft.emulation.moved_modules`).
"""

from netweft.emulation import moved_modules as _moved_modules

_moved_modules.install()
