import math
import re
from datetime import datetime, time, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import event, given, settings, strategies as st

from sagemaker_plans_local.domain.capacity import CapacityInventory
from sagemaker_plans_local.domain.errors import InvalidRequest
from sagemaker_plans_local.domain.offerings import (
    DayGrid, ceil_half_hour, search_extensions, search_offerings)
from sagemaker_plans_local.domain.pricing import PriceList

DAY = timedelta(days=1)
HALF = timedelta(minutes=30)
LEAD = timedelta(days=56)
NOW = datetime(2026, 3, 2, 9, 47, tzinfo=timezone.utc)
MORNING = datetime(2026, 3, 2, 11, 30, tzinfo=timezone.utc)  # the first 11:30 after NOW
P5 = "ml.p5.48xlarge"
PRICES = PriceList({P5: "10"})


def day(n):
    return MORNING + n * DAY


def inventory_of(*blocks):
    inventory = CapacityInventory()
    for az, start, end, count in blocks:
        inventory.add(P5, count, az, start, end)
    return inventory


def search(inventory, **request):
    request = {"now": NOW, "instance_type": P5, "instance_count": 1, "duration_hours": 24,
               "target": "training-job", **request}
    return search_offerings(inventory, PRICES, **request)


def shape(offerings):
    return [[(b.availability_zone, b.start, b.end) for b in o.blocks] for o in offerings]


# -- timing ---------------------------------------------------------------------
def test_grid_starts_at_the_next_half_hour_then_every_1130():
    grid = DayGrid.from_moment(NOW)
    assert grid.origin == datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
    assert [grid.at(i) for i in range(3)] == [grid.origin, MORNING, day(1)]
    at_1130 = DayGrid.from_moment(MORNING)
    assert [at_1130.at(i) for i in range(2)] == [MORNING, day(1)]
    assert ceil_half_hour(MORNING) == MORNING
    assert ceil_half_hour(MORNING + timedelta(microseconds=1)) == MORNING + HALF


def test_a_block_starting_now_runs_a_partial_first_day():
    inventory = inventory_of(("az-a", NOW - DAY, day(10), 8))
    first = search(inventory, duration_hours=48, instance_count=8)[0]
    (block,) = first.blocks
    assert block.start == datetime(2026, 3, 2, 10, 0, tzinfo=timezone.utc)
    assert block.end == day(1)  # 1.5 h on the first day + one full day
    assert first.duration == timedelta(hours=25, minutes=30)
    assert first.upfront_fee == Decimal("2040.00")  # 25.5 h x 8 x 10
    assert first.currency == "USD"


def test_duration_hours_round_up_to_whole_days():
    inventory = inventory_of(("az-a", MORNING, day(10), 1))
    offering = search(inventory, duration_hours=25, start_after=MORNING)[0]
    assert offering.start == MORNING and offering.end == day(2)


def test_contiguous_offerings_rank_by_start_then_zone():
    inventory = inventory_of(("az-b", MORNING, day(5), 2), ("az-a", day(1), day(5), 2),
                             ("az-c", MORNING, day(5), 2))
    offerings = search(inventory, duration_hours=72, instance_count=2)
    assert shape(offerings) == [[("az-b", MORNING, day(3))], [("az-c", MORNING, day(3))],
                                [("az-a", day(1), day(4))]]
    assert len({o.offering_id for o in offerings}) == 3


def test_end_before_and_start_after_bound_the_blocks():
    inventory = inventory_of(("az-a", NOW - DAY, day(30), 1))
    offerings = search(inventory, duration_hours=48, start_after=day(3) + HALF,
                       end_before=day(7))
    assert [o.start for o in offerings] == [day(3) + HALF, day(4), day(5)]
    assert all(o.end <= day(7) for o in offerings)
    assert offerings[0].requested_start_after == day(3) + HALF
    assert offerings[0].requested_end_before == day(7)


def test_no_block_starts_later_than_56_days_ahead():
    inventory = inventory_of(("az-a", day(54), day(70), 1))
    offerings = search(inventory, duration_hours=24 * 5)
    assert [o.start for o in offerings] == [day(54), day(55)]  # day(56) is past now + 56 days


