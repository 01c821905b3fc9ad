"""The soak's verdict: growth after the warm-up against the bound, dead processes fail."""

from netweft.testbed.experiments.soak import growth_verdict


def _samples(series: dict[str, list[int | None]]) -> list[dict]:
    steps = len(next(iter(series.values())))
    return [{"t": 10.0 * i, "rss_kib": {name: values[i] for name, values in series.items()}}
            for i in range(steps)]


def test_growth_is_measured_from_the_end_of_the_warm_up():
    # 40 MiB of start-up growth before t=20 s, then 3 MiB: within a 4 MiB bound
    samples = _samples({"switch s1": [10_240, 51_200, 51_200, 52_224, 54_272, 53_248]})
    verdict = growth_verdict(samples, warmup_s=20.0, bound_mib=4.0)
    assert verdict["ok"]
    assert verdict["processes"]["switch s1"]["growth_mib"] == 3.0


def test_growth_beyond_the_bound_or_a_dead_process_fails():
    samples = _samples({"a": [1024, 1024, 1024, 7168], "b": [1024, 1024, 1024, 1024]})
    over = growth_verdict(samples, warmup_s=10.0, bound_mib=4.0)
    assert not over["ok"] and over["processes"]["a"]["growth_mib"] == 6.0
    died = growth_verdict(_samples({"a": [1024, 1024, None, None]}), 10.0, 4.0)
    assert not died["ok"] and died["processes"]["a"] == {"died": True}
