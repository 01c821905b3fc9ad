"""Compile a generated pipeline with the system C compiler, cache it, load it with cffi.

The shared object is cached under ``$XDG_CACHE_HOME/netweft/native`` (else
``~/.cache/netweft/native``; ``NETWEFT_NATIVE_CACHE`` overrides), named by the
SHA-256 of the C source, the compiler and its flags, so a program is compiled
once per change; the 256 most recently used builds are kept.  Generated code
is never written into the source tree.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cffi

DEFAULT_FLAGS = ("-O2", "-fPIC", "-shared", "-pthread", "-std=gnu11", "-fno-strict-aliasing",
                 "-Wno-unused-function", "-Wno-unused-variable", "-Wno-unused-label")
SANITIZE_FLAGS = ("-O1", "-g", "-fPIC", "-shared", "-pthread", "-std=gnu11",
                  "-fno-omit-frame-pointer",
                  "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                  "-Wno-unused-function", "-Wno-unused-variable", "-Wno-unused-label")

CDEF = """
typedef struct nw_pkt {
    uint8_t *data; uint32_t len; uint32_t cap;
    uint16_t ingress_port; uint16_t egress_spec; uint16_t egress_port; uint16_t mcast_grp;
    uint16_t egress_rid; uint8_t priority; uint8_t instance_type; uint32_t flags;
    int32_t clone_session; uint32_t clone_fl; uint32_t resubmit_fl; uint32_t recirc_fl;
    uint32_t truncate_len; uint32_t ingress_len; uint32_t parser_error; void *state;
    void *clone_state; uint32_t clone_payload_at; uint32_t clone_payload_len;
    const void *preserved; uint32_t preserved_fl;
} nw_pkt_t;
typedef struct nw_queue_meta {
    uint64_t enq_timestamp; uint32_t enq_qdepth; uint64_t deq_timedelta; uint32_t deq_qdepth;
    uint32_t qid;
} nw_queue_meta_t;
void *nw_pipeline_new(uint64_t seed);
void nw_pipeline_free(void *pipeline);
uint32_t nw_pipeline_abi_version(void);
size_t nw_pipeline_state_size(void);
uint32_t nw_pipeline_emit_max(void);
int nw_ingress(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns);
int nw_egress(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns, const nw_queue_meta_t *queue);
void nw_state_copy(void *dst_state, const void *src_state);
int nw_process(void *pipeline, nw_pkt_t *pkt, uint64_t now_ns);
void nw_process_batch(void *pipeline, nw_pkt_t *pkts, int32_t *rc, uint32_t n,
                      uint64_t now_ns, uint64_t step_ns);
void nw_pipeline_set_select_no_match(void *p, int32_t code);
uint32_t nw_pipeline_uses_flow(void);
int nw_clone_i2e(void *pipeline, nw_pkt_t *pkt, void *clone_state, uint64_t now_ns);
uint32_t nw_flow_words(void);
int32_t nw_flow_pop(void *p, uint32_t which, uint32_t *site, uint32_t *aux, uint64_t *w);
uint64_t nw_flow_pending(void *p);
uint64_t nw_flow_dropped(void *p, uint32_t which);
void nw_pipeline_lock(void *p);
void nw_pipeline_unlock(void *p);
uint64_t *nw_pipeline_register(void *p, uint32_t i);
uint64_t *nw_pipeline_counter(void *p, uint32_t i);
int32_t nw_table_add(void *p, uint32_t t, uint64_t handle, const uint8_t *value,
                     const uint8_t *mask, const uint8_t *lo, const uint8_t *hi, int64_t rank,
                     uint64_t seq, uint32_t action, const uint64_t *args, uint32_t nargs);
int32_t nw_table_set_ranges(void *p, uint32_t t, uint32_t n, const uint32_t *off,
                            const uint32_t *len);
void nw_table_remove_all(void *p, uint32_t t);
int32_t nw_table_modify(void *p, uint32_t t, uint64_t handle, uint32_t action,
                        const uint64_t *args, uint32_t nargs);
int32_t nw_table_default(void *p, uint32_t t, uint32_t action, const uint64_t *args,
                         uint32_t nargs);
int32_t nw_vset_add(void *p, uint32_t i, uint64_t vhi, uint64_t vlo, uint64_t mhi,
                    uint64_t mlo);
