"""The discrete-event loop: ordering, cancellation, virtual time."""

from netweft.transport.sim.event_loop import EventLoop


def test_events_fire_in_time_then_insertion_order():
    loop = EventLoop()
    fired = []
    loop.call_at(30, fired.append, "c")
    loop.call_at(10, fired.append, "a")
    loop.call_at(10, fired.append, "b")
    loop.call_later(20, fired.append, "m")
    assert loop.run_until(lambda: len(fired) == 4)
    assert fired == ["a", "b", "m", "c"]
    assert loop.now_ns == 30


def test_cancelled_timer_does_not_fire_and_time_never_goes_back():
    loop = EventLoop()
    fired = []
    t = loop.call_at(5, fired.append, 1)
    loop.call_at(7, fired.append, 2)
    t.cancel()
    loop.run_for(100)
    assert fired == [2]
    assert loop.now_ns == 100
    loop.call_at(50, fired.append, 3)  # in the past: runs now, not earlier
    loop.step()
    assert loop.now_ns == 100 and fired == [2, 3]


def test_run_until_stops_at_the_time_limit_and_reports_idleness():
    loop = EventLoop()
    loop.call_at(1_000, lambda: None)
    assert not loop.run_until(lambda: False, until_ns=500)
    assert loop.now_ns == 500 and loop.next_time() == 1_000
    assert not loop.run_until(lambda: False)  # runs the event, then idle
    assert loop.next_time() is None and loop.events_run == 1
