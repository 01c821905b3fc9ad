"""netweft's P4Runtime server: the control plane of the embedded switch over gRPC.

:class:`~netweft.emulation.p4runtime.device.Device` owns a
:class:`~netweft.emulation.switch.SoftSwitch` and translates P4Runtime entities
to its Python control-plane API; :mod:`~netweft.emulation.p4runtime.server`
serves it over grpcio (``p4.v1.P4Runtime``), with arbitration, packet I/O
through the CPU port and digests on the stream channel.
"""
