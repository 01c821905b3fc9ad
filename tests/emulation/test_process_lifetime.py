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
