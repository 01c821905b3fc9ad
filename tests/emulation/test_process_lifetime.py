"""Children started for a testbed are known to its cleanup even when Ctrl-C comes while
they start (:func:`netweft.emulation.process_lifetime.popen_registered`)."""

import os
import signal
import subprocess

import pytest

from netweft.emulation import process_lifetime


@pytest.fixture(autouse=True)
def _python_sigint_handler():
    """Python's own SIGINT handler, whatever this run inherited (a test run started in
    the background by a non-interactive shell ignores SIGINT)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def _popen_interrupted_while_starting(monkeypatch):
    """``subprocess.Popen`` as seen by the module, with a SIGINT to this process in the
    middle of starting the child (where the real one waits for its exec)."""
    real = subprocess.Popen

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)

    monkeypatch.setattr(process_lifetime.subprocess, "Popen", interrupted)


def test_a_ctrl_c_while_a_child_starts_is_raised_after_the_child_is_registered(monkeypatch):
    _popen_interrupted_while_starting(monkeypatch)
    registered = []
    with pytest.raises(KeyboardInterrupt):
        process_lifetime.popen_registered(["true"], registered.append)
    assert len(registered) == 1 and registered[0].wait(timeout=10) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_ctrl_c_the_child_is_registered_and_nothing_is_raised():
    registered = []
    proc = process_lifetime.popen_registered(["true"], registered.append)
    assert registered == [proc] and proc.wait(timeout=10) == 0
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stamp_names_one_process_not_whoever_gets_its_pid_later():
    # pid_max is 32,768 on many machines: a dead testbed owner's PID comes back as
    # another process, which a PID alone would call the owner, and `netweft clean`
    # would then keep the dead testbed's namespaces for good.
    me = os.getpid()
    start = process_lifetime.start_ticks(me)
    assert isinstance(start, int) and start > 0
    assert process_lifetime.owner_stamp() == f"{me} {start}"
    assert process_lifetime.stamp_alive(process_lifetime.owner_stamp())
    assert not process_lifetime.stamp_alive(f"{me} {start + 1}")   # the PID, reused
    assert process_lifetime.stamp_alive(f"{me}\n")                 # a file of PID alone
    for bad in ("", "x", "12 y"):
        assert not process_lifetime.stamp_alive(bad)


def test_clean_takes_a_network_whose_owner_pid_now_names_another_process(
        tmp_path, monkeypatch):
    from netweft.emulation.network import builder
    from netweft.testbed import up_registry

    monkeypatch.setattr(builder, "OWNER_DIR", tmp_path)
    me, start = os.getpid(), process_lifetime.start_ticks(os.getpid())
    (tmp_path / "nwaaaaa").write_text(f"{me} {start + 7}\n")   # the owner died, its PID reused
    (tmp_path / "nwbbbbb").write_text(f"{me} {start}\n")       # the owner runs
    assert builder.leftover_owner_files(("nw",)) == [tmp_path / "nwaaaaa"]
    record = up_registry.RunningTestbed("t", me, "nwaaaaa", "/tmp", "t.yaml", {}, start + 7)
    assert not record.alive
    assert up_registry.RunningTestbed("t", me, "nwbbbbb", "/tmp", "t.yaml", {}, start).alive
    # records written before start times were kept
    assert up_registry.RunningTestbed("t", me, "nwbbbbb", "/tmp", "t.yaml", {}).alive
