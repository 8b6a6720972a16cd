import math
import re
from datetime import datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.core.errors import InvalidRequest
from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityInventory
from sagemaker_plans_local.services.sagemaker.plans.offering_search import DayGrid, ceil_minute
from sagemaker_plans_local.services.sagemaker.plans.offerings import (
    Capacity,
    origin_of,
    search_extensions,
    search_offerings,
)
from sagemaker_plans_local.services.sagemaker.plans.pricing import PriceList
from sagemaker_plans_local.services.sagemaker.plans.ultraservers import ultra_server_types

DAY = timedelta(days=1)
HALF = timedelta(minutes=30)
LEAD = timedelta(days=56)
NOW = datetime(2026, 3, 2, 9, 47, tzinfo=timezone.utc)
ORIGIN = datetime(2026, 3, 2, 10, 17, tzinfo=timezone.utc)  # NOW + 30 min
MORNING = datetime(2026, 3, 2, 11, 30, tzinfo=timezone.utc)  # the first 11:30 after NOW
P5 = "ml.p5.48xlarge"
PRICES = PriceList({P5: "10", "ml.p4d.24xlarge": "20", "ml.p6e-gb200.36xlarge": "30"})


def day(n):
    return MORNING + n * DAY


def inventory_of(*blocks):
    inventory = CapacityInventory()
    for az, start, end, count in blocks:
        inventory.add(P5, count, az, start, end)
    return inventory


def search(inventory, instance_count=1, **request):
    request = {
        "now": NOW,
        "capacity": Capacity(P5, instance_count),
        "duration_hours": 24,
        "target": "training-job",
        **request,
    }
    return search_offerings(inventory, PRICES, **request)


def shape(offerings):
    return [[(b.availability_zone, b.start, b.end) for b in o.blocks] for o in offerings]


# -- timing ---------------------------------------------------------------------
def test_the_documented_sample_search():
    """AWS's guide: a 15-hour search at 11:08:27 PST offers 15 h 51 min, 39 h 51 min and 24 h 0 min."""
    pst = timezone(timedelta(hours=-8))
    now = datetime(2025, 1, 21, 11, 8, 27, 704000, tzinfo=pst)
    inventory = CapacityInventory()
    inventory.clear()
    inventory.add("ml.p4d.24xlarge", 1, "us-east-1a", now - DAY, now + 10 * DAY)
    offerings = search_offerings(
        inventory,
        PRICES,
        now=now,
        capacity=Capacity("ml.p4d.24xlarge", 1),
        duration_hours=15,
        target="training-job",
        end_before=now + 2 * DAY,
    )
    assert [o.duration for o in offerings] == [
        timedelta(hours=15, minutes=51),
        timedelta(hours=39, minutes=51),
        timedelta(hours=24),
    ]
    starts = [o.start.astimezone(pst) for o in offerings]
    assert starts == [datetime(2025, 1, 21, 11, 39, tzinfo=pst)] * 2 + [
        datetime(2025, 1, 22, 3, 30, tzinfo=pst)
    ]
    assert all(o.end.astimezone(timezone.utc).time() == time(11, 30) for o in offerings)
    assert all(len(o.blocks) == 1 for o in offerings)


def test_the_origin_is_30_minutes_after_the_search_rounded_up_to_the_minute():
    assert origin_of(NOW, None) == ORIGIN
    assert origin_of(NOW + timedelta(seconds=1), None) == ORIGIN + timedelta(minutes=1)
    assert origin_of(NOW, day(3) + timedelta(seconds=1)) == day(3) + timedelta(minutes=1)
    assert origin_of(NOW, NOW) == ORIGIN  # StartTimeAfter now: 30 minutes on, as without it
    assert ceil_minute(MORNING) == MORNING
    grid = DayGrid.from_origin(ORIGIN)
    assert [grid.at(i) for i in range(3)] == [ORIGIN, MORNING, day(1)] and grid.partial
    whole = DayGrid.from_origin(MORNING)
    assert [whole.at(i) for i in range(2)] == [MORNING, day(1)] and not whole.partial


