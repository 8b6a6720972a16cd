"""The timeline picture, looked at as a person would: which bars, where, labelled how, and the arrows.

Positions are checked against the API's own times (the describe answers the
picture was drawn from), rows against the axis's labels.
"""

import runpy
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from matplotlib import dates

from sagemaker_plans_local.inspection.snapshot import Snapshot
from sagemaker_plans_local.inspection.timeline import save, timeline
from sagemaker_plans_local.inspection.timeline_draw import MARK_SHARE
from sagemaker_plans_local.inspection.timeline_model import FINAL, phases
from tests.api.test_jobs_on_plans import P5, plan_job
from tests.conftest import create_request
from tests.plan_helpers import advance_to, buy, day, own_inventory

ROOT = Path(__file__).resolve().parents[2]
SEED = runpy.run_path(str(ROOT / "examples" / "warm_pools.py"))["training_job"]
J1, J2 = "my-training-job-1", "my-training-job-2"


def x(moment):
    """Where ``moment`` (an API time) sits on the time axis."""
    return pytest.approx(dates.date2num(moment), abs=1e-8)  # about a millisecond


def artists(figure, prefix):
    """The figure's artists whose gid starts with ``prefix``, in gid order."""
    found = figure.findobj(lambda artist: (artist.get_gid() or "").startswith(prefix))
    return sorted(found, key=lambda artist: artist.get_gid())


def one(figure, gid):
    (artist,) = [a for a in artists(figure, gid) if a.get_gid() == gid]
    return artist


def row_label(figure, y):
    """The axis label of the row at height ``y``."""
    ax = figure.axes[0]
    return ax.get_yticklabels()[round(y)].get_text()


def texts(figure):
    return [text.get_text() for text in figure.findobj(lambda a: hasattr(a, "get_text") and a.get_text())]


@pytest.fixture
def seed_flow(sm, backend):
    """The seed's warm-pool flow (examples/warm_pools.py), seen with job 2's pool still Available."""
    sm.create_training_job(**SEED(J1, epochs=1))
    backend.clock.advance(25 * 60)
    sm.create_training_job(**SEED(J2, epochs=2))
    backend.clock.advance(16 * 60)
    sm.update_training_job(TrainingJobName=J2, ResourceConfig={"KeepAlivePeriodInSeconds": 3600})
    backend.clock.advance(40 * 60)
    return Snapshot.collect(sm, backend.clock.now())


@pytest.fixture
def resumed_on_plan(sm, backend):
    """A plan of two one-day blocks (days 2 and 5, two AZs); a 3-hour job cut off in the first resumes."""
    own_inventory(backend, (P5, 2, "us-east-1a", 2, 3), (P5, 2, "us-east-1b", 5, 6))
    plan, _ = buy(sm, backend, "plan", count=2, hours=48)
    backend.settings.job_runtime_seconds = 3 * 3600
    advance_to(backend, day(3) - timedelta(hours=2))
    sm.create_training_job(**plan_job("long", plan, count=2))
    advance_to(backend, day(5) + timedelta(hours=5))
    return Snapshot.collect(sm, backend.clock.now())


def test_seed_flow_bars_sit_at_the_jobs_times_on_their_rows(seed_flow):
    figure = timeline(seed_flow)
    for name in (J1, J2):
        job = seed_flow.job(name)
        bars = artists(figure, f"job:{name}:")
        assert [bar.get_gid().split(":")[2] for bar in bars] == ["starting", "training"]
        starting, training = bars
        assert starting.get_x() == x(job["CreationTime"])
        assert starting.get_x() + starting.get_width() == x(job["TrainingStartTime"])
        assert training.get_x() == x(job["TrainingStartTime"])
        assert training.get_x() + training.get_width() == x(job["TrainingEndTime"])
        assert {row_label(figure, bar.get_y() + bar.get_height() / 2) for bar in bars} == {
            f"{name}\n1 × ml.g4dn.xlarge"
        }
        end = one(figure, f"end:{name}")
        assert list(end.get_xdata()) == [x(job["TrainingEndTime"])]
        assert end.get_label().startswith(f"{name}: Completed")
    # job 2 started warm: its starting bar is 10 s, job 1's (cold) 180 s
    widths = [artists(figure, f"job:{name}:starting")[0].get_width() * 86400 for name in (J1, J2)]
    assert widths == [pytest.approx(180, abs=0.01), pytest.approx(10, abs=0.01)]


