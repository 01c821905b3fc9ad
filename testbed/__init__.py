"""Runtime files, the demo experiment, plots and the ``netweft`` command line."""