def test_a_block_starting_at_the_origin_runs_a_partial_first_day():
    inventory = inventory_of(("az-a", NOW - DAY, day(10), 8))
    first = search(inventory, duration_hours=48, instance_count=8)[0]
    (block,) = first.blocks
    assert (block.start, block.end) == (ORIGIN, day(2))  # never less than 48 h: 1 h 13 min + 2 days
    assert first.duration == timedelta(hours=49, minutes=13)
    assert first.upfront_fee == Decimal("3937.33")  # 49 h 13 min x 8 x 10
    assert first.currency == "USD"


def test_offerings_never_total_less_than_the_hours_asked():
    inventory = inventory_of(("az-a", NOW - DAY, day(30), 1))
    for hours in (1, 15, 23, 24, 25, 47, 48, 49, 100):
        for offering in search(inventory, duration_hours=hours):
            assert offering.duration >= timedelta(hours=hours)
            assert offering.duration < timedelta(hours=hours) + 2 * DAY


def test_duration_hours_round_up_to_whole_days_from_1130():
    inventory = inventory_of(("az-a", MORNING, day(10), 1))
    offering = search(inventory, duration_hours=25, start_after=MORNING)[0]
    assert offering.start == MORNING and offering.end == day(2)


def test_offerings_differ_in_their_times_and_take_the_first_az():
    inventory = inventory_of(
        ("az-b", MORNING, day(5), 2), ("az-a", day(1), day(5), 2), ("az-c", MORNING, day(5), 2)
    )
    offerings = search(inventory, duration_hours=72, instance_count=2)
    assert shape(offerings) == [
        [("az-b", MORNING, day(3))],
        [("az-b", MORNING, day(1)), ("az-a", day(1), day(3))],  # same end, same start: one block first
        [("az-b", MORNING, day(2)), ("az-a", day(2), day(3))],
    ]
    assert len({o.offering_id for o in offerings}) == 3


def test_one_answer_mixes_one_and_two_block_offerings():
    """The guide: a 48-hour search "might offer two 24-hour blocks, one continuous 48-hour block, ..."."""
    inventory = inventory_of(
        ("az-a", MORNING, day(1), 1), ("az-b", day(1), day(2), 1), ("az-c", day(1), day(4), 1)
    )
    offerings = search(inventory, duration_hours=48, start_after=MORNING)
    assert shape(offerings) == [
        [("az-a", MORNING, day(1)), ("az-b", day(1), day(2))],  # two 24-hour blocks, ending first
        [("az-c", day(1), day(3))],  # one continuous 48-hour block: same end, one block first
        [("az-a", MORNING, day(1)), ("az-c", day(2), day(3))],  # (az-a, az-c) from day 1 = the first's times
    ]
    hyperpod = search(inventory, duration_hours=48, start_after=MORNING, target="hyperpod-cluster")
    assert shape(hyperpod) == [
        [("az-c", day(1), day(3))],
        [("az-c", day(2), day(4))],
        [("az-c", day(1), day(2)), ("az-c", day(3), day(4))],
    ]


def test_two_blocks_when_they_end_first():
    inventory = inventory_of(
        ("az-a", MORNING, day(2), 4), ("az-a", day(3), day(5), 4), ("az-b", day(2), day(4), 4)
    )
    offerings = search(inventory, duration_hours=72, instance_count=4)
    assert shape(offerings) == [
        [("az-a", MORNING, day(2)), ("az-b", day(2), day(3))],
        [("az-a", MORNING, day(1)), ("az-b", day(2), day(4))],
        [("az-a", MORNING, day(2)), ("az-a", day(3), day(4))],  # the same times in az-b: one AZ first
    ]
    hyperpod = search(inventory, duration_hours=72, instance_count=4, target="hyperpod-cluster")
    assert shape(hyperpod) == [
        [("az-a", MORNING, day(2)), ("az-a", day(3), day(4))],
        [("az-a", MORNING, day(1)), ("az-a", day(3), day(5))],
        [("az-a", MORNING, day(2)), ("az-a", day(4), day(5))],
    ]
    inventory.add(P5, 4, "az-c", day(40), day(43))  # a contiguous block, ending much later
    assert shape(search(inventory, duration_hours=72, instance_count=4)) == shape(offerings)
    assert shape(search(inventory, duration_hours=72, instance_count=4, start_after=day(5))) == [
        [("az-c", day(40), day(43))]
    ]


