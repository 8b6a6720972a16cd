from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.services.sagemaker.plans.capacity import CapacityBlock, CapacityInventory

T0 = datetime(2026, 1, 1, 11, 30, tzinfo=timezone.utc)
H = timedelta(hours=1)
P5 = "ml.p5.48xlarge"
AZ = "us-east-1a"


def at(hours):
    return T0 + hours * H


def test_adds_stack_where_they_overlap():
    inventory = CapacityInventory()
    inventory.add(P5, 4, AZ, at(0), at(10))
    inventory.add(P5, 2, AZ, at(5), at(20))
    assert inventory.free_count(P5, AZ, at(0), at(5)) == 4
    assert inventory.free_count(P5, AZ, at(5), at(10)) == 6
    assert inventory.free_count(P5, AZ, at(0), at(20)) == 2
    assert inventory.free_count(P5, AZ, at(0), at(21)) == 0
    assert inventory.free_count(P5, AZ, at(-1), at(3)) == 0
    assert inventory.blocks() == [
        CapacityBlock(P5, AZ, at(0), at(5), 4),
        CapacityBlock(P5, AZ, at(5), at(10), 6),
        CapacityBlock(P5, AZ, at(10), at(20), 2),
    ]


def test_unknown_type_or_zone_has_nothing_free():
    inventory = CapacityInventory()
    inventory.add(P5, 4, AZ, at(0), at(10))
    assert inventory.free_count(P5, "us-east-1b", at(0), at(1)) == 0
    assert inventory.free_count("ml.trn2.48xlarge", AZ, at(0), at(1)) == 0
    assert inventory.windows("ml.trn2.48xlarge", AZ, 1, at(0), at(1)) == []
    assert inventory.zones("ml.trn2.48xlarge") == []


def test_windows_are_maximal_clipped_and_in_time_order():
    inventory = CapacityInventory()
    inventory.add(P5, 8, AZ, at(0), at(10))
    inventory.add(P5, 2, AZ, at(10), at(12))
    inventory.add(P5, 8, AZ, at(12), at(30))
    inventory.add(P5, 8, AZ, at(40), at(50))
    assert inventory.windows(P5, AZ, 4, at(-5), at(100)) == [
        (at(0), at(10)),
        (at(12), at(30)),
        (at(40), at(50)),
    ]
    assert inventory.windows(P5, AZ, 2, at(5), at(45)) == [(at(5), at(30)), (at(40), at(45))]
    assert inventory.windows(P5, AZ, 16, at(0), at(100)) == []
    assert inventory.windows(P5, AZ, 1, at(20), at(20)) == []


def test_remove_needs_enough_everywhere_and_give_back_restores():
    inventory = CapacityInventory()
    inventory.add(P5, 4, AZ, at(0), at(10))
    inventory.add(P5, 4, AZ, at(10), at(20))
    with pytest.raises(ValueError, match="only 0"):
        inventory.remove(P5, AZ, at(15), at(25), 1)
    with pytest.raises(ValueError):
        inventory.remove(P5, AZ, at(0), at(10), 5)
    inventory.remove(P5, AZ, at(5), at(15), 3)
    assert inventory.free_count(P5, AZ, at(0), at(20)) == 1
    assert inventory.windows(P5, AZ, 4, at(0), at(20)) == [(at(0), at(5)), (at(15), at(20))]
    inventory.give_back(P5, AZ, at(5), at(15), 3)
    assert inventory.blocks() == [CapacityBlock(P5, AZ, at(0), at(20), 4)]


@pytest.mark.parametrize(
    "count,start,end",
    [
        (0, at(0), at(1)),
        (1, at(1), at(1)),
        (1, at(2), at(1)),
        (1, datetime(2026, 1, 1), at(1)),
        (1, at(0), datetime(2026, 2, 1)),
    ],
)
def test_bad_adds_are_rejected(count, start, end):
    inventory = CapacityInventory()
    with pytest.raises(ValueError):
        inventory.add(P5, count, AZ, start, end)
    assert inventory.version == 0


def test_times_are_normalised_to_utc():
    inventory = CapacityInventory()
    plus2 = timezone(timedelta(hours=2))
    inventory.add(P5, 1, AZ, datetime(2026, 1, 1, 13, 30, tzinfo=plus2), at(24))
    (block,) = inventory.blocks()
    assert block.start == T0 and block.start.tzinfo is timezone.utc


