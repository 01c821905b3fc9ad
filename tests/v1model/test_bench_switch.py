"""``netweft bench switch`` runs and reports both programs (figures are not asserted)."""

from netweft.testbed.command_line import main


def test_bench_switch_reports_the_forwarder_and_the_largest_program(capsys):
    assert main(["bench", "switch", "--packets", "300"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:2] == ["program", "packets/s"]
    forwarder = next(line for line in out if line.startswith("basic_forward.p4"))
    assert forwarder.split()[-2:] == ["300", "300"]  # every packet forwarded
    # through the traffic manager with a queue and no rate, every packet leaves at once
    queued = next(line for line in out if "via queues (2:queue=64)" in line)
    assert queued.split()[-2:] == ["300", "300"]
    assert any("via queues+link" in line for line in out)
    # The largest program runs with its entries, so its packets are forwarded too.
    for mode in ("flow hash", "per-packet spray"):
        row = next(line for line in out if line.startswith("ecmp_spray.p4") and mode in line)
        assert row.split()[-2:] == ["300", "300"]


def test_bench_without_a_bench_name_prints_help(capsys):
    assert main(["bench"]) == 2
    assert "switch" in capsys.readouterr().out
