"""The embedded P4 switch, switch processes, the network builder and captures."""

from netweft.emulation import moved_modules

moved_modules.install()
