"""Where netweft's P4-16 switch programs are: they ship as package data.

``source_dir()`` is the folder holding the ``.p4`` files, ``include/`` with
the shared headers and parsers, ``tna/`` with the Tofino 1 variants and
``t2na/`` with the Tofino 2 one.
"""

from pathlib import Path


def source_dir() -> Path:
    """Folder of the installed P4 sources."""
    return Path(__file__).resolve().parent


def program(name: str) -> Path:
    """Path of the program ``name`` (with or without ``.p4``); FileNotFoundError if absent."""
    path = source_dir() / (name if name.endswith(".p4") else name + ".p4")
    if not path.is_file():
        raise FileNotFoundError(f"no P4 program {name!r} in {source_dir()}")
    return path
