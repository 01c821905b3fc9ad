"""The ``netweft`` commands, one module per command.

Each module has a ``register(subparsers)`` that adds its parser; ``pyproject.toml``
names them in the ``netweft.commands`` entry point group, which
:mod:`netweft.testbed.command_line` loads.
"""
