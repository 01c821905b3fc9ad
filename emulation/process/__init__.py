"""Switch processes: the embedded switch driven by frames on real interfaces.

:mod:`~.switch_process` is the process (its I/O loop, its ``--program`` command
line, :func:`~.switch_process.start_switch_process` to start one in a
namespace), :mod:`~.netweft_switch` the same switch behind simple_switch_grpc's
command line (``netweft-switch``), :mod:`~.build` what both command lines
build (:func:`~.build.build_switch`), :mod:`~.control` the control channel.
"""
