"""The README's ten-line RMA-write example runs as printed."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_rma_write_example_runs():
    section = README.read_text().split("## The transport", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    lines = [ln for ln in code.splitlines() if ln.strip()]
    assert len(lines) <= 10
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)  # asserts inside must hold
    assert namespace["dst"].buffer[-1] == (1 << 20) - 1
