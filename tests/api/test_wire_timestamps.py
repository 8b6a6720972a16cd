import time

import pytest
from botocore.utils import parse_timestamp
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_plans_local.transport.timestamps import parse_wire_timestamp

EPOCHS = st.one_of(
    st.integers(min_value=0, max_value=4_102_444_800),
    st.floats(min_value=0, max_value=4_102_444_800, allow_nan=False).map(lambda v: round(v, 3)),
)


@given(EPOCHS)
def test_equals_botocores_parse_timestamp(value):
    ours, theirs = parse_wire_timestamp(value), parse_timestamp(value)
    assert ours == theirs
    assert ours.utcoffset() == theirs.utcoffset()
    assert type(ours.tzinfo) is type(theirs.tzinfo)


@pytest.mark.skipif(not hasattr(time, "tzset"), reason="needs time.tzset")
def test_equal_across_a_daylight_saving_fold(monkeypatch):
    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        # 2026-11-01 01:30 happens twice in New York; both instants must agree.
        for value in (1793511000, 1793514600, 1773558000, 1773554400):
            ours, theirs = parse_wire_timestamp(value), parse_timestamp(value)
            assert ours.timestamp() == theirs.timestamp() == value
            assert ours.utcoffset() == theirs.utcoffset()
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()


def test_non_numeric_values_fall_back_to_botocore():
    assert parse_wire_timestamp("2026-01-01T00:00:00Z") == parse_timestamp("2026-01-01T00:00:00Z")
