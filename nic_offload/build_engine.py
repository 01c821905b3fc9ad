"""cffi build of the C engine that plays the NIC.

Every ``.c`` file under ``src/`` is compiled into one extension module,
``netweft.nic_offload._engine``: the engine at the top of ``src/``, its
congestion control in ``cc/``, erasure coding in ``ec/``, the in-network
aggregation worker's core in ``collectives/``, and the I/O driver and the aggregation
worker's socket loop (the only code that touches sockets and rings) in ``io/``, the
wire model in ``link/``. The Python-visible API is the set of
declarations in ``cdef/*.h`` (plain C declarations, no preprocessor lines, in
the subset cffi's ``cdef`` parses); the full headers for C code live in
``include/``, one folder for all of ``src/``'s subfolders: the engine's modules
and its driver share ``engine_state.h``, ``netweft_nic.h`` includes the whole
API, and one ``-I`` path serves this build, the fuzz Makefile and the C tests.
"""

from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent
SOURCES = sorted(str(p.relative_to(HERE.parent)) for p in (HERE / "src").rglob("*.c"))
CDEFS = sorted((HERE / "cdef").glob("*.h"))

ffibuilder = FFI()
for cdef in CDEFS:
    ffibuilder.cdef(cdef.read_text())

ffibuilder.set_source(
    "netweft.nic_offload._engine",
    '#include "netweft_nic.h"\n',
    sources=SOURCES,
    include_dirs=[str(HERE / "include")],
    libraries=["isal", "pthread"],
    extra_compile_args=["-O2", "-std=gnu11", "-pthread", "-Wall", "-Wextra",
                        "-Wno-unused-parameter"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
