"""Runtime files, the demo experiment, plots and the ``netweft`` command line."""

from netweft.testbed import moved_modules

moved_modules.install()
