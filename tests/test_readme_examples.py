"""Every fenced Python example in the README and in ``docs/*.md`` runs as printed,
from the repository root.

Examples that build a network (``Network(``) need root and namespaces, so they
run in a test marked ``netns``; the rest run everywhere. Each example runs in a
fresh namespace, as a reader pasting it would. An example that cannot run in a
test says so on the line before its fence, with the reason::

    <!-- example not run: needs a P4Runtime server at 127.0.0.1:9559 -->

Such an example is still compiled, so its syntax cannot rot. Python written in a
fence without ``python`` would escape all this, so that is refused too."""

import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
NOT_RUN = re.compile(r"<!-- example not run: (.*?) -->\n\Z")


class Example(NamedTuple):
    where: str          # "README.md (heading of the section holding it)"
    code: str
    not_run: str | None  # the reason given, for an example marked as not run


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _fences(doc: Path) -> list[tuple[str, str, str, str]]:
    """(language, code, heading of the section, text before the fence) per fence."""
    text, out, heading, pos = doc.read_text(), [], "(top)", 0
    for match in FENCE.finditer(text):
        before = text[pos:match.start()]
        headings = re.findall(r"^#+ (.*)$", before, re.M)
        heading = headings[-1] if headings else heading
        pos = match.end()
        out.append((match.group(1), match.group(2), heading, before))
    return out


def _examples() -> list[Example]:
    examples = []
    for doc in _documents():
        for language, code, heading, before in _fences(doc):
            if language == "python":
                mark = NOT_RUN.search(before)
                examples.append(Example(f"{doc.relative_to(ROOT)} ({heading})", code,
                                        mark.group(1).strip() if mark else None))
    return examples


EXAMPLES = _examples()
RUN = [e for e in EXAMPLES if e.not_run is None]
PLAIN = [e for e in RUN if "Network(" not in e.code]
NETWORK = [e for e in RUN if "Network(" in e.code]
NOT_RUN_EXAMPLES = [e for e in EXAMPLES if e.not_run is not None]


def _run(example: Example, monkeypatch) -> dict:
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(example.code, example.where, "exec"), namespace)
    return namespace


def test_the_readme_and_the_guides_have_examples_of_both_kinds():
    readme = [e for e in RUN if e.where.startswith("README.md")]
    assert len([e for e in readme if e in PLAIN]) >= 3 and len([e for e in readme if e in NETWORK]) >= 1
    for guide in ("guide-switch.md", "guide-transport.md", "guide-testbeds.md"):
        assert any(e.where.startswith(f"docs/{guide}") for e in RUN), guide


@pytest.mark.parametrize("example", PLAIN, ids=[f"{i}-{e.where}" for i, e in enumerate(PLAIN)])
def test_example_runs(example, monkeypatch, capsys):
    namespace = _run(example, monkeypatch)
    out = capsys.readouterr().out
    code = example.code
    if "sw.process(0, frame)" in code:
        assert out.startswith("[(1, b'\\x08\\x00\\x00\\x00\\x01\\x11")  # port 1, next-hop MAC
    if "compile_p4_source(source" in code:
        assert "prog.p4:3:22: operands of '+' have different types" in out
    if "ecmp_spray" in code and "group_members" in code:
        assert len(namespace["sw"].table_entries("MyIngress.group_members")) == 2


@pytest.mark.netns
@pytest.mark.host_tools("ping", "ethtool")
@pytest.mark.parametrize("example", NETWORK, ids=[e.where for e in NETWORK])
def test_network_example_runs(example, monkeypatch, capsys):
    _run(example, monkeypatch)
    out = capsys.readouterr().out
    assert "1 packets transmitted, 1 received" in out, out


@pytest.mark.parametrize("example", NOT_RUN_EXAMPLES, ids=[e.where for e in NOT_RUN_EXAMPLES])
def test_an_example_not_run_says_why_and_compiles(example):
    assert len(example.not_run) >= 20, f"{example.where}: say why the example is not run"
    compile(example.code, example.where, "exec")


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: p.name)
def test_python_is_fenced_as_python(doc):
    """A fence whose code starts like a Python module is marked ``python``, so that the
    tests above see it."""
    unmarked = [heading for language, code, heading, _ in _fences(doc)
                if language != "python" and re.match(r"(from \w[\w.]* import|import \w)", code)]
    assert not unmarked, f"{doc.name}: fence these as python (or mark them not run): {unmarked}"


def test_stf_example_prints_what_the_guide_shows(monkeypatch):
    """The switch guide's ``$ netweft stf ...`` block is that command's output, verbatim."""
    text = (ROOT / "docs" / "guide-switch.md").read_text()
    block = re.search(r"^```\n\$ (netweft stf [^\n]*)\n(.*?)^```", text, re.S | re.M)
    command, shown = block.group(1), block.group(2)
    proc = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", *command.split()[1:]],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 1  # the example is a failing test
    assert proc.stdout == shown
