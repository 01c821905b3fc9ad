"""``netweft perf``'s library: goodput, latency and sweep tests of netweft beside the kernel.

``protocol`` (the control channel and what both ends share), ``server``,
``goodput``, ``latency``, ``sweep``, ``pair`` (a server and a client here), ``sim``
(the loss ratio in virtual time) and ``options`` (argument types); the command is
:mod:`netweft.testbed.commands.perf`. The names the old ``netweft.testbed.perf``
module offered still resolve here for one release, with a DeprecationWarning.
"""

from netweft.testbed.moved_modules import moved_name

__getattr__ = moved_name(__name__)
