"""The ``serve`` and ``clock`` commands, and the durations ``clock advance`` takes."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sagemaker_plans_local.__main__ import main
from sagemaker_plans_local.cli.durations import UNITS, parse_duration
from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.server.runner import LocalServer


def test_serve_prints_its_url_answers_and_stops_on_sigterm(tmp_path):
    command = [sys.executable, "-m", "sagemaker_plans_local", "serve", "--port", "0", "--root", str(tmp_path)]
    command += ["--start-time", "2026-01-01T00:00:00Z"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as server:
        try:
            line = server.stdout.readline()
            assert line.startswith("sagemaker-plans-local serving on http://127.0.0.1:")
            url = line.split()[-1]
            with urllib.request.urlopen(url + "/_sagemaker_plans_local/health", timeout=60) as response:
                assert json.load(response)["status"] == "running"
            with urllib.request.urlopen(url + "/_sagemaker_plans_local/clock", timeout=60) as response:
                assert json.load(response) == {"now": FIXTURE_START.isoformat(), "manual": True}
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=60) == 0
            assert server.stdout.read() == ""
        finally:
            if server.poll() is None:
                server.kill()


def test_clock_advance_and_show(sagemaker_server, capsys):
    assert main(["clock", "advance", "900", "--endpoint-url", sagemaker_server.url]) == 0
    assert main(["clock", "advance", "2h", "--endpoint-url", sagemaker_server.url]) == 0
    assert main(["clock", "show", "--endpoint-url", sagemaker_server.url]) == 0
    later, latest = FIXTURE_START + timedelta(seconds=900), FIXTURE_START + timedelta(hours=2, seconds=900)
    assert capsys.readouterr().out.split() == [later.isoformat(), latest.isoformat(), latest.isoformat()]
    assert sagemaker_server.backend().clock.now() == latest


def test_clock_uses_the_endpoint_environment_variable(sagemaker_server, monkeypatch, capsys):
    monkeypatch.setenv("AWS_ENDPOINT_URL", sagemaker_server.url)
    assert main(["clock", "advance", "1d"]) == 0
    assert capsys.readouterr().out.strip() == (FIXTURE_START + timedelta(days=1)).isoformat()


def test_clock_reports_a_refusal(tmp_path, capsys):
    from sagemaker_plans_local.server.runner import LocalServer

    with LocalServer(root=tmp_path / "server") as server:  # a wall clock
        assert main(["clock", "advance", "60", "--endpoint-url", server.url]) == 1
    assert "wall clock" in capsys.readouterr().err


@pytest.mark.parametrize("arguments", [["advance", "soon"], ["advance"], ["advance", "-5"]])
def test_clock_rejects_bad_arguments(sagemaker_server, arguments):
    with pytest.raises(SystemExit) as exited:
        main(["clock", *arguments, "--endpoint-url", sagemaker_server.url])
    assert exited.value.code == 2


@given(number=st.integers(min_value=0, max_value=10**9), unit=st.sampled_from(sorted(UNITS)))
def test_a_duration_is_its_number_times_its_unit(number, unit):
    assert parse_duration(f"{number}{unit}") == number * UNITS[unit]


def _outside_the_grammar(text: str) -> bool:
    return (
        any(not (c.isascii() and (c.isdigit() or c in ".smhdSMHD")) for c in text.strip()) or not text.strip()
    )


@given(st.text(max_size=12).filter(_outside_the_grammar))
def test_anything_else_is_no_duration(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", ["1.5h", " 90S ", "0"])
def test_decimals_case_and_spaces(text):
    assert parse_duration(text) == {"1.5h": 5400, " 90S ": 90, "0": 0}[text]


@pytest.mark.parametrize("text", ["1..5", ".5", "5.", "h", "5hh", "5 h"])
def test_malformed_durations(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_serve_refuses_a_root_of_another_clock_a_bad_start_time_and_a_taken_port(
    sagemaker_server, tmp_path, capsys
):
    with LocalServer(root=tmp_path / "served", start_time=FIXTURE_START):
        pass
    port = sagemaker_server.url.rsplit(":", 1)[1]
    assert main(["serve", "--root", str(tmp_path / "served"), "--start-time", "2027-01-01T00:00:00Z"]) == 1
    assert main(["serve", "--start-time", "new year"]) == 1
    assert main(["serve", "--port", port]) == 1
    ours = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("sagemaker-plans-local: ")
    ]
    assert len(ours) == 3  # werkzeug adds its own lines on the port
    assert "was served with --start-time 2026-01-01" in ours[0]
    assert "isoformat" in ours[1] and "in use" in ours[2]


@pytest.mark.parametrize("pair", ["no-colon", ":secret", "key:"])
def test_serve_refuses_a_malformed_access_key(pair, capsys):
    assert main(["serve", "--access-key", pair]) == 1
    assert f"--access-key wants KEY:SECRET, not {pair!r}" in capsys.readouterr().err
