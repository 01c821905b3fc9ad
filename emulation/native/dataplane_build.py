"""The native switch runtime's C build: compiled with cffi when first loaded, cached by hash.

The dataplane (rings, loop, traffic manager, replication, minimal forwarder,
stand-in pipeline, bench generator) is built at load time rather than at
install time because the native back end needs the system C compiler anyway
(the generated P4 pipeline is compiled when a program is loaded): both share
one requirement and one cache, an editable checkout rebuilds on its own when a
``dataplane_*.c`` changes, and a machine without a compiler still installs
netweft and falls back to the Python back end.  The cache key is the hash of
the sources, the declarations, the flags and the Python ABI; the shared object
lands in ``$NETWEFT_CACHE_DIR`` (default ``~/.cache/netweft/native``).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
from functools import cache
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent
SOURCES = ("dataplane_ring.c", "dataplane_tm.c", "dataplane_replication.c",
           "dataplane_forwarder.c", "dataplane_standin.c", "dataplane_loop.c",
           "dataplane_traffic.c", "dataplane_p4.c", "dataplane_wire.c", "dataplane_host.c",
           "dataplane_pcap.c")
HEADERS = ("dataplane_ring.h", "dataplane_tm.h", "dataplane_replication.h",
           "dataplane_pipeline.h", "dataplane_forwarder.h", "dataplane_standin.h",
           "dataplane_loop.h", "dataplane_traffic.h", "dataplane_p4.h", "pipeline_abi.h",
           "dataplane_wire.h", "dataplane_host.h", "dataplane_pcap.h")
# The one wire model (the links' C, shared with the NIC engine and the simulator) is
# compiled into the dataplane too: dataplane_wire.c calls it per frame.
NIC = HERE.parent.parent / "nic_offload"
WIRE_SOURCES = (NIC / "src" / "link" / "wire_model.c",)
WIRE_INCLUDE = NIC / "include"
CDEF = "dataplane_cdef.h"
CFLAGS = ("-O2", "-std=gnu11", "-Wall", "-Wextra", "-Wno-unused-parameter")


class NativeBuildError(RuntimeError):
    """The C compiler is missing or refused the dataplane's sources."""


def cache_dir() -> Path:
    """Where built shared objects are kept (``$NETWEFT_CACHE_DIR`` or ``~/.cache/netweft``)."""
    root = os.environ.get("NETWEFT_CACHE_DIR")
    base = Path(root) if root else Path(os.environ.get("XDG_CACHE_HOME",
                                                       Path.home() / ".cache")) / "netweft"
    return base / "native"


def source_hash(extra_flags: tuple[str, ...] = ()) -> str:
    """Hash of everything the build depends on."""
    h = hashlib.sha256()
    for name in (*SOURCES, *HEADERS, CDEF):
        h.update(name.encode() + b"\0" + (HERE / name).read_bytes())
    for path in (*WIRE_SOURCES, WIRE_INCLUDE / "wire_model.h"):
        h.update(path.name.encode() + b"\0" + path.read_bytes())
    h.update(" ".join((*CFLAGS, *extra_flags)).encode())
    h.update(sysconfig.get_config_var("EXT_SUFFIX").encode())
    return h.hexdigest()[:16]


def _compile(name: str, target_dir: Path, extra_flags: tuple[str, ...]) -> Path:
    from cffi import FFI

    if shutil.which(os.environ.get("CC", "cc")) is None and shutil.which("gcc") is None:
        raise NativeBuildError("no C compiler on PATH (install gcc)")
    ffi = FFI()
    ffi.cdef((HERE / CDEF).read_text())
    ffi.set_source(name, "\n".join(f'#include "{h}"' for h in HEADERS),
                   sources=[*(str(HERE / s) for s in SOURCES), *map(str, WIRE_SOURCES)],
                   include_dirs=[str(HERE), str(WIRE_INCLUDE)], libraries=["m"],
                   extra_compile_args=[*CFLAGS, *extra_flags],
                   extra_link_args=[f for f in extra_flags if f.startswith("-fsanitize")])
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir, prefix="build-") as tmp:
        try:
            built = Path(ffi.compile(tmpdir=tmp, verbose=False))
        except Exception as err:  # distutils' CompileError, LinkError, ...
            raise NativeBuildError(f"cannot build the native dataplane: {err}") from err
        final = target_dir / built.name
        os.replace(built, final)     # atomic: a concurrent loader sees all or nothing
    return final


def load(extra_flags: tuple[str, ...] = ()) -> ModuleType:
    """The compiled dataplane module (``.ffi``, ``.lib``), building it on first use."""
    env = tuple(os.environ.get("NETWEFT_DATAPLANE_CFLAGS", "").split())
    return _load((*env, *extra_flags))


@cache
def _load(extra_flags: tuple[str, ...]) -> ModuleType:
    """Build (or find in the cache) and import the module.

    ``extra_flags``: more compiler flags (e.g. sanitizers for tests; ``-fsanitize=...``
    flags are linked too); they key the cache.  ``$NETWEFT_DATAPLANE_CFLAGS`` adds
    flags to the default build (how a test runs everything under ASan in a child).
    """
    name = f"_nw_dataplane_{source_hash(extra_flags)}"
    folder = cache_dir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    path = folder / f"{name}{suffix}"
    if not path.exists():
        path = _compile(name, folder, extra_flags)
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise NativeBuildError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module
