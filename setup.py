"""Build glue that pyproject.toml cannot express: the folder-to-namespace map
for every subpackage and the cffi build of the C engine."""

from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
FOLDERS = {"p4": "netweft.p4", "emulation": "netweft.emulation", "testbed": "netweft.testbed",
           "transport": "netweft.transport", "nic_offload": "netweft.nic_offload"}


def _packages() -> list[str]:
    """Each mapped top-level folder, and every folder with an __init__.py below it.

    ``p4/`` itself has no ``__init__.py`` on purpose: run from the repository root
    (``python -m``, ``python -c``), a regular package named ``p4`` there would shadow
    the ``p4`` package of the P4Runtime protobufs (``p4.v1``, ``p4.config.v1``).
    """
    found = list(FOLDERS.values())
    for folder, name in FOLDERS.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT / folder)
            if rel.parts:
                found.append(".".join([name, *rel.parts]))
    return found


# Keep setuptools' egg-info out of the source root: there it would sit on sys.path
# (``python -m ...`` from a checkout) and shadow the installed entry points.
(ROOT / "build").mkdir(exist_ok=True)

setup(
    options={"egg_info": {"egg_base": "build"}},
    packages=_packages(),
    cffi_modules=["nic_offload/build_engine.py:ffibuilder"],
)