def test_targets_other_than_training_jobs_keep_one_az():
    inventory = inventory_of(("az-a", MORNING, day(1), 1), ("az-b", day(1), day(2), 1))
    assert len(search(inventory, duration_hours=48, start_after=MORNING)) == 1
    for target in ("endpoint", "studio-apps", "hyperpod-cluster"):
        assert search(inventory, duration_hours=48, start_after=MORNING, target=target) == []
        (one,) = search(inventory, start_after=day(1), target=target)
        assert one.target == target


def test_end_before_and_start_after_bound_the_blocks():
    inventory = inventory_of(("az-a", NOW - DAY, day(30), 1))
    offerings = search(inventory, duration_hours=48, start_after=day(3) + HALF, end_before=day(7))
    assert [o.start for o in offerings] == [day(3) + HALF, day(4), day(5)]
    assert [o.end for o in offerings] == [day(6), day(6), day(7)]  # 71 h, 48 h, 48 h
    assert offerings[0].requested_start_after == day(3) + HALF
    assert offerings[0].requested_end_before == day(7)


def test_no_block_starts_later_than_56_days_ahead():
    inventory = inventory_of(("az-a", day(54), day(70), 1))
    offerings = search(inventory, duration_hours=24 * 5)
    assert [o.start for o in offerings] == [day(54), day(55)]  # day(56) is past now + 56 days


def test_nothing_available_is_an_empty_list():
    assert search(CapacityInventory()) == []
    inventory = inventory_of(("az-a", MORNING, day(2), 4))
    assert search(inventory, instance_count=8) == []
    assert search(inventory, duration_hours=24 * 5, instance_count=4) == []


def test_two_searches_give_different_ids():
    inventory = inventory_of(("az-a", MORNING, day(2), 4))
    (one,), (two,) = search(inventory, duration_hours=48), search(inventory, duration_hours=48)
    assert one.blocks == two.blocks and one.offering_id != two.offering_id
    assert re.fullmatch(r"tpo-[0-9a-f]{40}", one.offering_id)


def test_sold_capacity_is_not_offered_again():
    inventory = inventory_of(("az-a", MORNING, day(3), 1))
    first = search(inventory, start_after=MORNING)[0]
    block = first.blocks[0]
    inventory.remove(P5, block.availability_zone, block.start, block.end, block.count)
    assert [o.start for o in search(inventory, start_after=MORNING)] == [day(1), day(2)]


def test_ultra_servers_are_searched_as_whole_servers():
    kind = ultra_server_types()["ml.u-p6e-gb200x72"]
    inventory = CapacityInventory()
    inventory.add(kind.name, 2, "az-a", MORNING, day(5))
    inventory.add(kind.instance_type, 64, "az-b", MORNING, day(5))  # instances are not UltraServers
    (offering, *_) = search_offerings(
        inventory,
        PRICES,
        now=NOW,
        capacity=Capacity.ultra(kind, 2),
        duration_hours=48,
        target="hyperpod-cluster",
    )
    (block,) = offering.blocks
    assert (block.availability_zone, block.count, block.capacity.ultra_server_count) == ("az-a", 36, 2)
    assert offering.upfront_fee == Decimal(48 * 36 * 30).quantize(Decimal("0.01"))
    assert (
        search_offerings(
            inventory,
            PRICES,
            now=NOW,
            capacity=Capacity.ultra(kind, 3),
            duration_hours=48,
            target="hyperpod-cluster",
        )
        == []
    )