def test_seed_flow_pools_keep_alive_windows_and_the_chain_arrow(seed_flow):
    figure = timeline(seed_flow)
    first, second = seed_flow.job(J1), seed_flow.job(J2)
    pool = one(figure, f"pool:{J1}")
    assert pool.get_x() == x(first["TrainingEndTime"])
    retained = first["WarmPoolStatus"]["ResourceRetainedBillableTimeInSeconds"]
    assert pool.get_x() + pool.get_width() == x(first["TrainingEndTime"] + timedelta(seconds=retained))
    assert pool.get_x() + pool.get_width() == x(second["CreationTime"])  # reused when job 2 was created
    assert pool.get_label() == f"{J1}: warm pool Reused, kept {retained} s"
    window = one(figure, f"keepalive:{J1}")  # cut short by the reuse: it ends where the pool does
    assert (window.get_x(), window.get_width() * 86400) == (
        x(first["TrainingEndTime"]),
        pytest.approx(retained),
    )
    assert window.get_label() == f"{J1}: keep-alive 1800 s, ended after {retained} s by {J2}'s reuse"
    assert artists(figure, f"expiry:{J1}") == []
    arrow = one(figure, f"chain:{J1}->{J2}")
    (start_x, start_y), (end_x, end_y) = arrow.xyann, arrow.xy
    assert (start_x, end_x) == (x(second["CreationTime"]), x(second["CreationTime"]))
    assert row_label(figure, start_y).startswith(J1) and row_label(figure, end_y).startswith(J2)
    assert arrow.get_label() == f"{J2} reused the pool of {J1}"
    kept = one(figure, f"pool:{J2}")  # Available: held until now, its raised keep-alive beyond
    assert kept.get_x() + kept.get_width() == x(seed_flow.now)
    assert one(figure, f"keepalive:{J2}").get_width() * 86400 == pytest.approx(3600)
    expiry = one(figure, f"expiry:{J2}")
    assert list(expiry.get_xdata()) == [x(second["TrainingEndTime"] + timedelta(seconds=3600))]
    assert expiry.get_label().startswith(f"{J2}: keep-alive expires")
    assert list(one(figure, "now").get_xdata()) == [x(seed_flow.now)] * 2
    assert {"pool Reused", "pool Available", "now", "training"} <= set(texts(figure))


def test_two_block_plan_shows_the_blocks_and_the_interrupted_job_resuming(resumed_on_plan):
    figure = timeline(resumed_on_plan)
    (plan,) = resumed_on_plan.plans
    summaries = plan["ReservedCapacitySummaries"]
    for index, summary in enumerate(summaries):
        block = one(figure, f"block:plan:{summary['AvailabilityZone']}:{index}")
        assert block.get_x() == x(summary["StartTime"])
        assert block.get_x() + block.get_width() == x(summary["EndTime"])
        assert row_label(figure, block.get_y() + 0.3) == f"plan plan\n{summary['AvailabilityZone']}"
        assert f"2 × ml.p5.48xlarge\n{summary['Status']}" in texts(figure)
    job = resumed_on_plan.job("long")
    bars = artists(figure, "job:long:")
    kinds = [bar.get_gid().split(":")[2] for bar in sorted(bars, key=lambda bar: bar.get_x())]
    assert kinds == ["starting", "training", "interrupted", "resumed", "training"]
    interrupted = one(figure, "job:long:interrupted:2")
    pending = [t for t in job["SecondaryStatusTransitions"] if t["Status"] == "Pending"][-1]
    assert interrupted.get_x() == x(pending["StartTime"])
    assert interrupted.get_x() + interrupted.get_width() == x(summaries[1]["StartTime"])
    assert one(figure, "job:long:resumed:3").get_x() == x(summaries[1]["StartTime"])
    blocks = [(x(s["StartTime"]).expected, x(s["EndTime"]).expected) for s in summaries]
    for bar in bars:  # everything but the wait ran inside reserved capacity
        if "interrupted" not in bar.get_gid():
            assert any(low <= bar.get_x() and bar.get_x() + bar.get_width() <= high for low, high in blocks)
    assert row_label(figure, interrupted.get_y() + 0.3) == "long\n2 × ml.p5.48xlarge · plan plan"
    assert list(one(figure, "end:long").get_xdata()) == [x(job["TrainingEndTime"])]


