from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.clock import VirtualClock

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_manual_clock_stands_still_until_advanced():
    clock = VirtualClock(START)
    assert clock.now() == START
    clock.advance(timedelta(days=28))
    assert clock.now() == START + timedelta(days=28)


def test_naive_start_is_rejected():
    with pytest.raises(ValueError):
        VirtualClock(datetime(2026, 1, 1))


def test_clock_never_moves_back():
    with pytest.raises(ValueError):
        VirtualClock(START).advance(-1)


@given(
    st.lists(st.integers(min_value=0, max_value=10_000), max_size=30),
    st.integers(min_value=0, max_value=12_000),
)
def test_events_fire_in_time_order_and_see_their_own_time(offsets, advance_by):
    clock = VirtualClock(START)
    fired = []
    for offset in offsets:
        at = START + timedelta(seconds=offset)
        clock.schedule(at, lambda t, at=at: fired.append((t, clock.now(), at)))
    clock.advance(advance_by)
    due = sorted(o for o in offsets if o <= advance_by)
    assert [t for t, _, _ in fired] == [START + timedelta(seconds=o) for o in due]
    assert all(t == seen == at for t, seen, at in fired)
    assert clock.now() == START + timedelta(seconds=advance_by)


def test_cancelled_event_does_not_fire():
    clock = VirtualClock(START)
    fired = []
    event = clock.schedule(START + timedelta(seconds=5), fired.append)
    event.cancel()
    clock.advance(10)
    assert fired == [] and clock.next_due() is None


def test_event_scheduled_by_an_event_fires_in_the_same_advance():
    clock = VirtualClock(START)
    fired = []
    clock.schedule(
        START + timedelta(seconds=1), lambda t: clock.schedule(t + timedelta(seconds=1), fired.append)
    )
    clock.advance(5)
    assert fired == [START + timedelta(seconds=2)]


def test_wall_clock_follows_real_time_plus_advances():
    clock = VirtualClock(None)
    before = datetime.now(timezone.utc)
    clock.advance(timedelta(days=2))
    assert clock.now() - before >= timedelta(days=2)
    assert clock.now().tzinfo is not None


def test_rescheduling_50_000_times_keeps_a_handful_of_entries():
    clock = VirtualClock(START)
    fired = []
    event = clock.schedule(START + timedelta(hours=1), fired.append)
    for i in range(50_000):
        event.cancel()
        event = clock.schedule(START + timedelta(hours=1, seconds=i), fired.append)
    assert clock.queued() <= 3
    clock.advance(timedelta(days=1))
    assert fired == [START + timedelta(hours=1, seconds=49_999)] and clock.queued() == 0


@settings(max_examples=50)
@given(
    st.lists(st.tuples(st.integers(min_value=0, max_value=100), st.booleans()), max_size=60),
    st.integers(min_value=0, max_value=120),
)
def test_compaction_keeps_exactly_the_live_events(plan, advance_by):
    clock = VirtualClock(START)
    fired, live = [], []
    for offset, cancel in plan:
        event = clock.schedule(START + timedelta(seconds=offset), lambda t, o=offset: fired.append(o))
        if cancel:
            event.cancel()
            event.cancel()  # twice changes nothing
        else:
            live.append(offset)
    assert clock.queued() <= 2 * len(live) + 1
    clock.advance(advance_by)
    assert fired == sorted(o for o in live if o <= advance_by)


def test_cancelling_a_fired_event_or_from_inside_an_action_is_harmless():
    clock = VirtualClock(START)
    fired = []
    later = [clock.schedule(START + timedelta(seconds=10 + i), fired.append) for i in range(5)]

    def cancel_the_rest(at):
        for event in later:
            event.cancel()  # compacts the queue while advance iterates it
        first.cancel()

    first = clock.schedule(START + timedelta(seconds=1), cancel_the_rest)
    clock.advance(60)
    assert fired == [] and clock.queued() == 0 and clock.next_due() is None


def test_settle_lets_waiters_run_up_to_a_moment_without_moving_the_clock():
    clock = VirtualClock(datetime(2026, 1, 1, tzinfo=timezone.utc))
    seen = []
    clock.add_waiter(seen.append)
    later = clock.now() + timedelta(minutes=5)
    clock.settle(later)
    assert seen == [later]
    assert clock.now() == datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_a_pinned_wall_clock_reads_the_pinned_moment_and_applies_what_is_due_by_then():
    clock = VirtualClock()
    fired = []
    earlier = clock.now() - timedelta(hours=2)
    clock.schedule(earlier + timedelta(minutes=30), fired.append)
    clock.schedule(earlier + timedelta(hours=1), fired.append)
    with clock.pinned(earlier + timedelta(minutes=45)):
        assert clock.now() == earlier + timedelta(minutes=45)
        assert fired == [earlier + timedelta(minutes=30)]  # the second is not due yet
        clock.move(timedelta(minutes=20))  # an advance while pinned moves the pinned moment too
        assert clock.now() == earlier + timedelta(minutes=65)
        assert fired[-1] == earlier + timedelta(hours=1)
    assert clock.offset == timedelta(minutes=20)
    assert clock.now() > datetime.now(timezone.utc) + timedelta(
        minutes=19
    )  # real time again, plus the offset


def test_a_pin_never_reads_before_what_was_already_applied():
    clock, fired = VirtualClock(), []
    clock.schedule(clock.now() - timedelta(minutes=1), fired.append)
    clock.catch_up()  # changes applied up to now
    applied = clock.now()
    assert fired
    with clock.pinned(applied - timedelta(hours=1)):
        assert clock.now() >= applied - timedelta(seconds=1)


def test_a_manual_clock_pinned_ahead_moves_there_and_stays():
    clock = VirtualClock(START)
    with clock.pinned(START + timedelta(hours=1)):
        assert clock.now() == START + timedelta(hours=1)
    with clock.pinned(START):  # never back
        assert clock.now() == START + timedelta(hours=1)
    assert clock.now() == START + timedelta(hours=1)


def test_advances_go_through_the_advancer_and_catch_up_through_the_syncer():
    clock, seen = VirtualClock(START), []
    clock.advancer = lambda delta: seen.append(delta) or clock.move(delta)
    clock.syncer = lambda: seen.append("sync")
    assert clock.advance(90) == START + timedelta(seconds=90)
    clock.catch_up()
    assert seen == [timedelta(seconds=90), "sync"]