@pytest.mark.parametrize(
    "request_, message",
    [
        ({"instance_count": 3}, "InstanceCount 3"),
        ({"instance_count": 128}, "InstanceCount 128"),
        ({"duration_hours": 0}, "DurationHours 0"),
        ({"duration_hours": 182 * 24 + 1}, "DurationHours 4369"),
        ({"start_after": NOW - timedelta(minutes=1, seconds=1)}, "must be in the future"),
        ({"start_after": NOW + LEAD + timedelta(seconds=1)}, "at most 56 days"),
        ({"end_before": NOW + DAY - timedelta(seconds=1)}, "at least 24 hours"),
        ({"start_after": day(3), "end_before": day(4) - timedelta(minutes=1)}, "at least 24 hours"),
    ],
)
def test_rule_violations_raise_invalid_request(request_, message):
    with pytest.raises(InvalidRequest, match=message):
        search(inventory_of(("az-a", MORNING, day(9), 1)), **request_)


def test_start_time_after_a_moment_ago_means_from_now():
    inventory = inventory_of(("az-a", NOW - DAY, day(9), 1))
    just_now = search(inventory, start_after=NOW - timedelta(minutes=1))
    assert shape(just_now) == shape(search(inventory))


def test_the_longest_plan_and_lead_are_accepted():
    inventory = inventory_of(("az-a", day(54), day(55 + 183), 1))
    (offering, *_) = search(inventory, duration_hours=182 * 24, start_after=day(54))
    assert (offering.start, offering.end) == (day(54), day(54 + 182))
    (latest, *_) = search(inventory, start_after=NOW + LEAD)  # a block may start right at the lead
    assert latest.start == NOW + LEAD
    assert latest.end == day(56) + DAY and latest.duration >= DAY


# -- properties over random inventories and requests ------------------------------
def next_1130(moment):
    candidate = datetime.combine(moment.date(), time(11, 30), timezone.utc)
    return candidate if candidate >= moment else candidate + DAY


def brute_force(inventory, now, count, hours, target, start_after, end_before):
    """Every offering the rules allow, ranked as documented, straight from the spec."""
    earliest = ceil_minute(max(now + timedelta(minutes=30), start_after or now))
    horizon = max((b.end for b in inventory.blocks()), default=earliest)
    starts = [earliest]
    while (nxt := next_1130(starts[-1] + timedelta(seconds=1))) <= min(now + LEAD, horizon):
        starts.append(nxt)
    starts = [s for s in starts if s <= now + LEAD]
    days = math.ceil(hours / 24)
    # The allowed totals from a start: those of the one-block offerings from it.
    totals = {s: {next_1130(s + timedelta(hours=hours)) - s, next_1130(s + days * DAY) - s} for s in starts}
    ends = sorted({next_1130(s + timedelta(seconds=1)) + n * DAY for s in starts for n in range(days + 2)})
    zones = inventory.zones(P5)
    fits = [
        (s, e, az)
        for s in starts
        for e in ends
        if e > s
        for az in zones
        if (end_before is None or e <= end_before) and inventory.free_count(P5, az, s, e) >= count
    ]
    one_zone = target != "training-job"
    ranked = [((e, 1, s, s, e, False, az, ""), ((az, s, e),)) for s, e, az in fits if e - s in totals[s]]
    for s1, e1, az1 in fits:
        for s2, e2, az2 in fits:
            if (e1 - s1) + (e2 - s2) not in totals[s1] or s2 < e1:
                continue
            if az1 == az2 and s2 == e1 or one_zone and az1 != az2:
                continue
            ranked.append(((e2, 2, s1, s2, e1, az1 != az2, az1, az2), ((az1, s1, e1), (az2, s2, e2))))
    ranked.sort()
    best, seen = [], set()
    for _, pick in ranked:
        times = tuple((start, end) for _, start, end in pick)
        if times not in seen:  # distinct offerings differ in their blocks' times
            seen.add(times)
            best.append(list(pick))
    return best[:3]


ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
blocks_strategy = st.lists(
    st.tuples(
        st.sampled_from(ZONES),
        st.integers(-1, 14),
        st.integers(0, 47) | st.just(0),
        st.integers(1, 4),
        st.sampled_from((1, 2, 4, 8, 16)),
    ),
    max_size=10,
)


