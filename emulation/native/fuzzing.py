"""libFuzzer harnesses of generated pipelines: a program's C, built with clang's
``-fsanitize=fuzzer,address,undefined`` and linked with ``pipeline_fuzz.c``.

A configuration (a function that installs entries on a :class:`SoftSwitch`) is
recorded as the C calls the native control plane made (``nw_table_*`` and the
like) and replayed in the harness's start-up, so fuzzed frames reach the
program's actions and deparser with the same tables a test installs.  Register
cells written from Python are not replayed (they start at zero).

Run by hand::

    python -m netweft.emulation.native.fuzzing p4/basic_forward.p4 -- -runs=100000
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from netweft.emulation.native import pipeline as native_pipeline
from netweft.emulation.native.build import CDEF, Library
from netweft.p4.compiler.program import Program

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "pipeline_fuzz.c"
# -O0: the same coverage and sanitizers, built in a sixth of -O1's time (the runs are few)
FUZZ_FLAGS = ("-g", "-O0", "-std=gnu11", "-pthread", "-fno-omit-frame-pointer",
              "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined",
              "-Wno-unused-function", "-Wno-unused-variable", "-Wno-unused-label")
# The packet path and pointer getters: not configuration.
_NOT_RECORDED = frozenset({
    "nw_pipeline_new", "nw_pipeline_free", "nw_pipeline_lock", "nw_pipeline_unlock",
    "nw_pipeline_abi_version", "nw_pipeline_state_size", "nw_pipeline_emit_max",
    "nw_ingress", "nw_egress", "nw_process", "nw_process_batch", "nw_state_copy",
    "nw_state_prepare_pass", "nw_pipeline_register", "nw_pipeline_counter",
})


class FuzzerUnavailable(RuntimeError):
    """clang with libFuzzer is missing, or the harness did not build."""


@dataclass
class _Recorder:
    """Stands for a pipeline library's ``lib``: forwards every call and keeps the
    control-plane ones as C statements."""

    lib: Any
    ffi: Any
    calls: list[str] = field(default_factory=list)
    arrays: list[str] = field(default_factory=list)
    pipelines: list[Any] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.lib, name)
        if not name.startswith("nw_") or not callable(target):
            return target
        if name == "nw_pipeline_new":
            def new(*args: Any) -> Any:
                made = target(*args)
                self.pipelines.append(made)
                return made
            return new
        if name in _NOT_RECORDED:
            return target

        params = self.ffi.typeof(target).args

        def recorded(*args: Any) -> Any:
            c_args = (self._c_arg(a, t) for a, t in zip(args, params, strict=True))
            self.calls.append(f"    {name}({', '.join(c_args)});")
            return target(*args)
        return recorded

    def _array(self, item: Any, values: list[int]) -> str:
        name = f"a{len(self.arrays)}"
        values = values or [0]
        self.arrays.append(f"static {item.cname} {name}[{len(values)}] = "
                           f"{{{', '.join(str(v) + ('u' if v >= 0 else '') for v in values)}}};")
        return name

    def _c_arg(self, arg: Any, param: Any) -> str:
        ffi = self.ffi
        if isinstance(arg, (bytes, bytearray, list, tuple)):
            if param.kind != "pointer":
                raise TypeError(f"cannot replay a sequence for a {param.cname} parameter")
            return self._array(param.item, [int(v) for v in arg])
        if isinstance(arg, bool):
            return str(int(arg))
        if isinstance(arg, int):
            return f"INT64_C({arg})" if arg < 0 else f"UINT64_C({arg})"
        if not isinstance(arg, ffi.CData):
            raise TypeError(f"cannot replay an argument of type {type(arg).__name__}")
        if arg == ffi.NULL:
            return "NULL"
        if any(arg == p for p in self.pipelines):
            return "p"
        kind = ffi.typeof(arg)
        if kind.kind != "array":
            raise TypeError(f"cannot replay a {kind.cname} argument (only arrays)")
        item = kind.item
        count = ffi.sizeof(arg) // ffi.sizeof(item) if ffi.sizeof(item) else 0
        return self._array(item, [int(arg[i]) for i in range(count)])

    def source(self) -> str:
        """The C of ``nw_fuzz_configure``: the recorded calls, in order."""
        lines = [*self.arrays, "",
                 "void nw_fuzz_configure(void *p) {", "    (void)p;", *self.calls, "}", ""]
        return "\n".join(lines)


def record_configuration(program: Program,
                         configure: Callable[[Any], None] | None) -> tuple[str, str]:
    """The program's generated C and the C replaying ``configure``'s control-plane calls."""
    from netweft.emulation.switch import SoftSwitch

    real_build = native_pipeline.build
    recorder: list[_Recorder] = []

    def recording_build(source: str, flags: tuple[str, ...] = native_pipeline.DEFAULT_FLAGS
                        ) -> Library:
        lib = real_build(source, flags)
        rec = _Recorder(lib.lib, lib.ffi)
        recorder.append(rec)
        return Library(lib.ffi, rec, lib.path)

    with mock.patch.object(native_pipeline, "build", recording_build):
        sw = SoftSwitch(program, backend="c")
        if configure is not None:
            configure(sw)
    # the prototypes the replay calls: the cffi declarations of the pipeline ABI
    gen = native_pipeline.generated(program)
    return gen.source, "#include <stdint.h>\n#include <stddef.h>\n" + CDEF + recorder[-1].source()


def clang() -> str | None:
    """clang on PATH, if it has libFuzzer (checked by building)."""
    return shutil.which("clang")


def build_fuzzer(program: Program, out: Path,
                 configure: Callable[[Any], None] | None = None) -> Path:
    """Build the harness of ``program`` (with ``configure`` replayed) as ``out``."""
    cc = clang()
    if cc is None:
        raise FuzzerUnavailable("clang is not on PATH (scripts/setup installs it)")
    source, replay = record_configuration(program, configure)
    work = out.parent
    work.mkdir(parents=True, exist_ok=True)
    gen_c, replay_c = work / f"{out.name}-pipeline.c", work / f"{out.name}-configure.c"
    gen_c.write_text(source)
    replay_c.write_text(replay)
    proc = subprocess.run([cc, *FUZZ_FLAGS, f"-I{HERE}", str(HARNESS), str(gen_c),
                           str(replay_c), "-o", str(out)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise FuzzerUnavailable(f"the harness did not build:\n{proc.stderr[-3000:]}")
    return out


def write_corpus(directory: Path, frames: Iterable[tuple[int, bytes]]) -> int:
    """Seed inputs (port byte + frame) for the fuzzer; returns how many."""
    directory.mkdir(parents=True, exist_ok=True)
    n = 0
    for n, (port, frame) in enumerate(frames, 1):
        (directory / f"seed-{n:05d}").write_bytes(bytes([port & 0x0F]) + frame)
    return n


@dataclass
class FuzzRun:
    """What one bounded fuzzing run did."""

    returncode: int
    runs: int
    log: str

    @property
    def clean(self) -> bool:
        return (self.returncode == 0 and "ERROR: AddressSanitizer" not in self.log
                and "runtime error" not in self.log)


def run_fuzzer(exe: Path, corpus: Path | None, runs: int, seed: int = 1,
               max_len: int = 1600, timeout: float = 900.0,
               extra: Iterable[str] = ()) -> FuzzRun:
    """Run ``exe`` for ``runs`` inputs from ``corpus`` (kept unchanged: new inputs
    go to a scratch directory)."""
    with tempfile.TemporaryDirectory() as scratch:
        dirs = [scratch] + ([str(corpus)] if corpus else [])
        proc = subprocess.run([str(exe), f"-runs={runs}", f"-seed={seed}",
                               f"-max_len={max_len}", *extra, *dirs],
                              capture_output=True, text=True, cwd=scratch,
                              timeout=timeout, check=False)
    done = 0
    for line in proc.stderr.splitlines():
        if line.startswith("Done ") and " runs " in line:
            done = int(line.split()[1])
    return FuzzRun(proc.returncode, done, proc.stderr)


@contextlib.contextmanager
def _workdir(keep: str | None) -> Iterator[Path]:
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        yield Path(keep)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            yield Path(tmp)


def main(argv: list[str] | None = None) -> int:
    from netweft.p4.compiler import compile_p4

    parser = argparse.ArgumentParser(
        prog="python -m netweft.emulation.native.fuzzing",
        description="Build a P4 program's libFuzzer harness (empty tables) and run it; "
                    "arguments after -- go to libFuzzer.")
    parser.add_argument("program", help="a v1model P4 program")
    parser.add_argument("-I", dest="include", action="append", default=[])
    parser.add_argument("--workdir", help="keep the harness and its sources here")
    parser.add_argument("libfuzzer_args", nargs="*")
    args = parser.parse_args(argv)
    program = compile_p4(args.program, include_dirs=tuple(args.include) or
                         (str(Path(args.program).resolve().parent),))
    with _workdir(args.workdir) as work:
        exe = build_fuzzer(program, work / "pipeline_fuzz")
        print(f"built {exe}", file=sys.stderr)
        return subprocess.run([str(exe), *args.libfuzzer_args], cwd=work,
                              check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
