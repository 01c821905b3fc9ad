"""Shared pytest configuration.

- Tests marked ``netns`` need root (skipped otherwise; CI runs as root). Under
  pytest-xdist (``scripts/test`` runs ``-n 2 --dist loadgroup``) they all run on one
  worker, one after another as without xdist: they start switch processes,
  namespaces and ``netweft clean``, which must not meet each other.
- ``@pytest.mark.host_tools("tshark", ...)`` and ``@pytest.mark.clang_fuzzer``
  name the host tools a test runs. A missing one fails the test with the Debian
  package to install: ``./scripts/setup`` installs them all, so on a machine set
  up by it nothing may be silently skipped.
"""

import os

import pytest

from netweft.testbed.host_tools import MissingToolError, require, require_clang_fuzzer


@pytest.hookimpl(tryfirst=True)   # before xdist's, which reads xdist_group marks then
def pytest_collection_modifyitems(config, items):
    serial = pytest.mark.xdist_group("netns")
    skip = None if os.geteuid() == 0 else pytest.mark.skip(
        reason="needs root for network namespaces")
    for item in items:
        if "netns" in item.keywords:
            item.add_marker(serial)
            if skip is not None:
                item.add_marker(skip)


def pytest_runtest_setup(item):
    try:
        for mark in item.iter_markers("host_tools"):
            for command in mark.args:
                require(command)
        if item.get_closest_marker("clang_fuzzer"):
            require_clang_fuzzer()
    except MissingToolError as exc:
        pytest.fail(str(exc), pytrace=False)