def test_version_moves_on_every_change_and_zones_are_sorted():
    inventory = CapacityInventory()
    versions = [inventory.version]
    inventory.add(P5, 1, "us-east-1c", at(0), at(1))
    versions.append(inventory.version)
    inventory.add(P5, 1, AZ, at(0), at(1))
    versions.append(inventory.version)
    inventory.remove(P5, AZ, at(0), at(1), 1)
    versions.append(inventory.version)
    assert inventory.zones(P5) == [AZ, "us-east-1c"]  # sold out, but it had capacity
    inventory.give_back(P5, AZ, at(0), at(1), 1)
    versions.append(inventory.version)
    inventory.clear()
    versions.append(inventory.version)
    assert versions == sorted(set(versions))
    assert inventory.blocks() == [] and inventory.zones(P5) == []


def test_search_numbers_increase():
    inventory = CapacityInventory()
    assert [inventory.next_search_number() for _ in range(3)] == [1, 2, 3]


# -- against a brute-force model on a half-hour grid ------------------------------
HALF = timedelta(minutes=30)
ZONES = ("z-a", "z-b")
ops = st.lists(
    st.tuples(
        st.sampled_from(("add", "remove")),
        st.sampled_from(ZONES),
        st.integers(0, 40),
        st.integers(1, 20),
        st.integers(1, 8),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(ops, st.integers(0, 60), st.integers(1, 60), st.integers(1, 10))
def test_inventory_matches_a_brute_force_model(operations, q_start, q_length, need):
    inventory = CapacityInventory()
    model = {zone: [0] * 128 for zone in ZONES}
    for kind, zone, start, length, count in operations:
        span = range(start, start + length)
        begin, end = T0 + start * HALF, T0 + (start + length) * HALF
        if kind == "add":
            inventory.add(P5, count, zone, begin, end)
            for i in span:
                model[zone][i] += count
        elif min(model[zone][i] for i in span) >= count:
            inventory.remove(P5, zone, begin, end, count)
            for i in span:
                model[zone][i] -= count
        else:
            with pytest.raises(ValueError):
                inventory.remove(P5, zone, begin, end, count)
    q_end = q_start + q_length
    for zone in ZONES:
        free = model[zone]
        assert inventory.free_count(P5, zone, T0 + q_start * HALF, T0 + q_end * HALF) == min(
            free[q_start:q_end]
        )
        expected, opened = [], None
        for i in range(q_start, q_end + 1):
            ok = i < q_end and free[i] >= need
            if ok and opened is None:
                opened = i
            elif not ok and opened is not None:
                expected.append((T0 + opened * HALF, T0 + i * HALF))
                opened = None
        assert inventory.windows(P5, zone, need, T0 + q_start * HALF, T0 + q_end * HALF) == expected
    rebuilt = {zone: [0] * 128 for zone in ZONES}
    previous = None
    for block in inventory.blocks():
        assert block.count > 0 and block.start < block.end
        if previous is not None and previous.availability_zone == block.availability_zone:
            assert previous.end <= block.start
            assert previous.end < block.start or previous.count != block.count
        for i in range((block.start - T0) // HALF, (block.end - T0) // HALF):
            rebuilt[block.availability_zone][i] += block.count
        previous = block
    assert rebuilt == model


def counting():
    """A computation that answers how many times it has run."""
    calls = []

    def compute():
        calls.append(len(calls) + 1)
        return calls[-1]

    return compute


def test_remembered_values_last_until_their_type_changes():
    inventory, compute = CapacityInventory(), counting()

    assert inventory.remembered("search", P5, compute) == 1
    assert inventory.remembered("search", P5, compute) == 1
    inventory.add("ml.trn2.48xlarge", 1, AZ, at(0), at(1))  # another type: still remembered
    assert inventory.remembered("search", P5, compute) == 1
    inventory.add(P5, 1, AZ, at(0), at(1))
    assert inventory.remembered("search", P5, compute) == 2
    inventory.remove(P5, AZ, at(0), at(1), 1)
    assert inventory.remembered("search", P5, compute) == 3
    inventory.clear()
    assert inventory.remembered("search", P5, compute) == 4


def test_remembered_values_of_one_zone_last_until_that_zone_changes():
    inventory, compute = CapacityInventory(), counting()

    other = AZ[:-1] + ("b" if AZ[-1] != "b" else "c")
    assert inventory.remembered("runs", (P5, AZ), compute) == 1
    inventory.add(P5, 1, other, at(0), at(1))  # the same type in another AZ: still remembered
    assert inventory.remembered("runs", (P5, AZ), compute) == 1
    inventory.add(P5, 1, AZ, at(0), at(1))
    assert inventory.remembered("runs", (P5, AZ), compute) == 2
    inventory.remove(P5, AZ, at(0), at(1), 1)
    assert inventory.remembered("runs", (P5, AZ), compute) == 3
    inventory.clear()
    assert inventory.remembered("runs", (P5, AZ), compute) == 4


# -- the treap behind each (type, AZ), against a brute-force model after every change ---------
QUARTER = timedelta(minutes=15)
long_ops = st.lists(
    st.tuples(
        st.sampled_from(("add", "add", "remove")),
        st.integers(0, 30),
        st.integers(1, 12),
        st.integers(1, 4),
        st.integers(0, 127),
        st.integers(1, 40),
    ),
    min_size=1,
    max_size=60,
)


def pieces_of(free):
    """Maximal runs of one non-zero count on the half-hour grid, as ``(first, past_last, count)``."""
    found, i = [], 0
    while i < len(free):
        j = i
        while j < len(free) and free[j] == free[i]:
            j += 1
        if free[i]:
            found.append((i, j, free[i]))
        i = j
    return found


@settings(max_examples=100, deadline=None)
@given(long_ops)
def test_every_query_agrees_with_a_brute_force_model_after_every_change(operations):
    inventory, free = CapacityInventory(), [0] * 64
    for kind, start, length, count, q_start, q_length in operations:
        begin, end = T0 + start * HALF, T0 + (start + length) * HALF
        if kind == "add":
            inventory.add(P5, count, AZ, begin, end)
            free[start : start + length] = [level + count for level in free[start : start + length]]
        elif min(free[start : start + length]) >= count:
            inventory.remove(P5, AZ, begin, end, count)
            free[start : start + length] = [level - count for level in free[start : start + length]]
        else:
            with pytest.raises(ValueError, match=f"only {min(free[start : start + length])} "):
                inventory.remove(P5, AZ, begin, end, count)
        assert inventory.free_count(P5, AZ, begin, end) == min(free[start : start + length])
        # Quarter-hour query bounds: some start or end inside a half-hour of constant count.
        first, past = q_start // 2, min(-(-(q_start + q_length) // 2), len(free))
        expected = min(free[first:past]) if first < past else 0
        assert (
            inventory.free_count(P5, AZ, T0 + q_start * QUARTER, T0 + (q_start + q_length) * QUARTER)
            == expected
        )
        assert [(b.start, b.end, b.count) for b in inventory.blocks()] == [
            (T0 + i * HALF, T0 + j * HALF, level) for i, j, level in pieces_of(free)
        ]
        assert inventory.windows(P5, AZ, count, T0 + start * HALF, T0 + (start + length) * HALF) == [
            (T0 + max(i, start) * HALF, T0 + min(j, start + length) * HALF)
            for i, j, _ in pieces_of([level >= count for level in free])
            if i < start + length and j > start
        ]


def depth(node):
    return 0 if node is None else 1 + max(depth(node.left), depth(node.right))


def test_blocks_added_in_time_order_keep_the_breakpoints_shallow_and_go_away_when_sold():
    inventory = CapacityInventory()
    for hour in range(0, 4_000, 2):
        inventory.add(P5, 1 + hour % 3, AZ, at(hour), at(hour + 1))
    steps = inventory._steps[(P5, AZ)]
    assert len(inventory.blocks()) == 2_000
    assert depth(steps.root) <= 60  # a treap of 4,000 breakpoints: about 2 ln n deep, not n
    for hour in range(0, 4_000, 2):
        inventory.remove(P5, AZ, at(hour), at(hour + 1), 1 + hour % 3)
    assert steps.root is None and inventory.blocks() == []
    assert inventory.zones(P5) == [AZ]