@st.composite
def requests(draw, days=(1, 6), counts=(1, 2, 4, 8)):
    now = (
        MORNING - DAY + timedelta(minutes=draw(st.integers(0, 2 * 24 * 60)), seconds=draw(st.integers(0, 59)))
    )
    request = {
        "now": now,
        "instance_count": draw(st.sampled_from(counts)),
        "duration_hours": draw(st.integers(days[0] * 24 - 23, days[1] * 24)),
        "target": draw(st.sampled_from(("training-job", "hyperpod-cluster"))),
        "start_after": None,
        "end_before": None,
    }
    if draw(st.booleans()):
        request["start_after"] = now + timedelta(minutes=draw(st.integers(-1, 5 * 24 * 60)))
    if draw(st.booleans()):
        base = max(request["start_after"] or now, now)
        request["end_before"] = base + DAY + timedelta(minutes=draw(st.integers(0, 14 * 24 * 60)))
    return request


def check_search(inventory, request):
    count = request.pop("instance_count")
    offerings = search_offerings(inventory, PRICES, capacity=Capacity(P5, count), **request)
    now, hours = request["now"], request["duration_hours"]
    earliest = origin_of(now, request["start_after"])
    assert len(offerings) <= 3
    assert len({o.offering_id for o in offerings}) == len(offerings)
    assert len({tuple((b.start, b.end) for b in o.blocks) for o in offerings}) == len(offerings)
    for offering in offerings:
        assert re.fullmatch(r"tpo-[0-9a-f]{40}", offering.offering_id)
        assert (offering.instance_count, offering.target) == (count, request["target"])
        assert 1 <= len(offering.blocks) <= 2
        assert offering.duration >= timedelta(hours=hours)
        assert offering.upfront_fee == sum(PRICES.fee(P5, count, b.duration) for b in offering.blocks)
        for block in offering.blocks:
            assert inventory.free_count(P5, block.availability_zone, block.start, block.end) >= count
            assert block.count == count and block.instance_type == P5
            assert block.end.time() == time(11, 30) and block.end.tzinfo is not None
            assert block.start == earliest or (block.start > earliest and block.start.time() == time(11, 30))
            assert block.start <= now + LEAD
            assert request["end_before"] is None or block.end <= request["end_before"]
        if len(offering.blocks) == 2:
            first, second = offering.blocks
            assert second.start >= first.end
            if request["target"] == "hyperpod-cluster":
                assert first.availability_zone == second.availability_zone
    event(f"{len(offerings)} offerings of {sorted(len(o.blocks) for o in offerings)} blocks")
    # The spec's search, done slowly.
    assert shape(offerings) == brute_force(
        inventory,
        count=count,
        hours=hours,
        **{k: request[k] for k in ("now", "target", "start_after", "end_before")},
    )


# -- extensions -------------------------------------------------------------------
def extend(inventory, hours, plan_end=day(3), now=NOW, count=4):  # noqa: B008 (a datetime, immutable)
    return search_extensions(
        inventory,
        PRICES,
        now=now,
        capacity=Capacity(P5, count),
        availability_zone="az-a",
        plan_end=plan_end,
        duration_hours=hours,
    )


@pytest.mark.parametrize(
    "hours,days", [(1, 1), (24, 1), (25, 2), (14 * 24, 14), (21 * 24, 21), (20 * 24 + 1, 21), (182 * 24, 182)]
)
def test_extension_offers_the_days_right_after_the_plan(hours, days):
    inventory = inventory_of(("az-a", MORNING, day(200), 4))
    (offering,) = extend(inventory, hours)
    assert (offering.start, offering.end) == (day(3), day(3 + days))
    assert offering.duration_hours == days * 24
    assert (offering.availability_zone, offering.instance_count) == ("az-a", 4)
    assert offering.upfront_fee == Decimal(days * 24 * 4 * 10).quantize(Decimal("0.01"))
    assert re.fullmatch(r"tpeo-[0-9a-f]{40}", offering.offering_id)