def test_phases_too_narrow_to_see_beside_a_plan_get_a_mark_and_keep_their_exact_bar(resumed_on_plan):
    figure = timeline(resumed_on_plan)
    low, high = figure.axes[0].get_xlim()
    bars = artists(figure, "job:long:")
    narrow = [bar for bar in bars if bar.get_width() < MARK_SHARE * (high - low)]
    assert sorted(bar.get_gid().split(":")[2] for bar in narrow) == [
        "resumed",
        "starting",
    ]  # minutes beside days
    for bar in bars:
        marks = [
            m for m in artists(figure, f"mark:{bar.get_gid()}") if m.get_gid() == f"mark:{bar.get_gid()}"
        ]
        if bar in narrow:
            (mark,) = marks
            assert list(mark.get_xdata()) == [pytest.approx(bar.get_x() + bar.get_width() / 2)]
            assert mark.get_label() == bar.get_label() and mark.get_markersize() > 0
        else:
            assert marks == []


def test_pools_that_expire_or_end_early_and_jobs_that_fail_stop_or_still_run(sm, backend):
    sm.create_training_job(**create_request("expires", keep_alive=600))
    backend.script_job("fails", outcome="AlgorithmError")  # a failed job's pool is kept too
    failing = create_request("fails", keep_alive=1800)
    failing["ResourceConfig"]["InstanceType"] = "ml.m5.xlarge"
    sm.create_training_job(**failing)
    sm.create_training_job(**create_request("stopped", keep_alive=None))
    backend.clock.advance(300)
    sm.stop_training_job(TrainingJobName="stopped")
    backend.clock.advance(1200)
    sm.update_training_job(TrainingJobName="fails", ResourceConfig={"KeepAlivePeriodInSeconds": 0})
    sm.create_training_job(**create_request("running", keep_alive=None))
    backend.clock.advance(600)
    snapshot = Snapshot.collect(sm, backend.clock.now())
    figure = timeline(snapshot)
    outcomes = {
        name: one(figure, f"end:{name}").get_label().split()[1] for name in ("expires", "fails", "stopped")
    }
    assert outcomes == {"expires": "Completed", "fails": "Failed", "stopped": "Stopped"}
    expires = snapshot.job("expires")
    assert one(figure, "expiry:expires").get_label().startswith("expires: keep-alive expired")
    assert list(one(figure, "expiry:expires").get_xdata()) == [
        x(expires["TrainingEndTime"] + timedelta(seconds=600))
    ]
    ended = one(figure, "pool:fails")  # kept 12 minutes, then ended by the keep-alive of 0
    assert ended.get_width() * 86400 == pytest.approx(720, abs=0.01)
    assert ended.get_label().endswith("ended before its keep-alive")
    assert artists(figure, "keepalive:fails") == [] and artists(figure, "expiry:fails") == []
    assert artists(figure, "pool:stopped") == artists(figure, "end:running") == []
    (*_, last) = artists(figure, "job:running:")
    assert last.get_x() + last.get_width() == x(snapshot.now)  # still training: up to now


def test_only_the_latest_jobs_get_rows_and_a_note_says_how_many_are_left_out(seed_flow):
    figure = timeline(seed_flow, max_jobs=1)
    assert [label.get_text() for label in figure.axes[0].get_yticklabels()] == [f"{J2}\n1 × ml.g4dn.xlarge"]
    assert artists(figure, f"job:{J1}") == artists(figure, "chain:") == []  # its pool's source is not drawn
    assert one(figure, "hidden").get_text() == "1 earlier job not drawn"
    assert artists(timeline(seed_flow), "hidden") == []


@pytest.mark.parametrize("suffix", [".png", ".svg", ".html"])
def test_save_writes_a_valid_file_of_each_format(seed_flow, tmp_path, suffix):
    path = save(timeline(seed_flow, title="warm pools"), tmp_path / f"timeline{suffix}")
    data = path.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
        return
    text = data.decode("utf-8")
    if suffix == ".svg":
        root = ElementTree.fromstring(text)
        ids = {element.get("id") for element in root.iter()}
        assert {f"pool:{J1}", f"chain:{J1}->{J2}", "now", f"job:{J2}:training:1"} <= ids
        words = " ".join(element.text or "" for element in root.iter())
    else:
        page = _Page()
        page.feed(text)
        assert page.tags[:3] == ["html", "head", "meta"] and "svg" in page.tags and "script" not in page.tags
        words = " ".join(page.words)
    assert all(word in words for word in (J1, J2, "warm pools", "pool Reused", "keep-alive window"))