def test_two_blocks_only_when_no_contiguous_block_exists():
    inventory = inventory_of(("az-a", MORNING, day(2), 4), ("az-a", day(3), day(5), 4),
                             ("az-b", day(2), day(4), 4))
    offerings = search(inventory, duration_hours=72, instance_count=4)
    assert shape(offerings) == [
        [("az-a", MORNING, day(2)), ("az-b", day(2), day(3))],
        [("az-a", MORNING, day(2)), ("az-a", day(3), day(4))],  # same AZ before cross-AZ
        [("az-a", MORNING, day(2)), ("az-b", day(3), day(4))],
    ]  # (az-a M..d1, az-b d2..d4) would start both blocks as the first does: not offered
    hyperpod = search(inventory, duration_hours=72, instance_count=4, target="hyperpod-cluster")
    assert shape(hyperpod) == [
        [("az-a", MORNING, day(2)), ("az-a", day(3), day(4))],
        [("az-a", MORNING, day(2)), ("az-a", day(4), day(5))],
        [("az-a", day(1), day(2)), ("az-a", day(3), day(5))],
    ]
    inventory.add(P5, 4, "az-c", day(40), day(43))
    assert shape(search(inventory, duration_hours=72, instance_count=4)) == [
        [("az-c", day(40), day(43))]]


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


@pytest.mark.parametrize("request_, message", [
    ({"target": "endpoint"}, "not supported by this emulator"),
    ({"target": "studio-apps"}, "not supported by this emulator"),
    ({"target": "notebook"}, "not valid"),
    ({"instance_count": 3}, "InstanceCount 3"),
    ({"instance_count": 128}, "InstanceCount 128"),
    ({"duration_hours": 0}, "DurationHours 0"),
    ({"duration_hours": 182 * 24 + 1}, "DurationHours 4369"),
    ({"start_after": NOW - timedelta(seconds=1)}, "must be in the future"),
    ({"start_after": NOW + LEAD + timedelta(seconds=1)}, "at most 56 days"),
    ({"end_before": NOW + DAY - timedelta(seconds=1)}, "at least 24 hours"),
    ({"start_after": day(3), "end_before": day(4) - timedelta(minutes=1)}, "at least 24 hours"),
])
def test_rule_violations_raise_invalid_request(request_, message):
    with pytest.raises(InvalidRequest, match=message):
        search(inventory_of(("az-a", MORNING, day(9), 1)), **request_)


def test_the_longest_plan_and_lead_are_accepted():
    inventory = inventory_of(("az-a", day(55), day(55 + 182), 1))
    (offering,) = search(inventory, duration_hours=182 * 24, start_after=day(55))
    assert (offering.start, offering.end) == (day(55), day(55 + 182))
    assert search(inventory, start_after=NOW + LEAD) == []  # its next half hour is past the lead


# -- properties over random inventories and requests ------------------------------
def next_1130(moment):
    candidate = datetime.combine(moment.date(), time(11, 30), timezone.utc)
    return candidate if candidate > moment else candidate + DAY


def days_in(start, end):
    """Whole days a block stands for: a partial first day counts as one."""
    if start.time() == time(11, 30):
        return (end - start) / DAY
    return 1 + (end - next_1130(start)) / DAY


def brute_force(inventory, now, count, days, target, start_after, end_before):
    """Every offering the rules allow, ranked as documented, straight from the spec."""
    earliest = ceil_half_hour(max(now, start_after or now))
    horizon = max((b.end for b in inventory.blocks()), default=earliest)
    starts = [earliest]
    while (nxt := next_1130(starts[-1])) <= min(now + LEAD, horizon):
        starts.append(nxt)
    starts = [s for s in starts if s <= now + LEAD]

    def end_of(start, length):
        return start + length * DAY if start.time() == time(11, 30) else next_1130(start) + (length - 1) * DAY

    zones = inventory.zones(P5)
    fits = {}
    for start in starts:
        for length in range(1, days + 1):
            end = end_of(start, length)
            if end_before is not None and end > end_before:
                continue
            for az in zones:
                if inventory.free_count(P5, az, start, end) >= count:
                    fits.setdefault(length, []).append((start, end, az))
    whole = sorted((s, az, e) for s, e, az in fits.get(days, []))
    if whole:
        return [[(az, s, e)] for s, az, e in whole[:3]]
    ranked = []
    for d1 in range(1, days):
        for s1, e1, az1 in fits.get(d1, []):
            for s2, e2, az2 in fits.get(days - d1, []):
                if s2 >= e1 and (target == "training-job" or az1 == az2):
                    ranked.append(((e2, s1, az1 != az2, az1, az2, s2), [(az1, s1, e1), (az2, s2, e2)]))
    ranked.sort()
    best, seen = [], set()
    for _, pick in ranked:
        key = tuple((az, start) for az, start, _ in pick)
        if key not in seen:  # distinct offerings differ in a block's start or AZ
            seen.add(key)
            best.append(pick)
    return best[:3]


ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
blocks_strategy = st.lists(
    st.tuples(st.sampled_from(ZONES), st.integers(-1, 14), st.integers(0, 47) | st.just(0),
              st.integers(1, 4), st.sampled_from((1, 2, 4, 8, 16))),
    max_size=10)


