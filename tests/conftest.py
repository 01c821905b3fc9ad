"""Shared pytest configuration: tests marked ``netns`` need root."""

import os

import pytest


def pytest_collection_modifyitems(config, items):
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root for network namespaces")
    for item in items:
        if "netns" in item.keywords:
            item.add_marker(skip)