def test_the_figure_shows_inline_in_jupyter_and_leaves_pyplot_alone(seed_flow):
    assert timeline(seed_flow)._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")  # what IPython's display calls
    probe = (
        "import sys; from datetime import datetime, timezone; "
        "from sagemaker_plans_local.inspection.snapshot import Snapshot; "
        "from sagemaker_plans_local.inspection.timeline import timeline; "
        "timeline(Snapshot(datetime.now(timezone.utc), (), ()))._repr_png_(); "
        "print('matplotlib.pyplot' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_save_refuses_an_unknown_format(seed_flow, tmp_path):
    with pytest.raises(ValueError, match=r"use one of \.png, \.svg, \.html"):
        save(timeline(seed_flow), tmp_path / "timeline.pdf")
    assert not (tmp_path / "timeline.pdf").exists()


def test_importing_needs_no_matplotlib_and_drawing_without_it_names_the_extra(seed_flow, monkeypatch):
    probe = "import sys, sagemaker_plans_local.inspection.timeline; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r"pip install 'sagemaker-plans-local\[timeline\]'"):
        timeline(seed_flow)


def test_the_example_draws_both_scenarios(tmp_path):
    out = tmp_path / "timeline.svg"
    runpy.run_path(str(ROOT / "examples" / "timeline_picture.py"))["main"](["timeline_picture.py", str(out)])
    ids = {element.get("id") for element in ElementTree.parse(out).iter()}
    assert {f"chain:{J1}->{J2}", "job:pretrain:interrupted:2", "job:pretrain:resumed:3"} <= ids
    assert {"block:pretraining:us-east-1a:0", "block:pretraining:us-east-1b:1", "end:warm-up"} <= ids


STATUSES = ("Pending", "Starting", "Downloading", "Training", "Uploading", "Stopping")


@given(
    st.lists(st.tuples(st.sampled_from(STATUSES), st.integers(0, 10**6)), min_size=1, max_size=12),
    st.sampled_from((None, *FINAL)),
)
def test_phases_tile_the_job_and_name_interruptions_and_resumptions(steps, final):
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    transitions, moment = [], start
    for status, seconds in steps:
        transitions.append(
            {"Status": status, "StartTime": moment, "EndTime": moment + timedelta(seconds=seconds)}
        )
        moment += timedelta(seconds=seconds)
    if final:
        transitions.append({"Status": final, "StartTime": moment, "EndTime": moment})
    else:
        del transitions[-1]["EndTime"]  # still in its last status: runs to now
    now = moment + timedelta(hours=1)
    spans = phases(transitions, now)
    assert spans[0].start == start and spans[-1].end == (moment if final else now)
    assert all(a.end == b.start and a.kind != b.kind for a, b in zip(spans, spans[1:]))
    kinds = [span.kind for span in spans]
    for index, kind in enumerate(kinds):
        before = kinds[:index]
        if kind == "interrupted":
            assert "training" in before
        if kind == "resumed":
            assert before[-1] == "interrupted"
        if kind == "pending":
            assert "training" not in before


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.words = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.words.append(data)


def test_a_zoom_shows_the_seconds_long_phases_beside_a_plan_of_days(resumed_on_plan):
    job = resumed_on_plan.job("long")
    start = job["TrainingStartTime"] - timedelta(minutes=5)
    end = job["TrainingStartTime"] + timedelta(minutes=30)
    figure = timeline(resumed_on_plan, start=start, end=end)
    low, high = figure.axes[0].get_xlim()
    assert (low, high) == (x(start), x(end))
    starting = artists(figure, "job:long:starting")[0]  # minutes wide: a real bar now, no mark needed
    assert starting.get_width() > MARK_SHARE * (high - low)
    assert artists(figure, f"mark:{starting.get_gid()}") == []
    assert artists(figure, "now") == []  # now is days later: out of the window
    only_end = timeline(resumed_on_plan, end=end).axes[0].get_xlim()
    assert only_end[1] == x(end) and only_end[0] < dates.date2num(start)
    with pytest.raises(ValueError, match="must come before"):
        timeline(resumed_on_plan, start=end, end=start)
