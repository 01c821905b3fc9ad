"""The PTF suites of p4/ptf, run by their runner with the ``ptf`` command: against
netweft-switch (always), and against BMv2's simple_switch_grpc with p4c-bm2-ss's
output (marked ``bmv2``; skipped, saying why, when those tools are not on PATH).

Every test of a suite must pass; the test names PTF reports are checked against
the suite's file, so a suite that silently ran fewer tests fails too."""

from __future__ import annotations

import ast
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SUITES = REPO / "p4" / "ptf"
RUNNER = SUITES / "run.sh"
PROGRAMS = ("basic_forward", "ecmp_spray", "fabric", "aggregation", "fabric_aggregation")
BMV2_TOOLS = ("p4c-bm2-ss", "simple_switch_grpc")
RESULT = re.compile(r"^(\w+)\.(\w+) \.\.\. .*?(ok|FAIL|ERROR|skipped.*)$", re.MULTILINE)


def suite_tests(program: str) -> set[str]:
    """Names of the test classes (those with a runTest or inheriting one) in a suite."""
    tree = ast.parse((SUITES / f"{program}.py").read_text())
    names = set()
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or not node.name.endswith("Test"):
            continue
        has_run = any(isinstance(b, ast.FunctionDef) and b.name == "runTest" for b in node.body)
        inherits = any(isinstance(base, ast.Attribute) for base in node.bases)
        if has_run or inherits:
            names.add(node.name)
    return names


def run_suite(program: str, target: str, out: Path) -> tuple[int, str]:
    """Runs ``p4/ptf/run.sh --target TARGET PROGRAM``; its namespace is removed after,
    whatever happens (the runner's own trap, then this function's)."""
    netns = f"nwptf-{os.getpid()}-{program[:6]}"
    env = {**os.environ, "NETWEFT_PTF_NETNS": netns,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen([str(RUNNER), "--target", target, "--out", str(out), program],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    try:
        output, _ = proc.communicate(timeout=1500)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        output, _ = proc.communicate()
        output += "\n(timed out)"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        subprocess.run(["ip", "netns", "del", netns], capture_output=True)
    return proc.returncode, output


def assert_all_passed(program: str, code: int, output: str, out: Path) -> None:
    results = {(module, name): status for module, name, status in RESULT.findall(output)}
    failed = {name: status for (_m, name), status in results.items() if status != "ok"}
    switch_log = out / "switch.log"
    log_tail = switch_log.read_text()[-3000:] if switch_log.exists() else "(no switch log)"
    detail = f"{output[-6000:]}\n--- switch log ---\n{log_tail}"
    assert not failed, f"{program}: {failed}\n{detail}"
    assert {m for m, _ in results} == {program}, detail
    assert {name for _m, name in results} == suite_tests(program), detail
    assert code == 0, detail
    assert re.search(rf"^Ran {len(results)} tests? in", output, re.MULTILINE), detail


@pytest.mark.netns
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("program", PROGRAMS)
def test_ptf_suite_against_netweft_switch(program, tmp_path):
    code, output = run_suite(program, "netweft", tmp_path)
    assert_all_passed(program, code, output, tmp_path)


@pytest.mark.bmv2
@pytest.mark.netns
@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("program", PROGRAMS)
def test_ptf_suite_against_bmv2(program, tmp_path):
    missing = [tool for tool in BMV2_TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"BMv2 cross-check: {', '.join(missing)} not on PATH "
                    "(build them as docs/ptf.md says to run the suites against BMv2)")
    code, output = run_suite(program, "bmv2", tmp_path)
    assert_all_passed(program, code, output, tmp_path)
