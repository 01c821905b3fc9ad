"""The build cache: one compilation per source and flags, outside the source tree,
least recently used builds pruned, compiler errors reported with the source kept."""

from __future__ import annotations

import os

import pytest

from netweft.emulation.native import build

pytestmark = pytest.mark.skipif(build.compiler() is None, reason="no C compiler")


def test_a_source_is_compiled_once_and_found_by_its_hash(tmp_path, monkeypatch):
    monkeypatch.setenv("NETWEFT_NATIVE_CACHE", str(tmp_path))
    first = build.build("int nw_cache_probe_1 = 1;\n")
    assert first.path.parent == tmp_path and first.path.name.startswith("pipeline-")
    assert build.build("int nw_cache_probe_1 = 1;\n") is first
    other = build.build("int nw_cache_probe_1 = 1;\n", flags=(*build.DEFAULT_FLAGS, "-g"))
    assert other.path != first.path          # the flags are part of the key


def test_the_least_recently_used_builds_are_pruned(tmp_path):
    for i in range(5):
        so = tmp_path / f"pipeline-{i}.so"
        so.write_bytes(b"")
        os.utime(so, (1000 + i, 1000 + i))
    build.prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pipeline-3.so", "pipeline-4.so"]


def test_a_compiler_error_names_the_kept_source(tmp_path, monkeypatch):
    monkeypatch.setenv("NETWEFT_NATIVE_CACHE", str(tmp_path))
    with pytest.raises(build.BuildError, match=r"failed on the generated pipeline \(kept in "):
        build.build("this is not C;\n")
    assert list(tmp_path.glob("failed-*.c"))


def test_one_program_in_two_folders_is_one_build(tmp_path):
    """The generated C names the program's file, not its folder: a wrapper written into a
    new temporary folder each run (`bench allreduce --testbed --lanes K`) hits the cache."""
    from pathlib import Path

    from netweft.emulation.native.c_program import generate
    from netweft.p4.compiler import compile_p4

    program = Path(__file__).resolve().parent / "p4" / "interleaved_registers.p4"
    sources = []
    for folder in ("one", "two"):
        (tmp_path / folder).mkdir()
        copy = tmp_path / folder / program.name
        copy.write_text(program.read_text())
        sources.append(generate(compile_p4(str(copy))).source)
    assert sources[0] == sources[1]
    assert "from interleaved_registers.p4 " in sources[0]
