"""The README's main job runs end to end."""

import subprocess

import pytest

from netweft.testbed.demo import run_demo


@pytest.mark.netns
def test_demo_delivers_intact_and_cleans_up():
    records = run_demo(count=3, size=700)
    assert [r["intact"] for r in records] == [True] * 3
    assert all(r["csum_sent"] == r["csum_received"] for r in records)
    assert "nw-h" not in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                        text=True).stdout
