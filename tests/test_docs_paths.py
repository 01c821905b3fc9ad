"""The README and docs/ name only files that exist (the Planned section excepted):
every relative link, and every repository path written in backquotes (outside
code blocks; a path after another project's name, "BMv2's `docs/...`", is theirs)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("p4", "emulation", "testbed", "transport", "nic_offload", "docs", "tests", "scripts",
       ".ci")
PATH = re.compile(r"(?<!'s )`((?:" + "|".join(re.escape(t) for t in TOP) + r")/[\w./-]*)`")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _documents() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _checked_text(text: str) -> str:
    """The text without its Planned section, fenced code blocks and inline code
    that holds no path (a ``](`` in code is not a link)."""
    text = re.sub(r"^## Planned\n.*?(?=^## |\Z)", "", text, flags=re.S | re.M)
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*\]\([^`\n]*`", "", text)


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: p.name)
def test_named_paths_exist(doc):
    text = _checked_text(doc.read_text())
    missing = []
    for path in PATH.findall(text):
        if not (ROOT / path.rstrip("/")).exists():
            missing.append(path)
    for link in LINK.findall(text):
        if "://" not in link and not (doc.parent / link).exists():
            missing.append(link)
    assert not missing, f"{doc.name} names files that do not exist: {missing}"


def test_every_docs_page_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Documentation\n", 1)[1].split("\n## ", 1)[0]
    unlisted = [p.name for p in (ROOT / "docs").glob("*.md") if f"](docs/{p.name})" not in section]
    assert not unlisted, f"add these to the README's Documentation section: {unlisted}"