@pytest.mark.parametrize("hours", [0, -24, 15 * 24, 14 * 24 + 1, 20 * 24, 189 * 24, 183 * 24])
def test_extension_durations_outside_the_steps_are_invalid(hours):
    with pytest.raises(InvalidRequest, match="not a valid extension"):
        extend(inventory_of(("az-a", MORNING, day(400), 4)), hours)


def test_extension_without_free_capacity_is_empty():
    inventory = inventory_of(("az-a", MORNING, day(5), 4), ("az-b", MORNING, day(30), 4))
    assert len(extend(inventory, 48)) == 1
    assert extend(inventory, 72) == []
    assert extend(inventory, 48, count=8) == []


def test_extension_of_an_ended_plan_is_invalid():
    with pytest.raises(InvalidRequest, match="already ended"):
        extend(inventory_of(("az-a", MORNING, day(9), 4)), 24, plan_end=NOW)


def _filled(blocks) -> CapacityInventory:
    inventory = CapacityInventory()
    for az, first_day, half_hours, length, count in blocks:
        start = MORNING + first_day * DAY + half_hours * HALF
        inventory.add(P5, count, az, start, start + length * DAY)
    return inventory


@settings(max_examples=150, deadline=None)
@given(blocks_strategy, requests())
def test_offerings_fit_the_inventory_and_the_request(blocks, request):
    check_search(_filled(blocks), request)


fragments = st.lists(
    st.tuples(st.integers(0, 3), st.integers(1, 2), st.sampled_from((1, 2))), min_size=1, max_size=6
)


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({zone: fragments for zone in ZONES}), requests(days=(2, 4), counts=(1, 2)))
def test_fragmented_capacity_is_split_as_the_spec_says(layout, request):
    inventory = CapacityInventory()
    for az, pieces in layout.items():
        start = MORNING - DAY
        for gap, length, count in pieces:
            start += gap * DAY
            inventory.add(P5, count, az, start, start + length * DAY)
            start += length * DAY
    check_search(inventory, request)


def test_a_search_after_one_zone_changed_sees_that_zone_and_keeps_the_others():
    inventory = inventory_of(("az-a", day(3), day(10), 1), ("az-b", day(5), day(10), 1))
    before = shape(search(inventory))
    assert before == [[("az-a", day(3), day(4))], [("az-a", day(4), day(5))], [("az-a", day(5), day(6))]]
    inventory.add(P5, 1, "az-b", MORNING, day(2))  # az-b frees earlier days
    assert shape(search(inventory)) == [
        [("az-b", MORNING, day(1))],
        [("az-b", day(1), day(2))],
        [("az-a", day(3), day(4))],
    ]
    inventory.remove(P5, "az-b", MORNING, day(2), 1)
    assert shape(search(inventory)) == before


@settings(max_examples=100, deadline=None)
@given(blocks_strategy, blocks_strategy, requests())
def test_a_search_on_an_inventory_changed_step_by_step_equals_one_on_a_fresh_inventory(first, later, request):
    """What the searches remember (runs per AZ, picks per set of runs) never outlives its inputs."""
    count = request.pop("instance_count")
    changed = _filled(first)
    search_offerings(changed, PRICES, capacity=Capacity(P5, count), **request)
    for az, first_day, half_hours, length, blocks in later:
        start = MORNING + first_day * DAY + half_hours * HALF
        changed.add(P5, blocks, az, start, start + length * DAY)
        search_offerings(changed, PRICES, capacity=Capacity(P5, count), **request)
    fresh = _filled(first + later)
    assert shape(search_offerings(changed, PRICES, capacity=Capacity(P5, count), **request)) == shape(
        search_offerings(fresh, PRICES, capacity=Capacity(P5, count), **request)
    )
