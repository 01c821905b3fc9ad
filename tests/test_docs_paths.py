"""The README and docs/ name only files that exist (the Planned section excepted):
every relative link, and every repository path written in backquotes (outside
code blocks; a path after another project's name, "BMv2's `docs/...`", is theirs).
The README's layout table and docs/design.md's diagram match the tree."""

import os
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
        if not (ROOT / path.rstrip("/")).exists() and not _coming(path.rstrip("/")):
            missing.append(path)
    for link in LINK.findall(text):
        if "://" not in link and not (doc.parent / link).exists():
            missing.append(link)
    assert not missing, f"{doc.name} names files that do not exist: {missing}"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("doc", _documents(), ids=lambda p: p.name)
def test_links_to_sections_find_their_heading(doc):
    """``[...](page.md#section)`` and ``[...](#section)`` name a heading that exists."""
    broken = []
    for page, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", _checked_text(doc.read_text())):
        target = doc if not page else doc.parent / page
        if "://" in page or target.suffix != ".md" or not target.exists():
            continue
        text = re.sub(r"^```.*?^```", "", target.read_text(), flags=re.S | re.M)
        if anchor not in {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}:
            broken.append(f"{page}#{anchor}")
    assert not broken, f"{doc.name} links to sections that do not exist: {broken}"


def test_every_docs_page_is_listed_in_the_readme():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Documentation\n", 1)[1].split("\n## ", 1)[0]
    unlisted = [p.name for p in (ROOT / "docs").glob("*.md") if f"](docs/{p.name})" not in section]
    assert not unlisted, f"add these to the README's Documentation section: {unlisted}"


# --- The README's layout table and the design document's diagram against the tree ---

# Issue 21 moves modules into these folders (and files) on other branches. Until
# they land, the README's layout table and docs/design.md name them ahead of the
# tree; each entry expires by itself: once the path exists, the test below fails
# until it is removed here.
COMING: set[str] = set()
# Packages that those moves empty; the table leaves them out. Same expiry: once
# the folder is gone, the test below fails until it is removed here.
GOING: set[str] = set()

SKIPPED = {"build", "results", "__pycache__"}
CODE = {".py", ".c", ".h", ".p4", ".lua"}


def _coming(path: str) -> bool:
    return any(path == c or path.startswith(c + "/") for c in COMING)


def _visible(path: Path) -> bool:
    return not any(part.startswith(".") or part in SKIPPED or part.endswith(".egg-info")
                   for part in path.relative_to(ROOT).parts)


def _holds_code(folder: Path) -> bool:
    return any(f.is_file() and _visible(f) and (f.suffix in CODE or os.access(f, os.X_OK))
               for f in folder.rglob("*"))


def _packages() -> list[str]:
    """The installed packages' folders (pyproject's package-dir map)."""
    text = (ROOT / "pyproject.toml").read_text()
    return sorted(re.findall(r'"netweft\.\w+" = "(\w+)"', text))


def _layout_table() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Layout\n", 1)[1].split("\n## ", 1)[0]
    return [m.rstrip("/") for m in re.findall(r"^\| `([^`]+)` \|", section, re.M)]


def test_transitional_entries_have_not_expired():
    landed = sorted(p for p in COMING if (ROOT / p).exists())
    gone = sorted(p for p in GOING if not (ROOT / p).exists())
    assert not landed, f"these exist now: remove them from COMING in this test: {landed}"
    assert not gone, f"these are gone now: remove them from GOING in this test: {gone}"


def test_every_folder_in_the_layout_table_exists_and_holds_code():
    named = _layout_table()
    assert len(named) >= 10 and len(set(named)) == len(named)
    bad = [p for p in named if not _coming(p) and not _holds_code(ROOT / p)]
    assert not bad, f"the README's layout table names folders without code: {bad}"


def test_every_code_folder_is_in_the_layout_table():
    """Every top-level folder with code, and every package's subfolder with an
    ``__init__.py``, has a row."""
    named = set(_layout_table())
    assert len(_packages()) >= 5
    top = [d.name for d in ROOT.iterdir() if d.is_dir() and _visible(d) and _holds_code(d)]
    subpackages = [f"{pkg}/{d.name}" for pkg in _packages() for d in (ROOT / pkg).iterdir()
                   if (d / "__init__.py").is_file() and _visible(d)]
    missing = sorted(p for p in [*top, *subpackages] if p not in named and p not in GOING)
    assert not missing, f"add these to the README's layout table: {missing}"
    assert not GOING & named


DIAGRAM_PATH = re.compile(r"(?<![\w*./-])([\w-]+(?:/[\w-]+)*/|[\w-]+(?:/[\w-]+)*\.(?:py|c|h|p4|lua))"
                          r"(?![\w/-])")


def _design_names() -> list[tuple[str, str]]:
    """(name as written, repository path it means) for every folder or code file the
    layers diagram of docs/design.md names; a name is relative to the box it is in,
    whose top-level folder labels the box's lines, unless it starts with one."""
    text = (ROOT / "docs" / "design.md").read_text()
    diagram = re.search(r"^## Layers\n.*?^```\n(.*?)^```", text, re.S | re.M).group(1)
    tops, names, box = set(_packages()), [], ""
    for line in diagram.splitlines():
        label = re.match(r"([\w-]+)/ ", line)
        box = label.group(1) if label else box
        for name in DIAGRAM_PATH.findall(line):
            first = name.split("/")[0]
            names.append((name, name.rstrip("/") if first in tops else f"{box}/{name.rstrip('/')}"))
    return names


def test_the_design_diagram_names_what_exists():
    names = _design_names()
    assert len(names) >= 30
    missing = [written for written, path in names if not _coming(path) and not (ROOT / path).exists()]
    assert not missing, f"docs/design.md's diagram names what does not exist: {missing}"


def test_the_design_documents_file_names_exist():
    """Bare file names in backquotes (``routes.py``) name a file somewhere in the tree."""
    text = _checked_text((ROOT / "docs" / "design.md").read_text())
    bare = set(re.findall(r"`(?!netweft\.)([\w-]+\.(?:py|c|h|p4|lua))`", text))
    files = {f.name for pkg in _packages() for f in (ROOT / pkg).rglob("*") if _visible(f)}
    missing = sorted(bare - files - {Path(p).name for p in COMING})
    assert len(bare) >= 5 and not missing, f"docs/design.md names files that do not exist: {missing}"