void nw_vset_clear(void *p, uint32_t i);
"""

# meters, direct resources, action selector groups, custom CRCs (emulation/native/objects.py)
STATEFUL_CDEF = """
typedef struct nw_meter_rate {
    double info_rate; int64_t burst; int64_t tokens; int64_t tokens_last; uint32_t color;
    uint32_t pad;
} nw_meter_rate_t;
typedef struct nw_meter { uint32_t nrates; uint32_t bytes; nw_meter_rate_t rate[4]; } nw_meter_t;
typedef struct nw_direct { uint64_t counter[2]; nw_meter_t meter; uint64_t hits; } nw_direct_t;
nw_meter_t *nw_pipeline_meter(void *p, uint32_t i);
int32_t nw_pipeline_set_crc(void *p, uint32_t width, uint32_t poly, uint32_t initial,
                            uint32_t final_xor, uint32_t reflect_data, uint32_t reflect_rem);
int32_t nw_table_add_ext(void *p, uint32_t t, uint64_t handle, const uint8_t *value,
                         const uint8_t *mask, const uint8_t *lo, const uint8_t *hi, int64_t rank,
                         uint64_t seq, uint32_t action, const uint64_t *args, uint32_t nargs,
                         void *direct, void *group);
int32_t nw_table_set_target(void *p, uint32_t t, uint64_t handle, uint32_t action,
                            const uint64_t *args, uint32_t nargs, void *group);
void *nw_group_new(void);
void nw_group_free(void *g);
int32_t nw_group_set(void *g, uint32_t n, const uint32_t *action, const uint32_t *nargs,
                     const uint64_t *args);
"""

_FFI = cffi.FFI()
_FFI.cdef(CDEF + STATEFUL_CDEF)


class BuildError(RuntimeError):
    """The C compiler is missing or failed; the message says which and why."""


@dataclass
class Library:
    """A loaded pipeline shared object."""

    ffi: Any
    lib: Any
    path: Path


def compiler() -> str | None:
    """The C compiler to use: ``$CC`` if set, else ``cc``/``gcc``/``clang`` on PATH."""
    env = os.environ.get("CC")
    if env:
        return shutil.which(env.split()[0])
    for name in ("cc", "gcc", "clang"):
        found = shutil.which(name)
        if found:
            return found
    return None


def cache_dir() -> Path:
    """Where compiled pipelines are kept."""
    override = os.environ.get("NETWEFT_NATIVE_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "netweft" / "native"


_LOADED: dict[Path, Library] = {}
CACHE_KEEP = 1024  # compiled pipelines kept, least recently used go first (256 thrashed in test runs)


def prune(out_dir: Path, keep: int = CACHE_KEEP) -> None:
    """Delete all but the ``keep`` most recently used builds (and old failure dumps)."""
    for pattern, limit in (("pipeline-*.so", keep), ("failed-*.c", 8)):
        try:
            found = sorted(out_dir.glob(pattern), key=lambda p: p.stat().st_mtime,
                           reverse=True)
        except OSError:
            continue
        for old in found[limit:]:
            try:
                old.unlink()      # a loaded object stays mapped: unlinking it is safe
            except OSError:
                pass


def build(source: str, flags: tuple[str, ...] = DEFAULT_FLAGS, cc: str | None = None) -> Library:
    """Compile ``source`` (once per source, compiler and flags) and load it."""
    cc = cc or compiler()
    if cc is None:
        raise BuildError("no C compiler found (set CC, or install gcc)")
    digest = hashlib.sha256("\0".join([source, cc, *flags]).encode()).hexdigest()[:32]
    out_dir = cache_dir()
    so = out_dir / f"pipeline-{digest}.so"
    if so in _LOADED:
        return _LOADED[so]
    if so.exists():
        try:
            os.utime(so)          # most recently used: kept by prune()
        except OSError:
            pass
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
            c_file = Path(tmp) / "pipeline.c"
            c_file.write_text(source)
            tmp_so = Path(tmp) / "pipeline.so"
            proc = subprocess.run([cc, *flags, "-o", str(tmp_so), str(c_file)],
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                keep = out_dir / f"failed-{digest}.c"
                keep.write_text(source)
                first = "\n".join(proc.stderr.strip().splitlines()[:12])
                raise BuildError(f"{Path(cc).name} failed on the generated pipeline "
                                 f"(kept in {keep}):\n{first}")
            os.replace(tmp_so, so)     # atomic: a concurrent build loads one or the other
        prune(out_dir)
    lib = Library(_FFI, _FFI.dlopen(str(so)), so)
    _LOADED[so] = lib
    return lib
