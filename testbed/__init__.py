"""The testbeds and the ``netweft`` command line: ``command_line`` (the entry point),
``commands/`` (one module per command), ``bench/`` (one per bench), ``perf/``,
``experiments/`` (the demo and the emulated testbeds), ``capture`` and the topologies."""

from netweft.testbed import moved_modules

moved_modules.install()  # the old module names import for one more release, with a warning
