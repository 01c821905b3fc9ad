"""``scripts/setup``'s Debian step against a fake apt-get: it waits (bounded, with a
message) while another apt/dpkg process holds the lock, instead of failing at once."""

import os
import stat
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LOCKED = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 4242 "
          "(apt-get)\nE: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), "
          "is another process using it?\n")


def _script(path: Path, text: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.fixture
def fake_apt(tmp_path):
    """A PATH where iperf3 looks uninstalled and apt-get is locked for N calls."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # Every package is installed except iperf3, so the setup has one to install.
    _script(bin_dir / "dpkg-query", '[ "${@: -1}" = iperf3 ] && exit 1; echo "install ok installed"\n')
    _script(bin_dir / "apt-get", f"""
        calls="$(cat {tmp_path}/calls 2>/dev/null || echo 0)"
        echo $((calls + 1)) > {tmp_path}/calls
        echo "$*" >> {tmp_path}/argv
        if [ "$calls" -lt "$(cat {tmp_path}/locked_calls)" ]; then
            printf '%s' "{LOCKED}" >&2; exit 100
        fi
        exit 0
    """)

    def run(locked_calls: int, wait_s: int) -> subprocess.CompletedProcess[str]:
        (tmp_path / "locked_calls").write_text(str(locked_calls))
        env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}",
                   NETWEFT_SETUP_STEPS="debian", NETWEFT_APT_LOCK_WAIT=str(wait_s),
                   NETWEFT_APT_LOCK_POLL="0.05")
        return subprocess.run(["bash", str(ROOT / "scripts" / "setup")], env=env,
                              capture_output=True, text=True, timeout=120)

    run.argv = lambda: (tmp_path / "argv").read_text().splitlines()
    return run


@pytest.mark.skipif(os.geteuid() != 0, reason="the setup installs Debian packages only as root")
def test_setup_waits_for_the_apt_lock_and_then_installs(fake_apt):
    res = fake_apt(locked_calls=3, wait_s=60)
    assert res.returncode == 0, res.stderr
    assert "holds the package lock (held by process 4242 (apt-get)); waiting" in res.stderr
    argv = fake_apt.argv()
    assert argv[:3] == ["update -qq"] * 3  # retried while locked
    assert argv[-1].startswith("install") and argv[-1].endswith("iperf3")


@pytest.mark.skipif(os.geteuid() != 0, reason="the setup installs Debian packages only as root")
def test_setup_gives_up_after_the_bound_with_the_reason(fake_apt):
    res = fake_apt(locked_calls=10**6, wait_s=1)
    assert res.returncode == 1
    assert "gave up after 1s waiting for the apt/dpkg lock (held by process 4242" in res.stderr
    assert not any(a.startswith("install") for a in fake_apt.argv())


def test_sourcing_a_failing_setup_returns_to_the_shell_with_its_options_unchanged():
    """``source scripts/setup`` in an interactive shell must not set -e there, nor exit it."""
    script = (f'opts="$-"; NETWEFT_SETUP_STEPS=bogus source {ROOT}/scripts/setup; '
              'echo "status=$? same_options=$([ "$opts" = "$-" ] && echo yes)"')
    res = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "status=1 same_options=yes"
    assert "unknown setup step bogus" in res.stderr
