"""Every fenced Python example in the README runs as printed, from the repository root.

Examples that build a network (``Network(``) need root and namespaces, so they
run in a test marked ``netns``; the rest run everywhere. Each example runs in a
fresh namespace, as a reader pasting it would."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _examples() -> list[tuple[str, str]]:
    """(heading of the section holding it, code) for each Python example, in order."""
    examples, heading = [], "(top)"
    text = (ROOT / "README.md").read_text()
    pos = 0
    for match in BLOCK.finditer(text):
        headings = re.findall(r"^#+ (.*)$", text[pos:match.start()], re.M)
        heading = headings[-1] if headings else heading
        pos = match.end()
        examples.append((heading, match.group(1)))
    return examples


EXAMPLES = _examples()
PLAIN = [(h, c) for h, c in EXAMPLES if "Network(" not in c]
NETWORK = [(h, c) for h, c in EXAMPLES if "Network(" in c]


def _run(code: str, heading: str, monkeypatch) -> dict:
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(code, f"README.md ({heading})", "exec"), namespace)
    return namespace


def test_the_readme_has_examples_of_both_kinds():
    assert len(PLAIN) >= 4 and len(NETWORK) >= 1


@pytest.mark.parametrize("heading,code", PLAIN, ids=[f"{i}-{h}" for i, (h, _) in enumerate(PLAIN)])
def test_example_runs(heading, code, monkeypatch, capsys):
    namespace = _run(code, heading, monkeypatch)
    out = capsys.readouterr().out
    if "sw.process(0, frame)" in code:
        assert out.startswith("[(1, b'\\x08\\x00\\x00\\x00\\x01\\x11")  # port 1, next-hop MAC
    if "compile_p4_source(source" in code:
        assert "prog.p4:3:22: operands of '+' have different types" in out
    if "ecmp_spray" in code and "group_members" in code:
        assert len(namespace["sw"].table_entries("MyIngress.group_members")) == 2


@pytest.mark.netns
@pytest.mark.host_tools("ping", "ethtool")
@pytest.mark.parametrize("heading,code", NETWORK, ids=[h for h, _ in NETWORK])
def test_network_example_runs(heading, code, monkeypatch, capsys):
    _run(code, heading, monkeypatch)
    out = capsys.readouterr().out
    assert "1 packets transmitted, 1 received" in out, out


def test_stf_example_prints_what_the_readme_shows(monkeypatch):
    """The README's ``$ netweft stf ...`` block is that command's output, verbatim."""
    text = (ROOT / "README.md").read_text()
    block = re.search(r"^```\n\$ (netweft stf [^\n]*)\n(.*?)^```", text, re.S | re.M)
    command, shown = block.group(1), block.group(2)
    proc = subprocess.run([sys.executable, "-m", "netweft.testbed.command_line", *command.split()[1:]],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert proc.returncode == 1  # the example is a failing test
    assert proc.stdout == shown
