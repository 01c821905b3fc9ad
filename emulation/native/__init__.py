"""The native (C) back end of the embedded switch (issue 20).

The typed IR of a program is lowered to C (:mod:`.c_lowering`), compiled with
the system C compiler at load time and cached by the hash of the source and
the flags (:mod:`.build`), and loaded through cffi.  :mod:`.driver` runs it
with BMv2 ``simple_switch`` semantics behind the same interface as the Python
back end (:mod:`netweft.emulation.pipeline`).  ``pipeline_abi.h`` is the ABI
the C packet I/O loop calls.  The packet I/O itself (:mod:`.dataplane`) is
a C loop over every port's AF_PACKET rings with the traffic manager in C.
"""
