"""Build glue that pyproject.toml cannot express: the folder-to-namespace map
for every subpackage, the package data, and the cffi build of the C engine."""

import warnings
from pathlib import Path

from setuptools import setup
from setuptools.warnings import InformationOnly

# The editable install's notice is about a folder named like the package in the
# working directory taking precedence over it; netweft has no ``netweft/`` folder
# (its folders map to ``netweft.*`` through package-dir), so the notice is noise.
warnings.filterwarnings("ignore", message="Editable installation", category=InformationOnly)

ROOT = Path(__file__).parent
FOLDERS = {"p4": "netweft.p4", "emulation": "netweft.emulation", "testbed": "netweft.testbed",
           "transport": "netweft.transport", "nic_offload": "netweft.nic_offload"}
# Files installed beside the code, by package. Folders that hold only data are
# packages of their own here (setuptools warns about, and may one day drop, data
# in a folder that is importable but not listed as a package).
PACKAGE_DATA = {
    "netweft.p4": ["*.p4"],
    "netweft.p4.include": ["*.p4"],
    "netweft.p4.tna": ["*.p4"],
    "netweft.p4.tna.include": ["*.p4"],
    "netweft.p4.t2na": ["*.p4"],
    "netweft.p4.compiler.arch": ["*.p4"],
    "netweft.nic_offload.include": ["*.h"],
    "netweft.emulation.native": ["*.h", "*.c"],   # the dataplane is built at load time
    "netweft.emulation.native.runtime": ["*.h"],
    "netweft.nic_offload.src": ["*.c", "*.h"],
    "netweft.nic_offload.src.cc": ["*.c"],
    "netweft.nic_offload.src.ec": ["*.c"],
    "netweft.nic_offload.src.io": ["*.c"],
    "netweft.nic_offload.src.link": ["*.c"],
    "netweft.transport.wire.wireshark": ["*.lua"],
    "netweft.testbed.topologies": ["*.yaml"],
    "netweft.testbed.topologies.leaf_spine": ["*.json"],
    "netweft.testbed.topologies.demo_fabric": ["*.json"],
}


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
    # PI's p4.tmp (emulation/p4runtime/p4_tmp), installed beside the p4runtime package's
    # p4.v1 for the p4lang tutorials' p4runtime_lib (pyproject.toml maps its folder)
    return found + [name for name in PACKAGE_DATA if name not in found] + ["p4.tmp"]


# Keep setuptools' egg-info out of the source root: there it would sit on sys.path
# (``python -m ...`` from a checkout) and shadow the installed entry points.
(ROOT / "build").mkdir(exist_ok=True)

setup(
    options={"egg_info": {"egg_base": "build"}},
    packages=_packages(),
    package_data=PACKAGE_DATA,
    cffi_modules=["nic_offload/build_engine.py:ffibuilder"],
)