@st.composite
def requests(draw, days=(1, 6), counts=(1, 2, 4, 8)):
    now = MORNING - DAY + timedelta(minutes=draw(st.integers(0, 2 * 24 * 60)))
    request = {
        "now": now,
        "instance_count": draw(st.sampled_from(counts)),
        "duration_hours": draw(st.integers(days[0] * 24 - 23, days[1] * 24)),
        "target": draw(st.sampled_from(("training-job", "hyperpod-cluster"))),
        "start_after": None,
        "end_before": None,
    }
    if draw(st.booleans()):
        request["start_after"] = now + timedelta(minutes=draw(st.integers(0, 5 * 24 * 60)))
    if draw(st.booleans()):
        base = request["start_after"] or now
        request["end_before"] = base + DAY + timedelta(minutes=draw(st.integers(0, 14 * 24 * 60)))
    return request


def check_search(inventory, request):
    offerings = search_offerings(inventory, PRICES, instance_type=P5, **request)
    now, count, days = request["now"], request["instance_count"], math.ceil(request["duration_hours"] / 24)
    earliest = ceil_half_hour(max(now, request["start_after"] or now))
    assert len(offerings) <= 3
    assert len({o.offering_id for o in offerings}) == len(offerings)
    assert len({tuple((b.availability_zone, b.start) for b in o.blocks) for o in offerings}) == len(offerings)
    for offering in offerings:
        assert re.fullmatch(r"tpo-[0-9a-f]{40}", offering.offering_id)
        assert (offering.instance_count, offering.target) == (count, request["target"])
        assert 1 <= len(offering.blocks) <= 2
        assert sum(days_in(b.start, b.end) for b in offering.blocks) == days
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
    assert len({len(o.blocks) for o in offerings}) <= 1  # never contiguous and split mixed
    event(f"{len(offerings)} offerings of {len(offerings[0].blocks) if offerings else 0} blocks")
    # The spec's search, done slowly: contiguous first, two blocks only without any, same ranking.
    assert shape(offerings) == brute_force(inventory, count=count, days=days, **{
        k: request[k] for k in ("now", "target", "start_after", "end_before")})


# -- extensions -------------------------------------------------------------------
def extend(inventory, hours, plan_end=day(3), now=NOW, count=4):
    return search_extensions(inventory, PRICES, now=now, instance_type=P5, instance_count=count,
                             availability_zone="az-a", plan_end=plan_end, duration_hours=hours)


@pytest.mark.parametrize("hours,days", [(1, 1), (24, 1), (25, 2), (14 * 24, 14), (21 * 24, 21),
                                        (20 * 24 + 1, 21), (182 * 24, 182)])
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


@settings(max_examples=300, deadline=None)
@given(blocks_strategy, requests())
def test_offerings_fit_the_inventory_and_the_request(blocks, request):
    inventory = CapacityInventory()
    for az, first_day, half_hours, length, count in blocks:
        start = MORNING + first_day * DAY + half_hours * HALF
        inventory.add(P5, count, az, start, start + length * DAY)
    check_search(inventory, request)


fragments = st.lists(st.tuples(st.integers(0, 3), st.integers(1, 2), st.sampled_from((1, 2))),
                     min_size=1, max_size=6)


@settings(max_examples=300, deadline=None)
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
