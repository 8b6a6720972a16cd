"""The app's own request view reads the environ as werkzeug's ``Request`` did; the server's fast paths
(the remembered Host verdicts, one write per small answer) change no answer."""

from __future__ import annotations

import io
from datetime import datetime, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from werkzeug.test import EnvironBuilder
from werkzeug.wrappers import Request

from sagemaker_plans_local.server import guard as guard_module
from sagemaker_plans_local.server import http_channel
from sagemaker_plans_local.server.guard import Guard
from sagemaker_plans_local.server.runner import LocalServer
from sagemaker_plans_local.server.wsgi_request import WsgiRequest
from tests.server.clients import client

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
HEADER_NAMES = ["X-Amz-Target", "x-amz-date", "Content-Type", "Transfer-Encoding", "Host", "X-Amz-Meta-Ünï"]
_text = st.text(st.characters(codec="latin-1", exclude_characters="\r\n\x00"), max_size=12)


@st.composite
def environs(draw) -> dict:
    """A WSGI environ as werkzeug builds one: any path, query, headers, body, framing."""
    path = draw(st.sampled_from(["/", "//a//b", "/caf%C3%A9/k%2Fey", "/%FF", "/bucket/ü key", ""]))
    headers = draw(st.dictionaries(st.sampled_from(HEADER_NAMES[:-1]), _text, max_size=4))
    builder = EnvironBuilder(
        path=path or "/",
        method=draw(st.sampled_from(["GET", "post", "PUT", "HEAD"])),
        query_string=draw(st.sampled_from(["", "a=1&a=2&b", "x=%FF%20&&y=", "list-type=2&prefix=é"])),
        headers={k: v for k, v in headers.items() if k not in ("Content-Type", "Transfer-Encoding")},
        data=draw(st.binary(max_size=32)),
        content_type=headers.get("Content-Type"),
        base_url=draw(st.sampled_from(["http://localhost", "http://127.0.0.1:80", "https://h:443/"])),
    )
    environ = builder.get_environ()
    if "Transfer-Encoding" in headers:
        environ["HTTP_TRANSFER_ENCODING"] = headers["Transfer-Encoding"]
    if draw(st.booleans()):
        environ["wsgi.input_terminated"] = True
    if not path:
        environ["PATH_INFO"] = ""
    if draw(st.booleans()):
        del environ["HTTP_HOST"]
    return environ


@given(environs())
def test_the_request_view_reads_what_werkzeugs_request_reads(environ):
    body = environ["wsgi.input"].read()
    ours = WsgiRequest(dict(environ, **{"wsgi.input": io.BytesIO(body)}))
    theirs = Request(dict(environ, **{"wsgi.input": io.BytesIO(body)}))
    assert (ours.method, ours.path, ours.query_string) == (theirs.method, theirs.path, theirs.query_string)
    assert ours.full_path == theirs.full_path
    assert list(ours.args.items(multi=True)) == list(theirs.args.items(multi=True))
    assert (ours.host, ours.scheme) == (theirs.host, theirs.scheme)
    assert (ours.content_length, ours.content_type) == (theirs.content_length, theirs.content_type)
    assert list(ours.headers.items()) == list(theirs.headers.items())
    assert len(ours.headers) == len(theirs.headers)
    for name in HEADER_NAMES + ["content-length", "CONTENT_TYPE", "x_amz_target"]:
        assert ours.headers.get(name) == theirs.headers.get(name)
        assert (name in ours.headers) == (name in theirs.headers)
    assert ours.stream.read() == theirs.stream.read()


def test_a_missing_header_is_a_key_error_and_the_default_otherwise():
    request = WsgiRequest(EnvironBuilder(path="/").get_environ())
    with pytest.raises(KeyError):
        request.headers["X-Amz-Target"]
    assert request.headers.get("X-Amz-Target", "none") == "none"


def test_host_verdicts_stay_the_same_when_remembered_and_after_the_memory_is_cleared(monkeypatch):
    monkeypatch.setattr(guard_module, "HOSTS_KEPT", 4)
    guard = Guard("127.0.0.1", ["api.example"])
    hosts = [
        "localhost:1",
        "evil.example",
        "api.example",
        "[::1]:80",
        "a.b:x",
        "127.0.0.1:9",
        "rebind.example",
    ]
    first = [guard.refusal({"Host": host}) for host in hosts]
    for _ in range(3):  # remembered, then forgotten as more hosts pass the memory's size
        assert [guard.refusal({"Host": host}) for host in hosts] == first
    assert [verdict is None for verdict in first] == [True, False, True, True, False, True, False]
    assert len(guard._hosts) <= 4


def test_a_small_answer_is_one_write_with_its_header(monkeypatch):
    writes: list[bytes] = []
    original = http_channel.Channel.write_soon

    def recording(channel, data):
        writes.append(bytes(data))
        return original(channel, data)

    monkeypatch.setattr(http_channel.Channel, "write_soon", recording)
    with LocalServer(start_time=START) as server:
        sagemaker = client(server)
        body = bytearray()
        capture = lambda http_response, **_: body.extend(http_response.content)  # noqa: E731
        sagemaker.meta.events.register("after-call.sagemaker.ListTrainingJobs", capture)
        writes.clear()
        assert sagemaker.list_training_jobs()["TrainingJobSummaries"] == []
    assert len(writes) == 1 and body
    assert writes[0].startswith(b"HTTP/1.1 200 ") and writes[0].endswith(b"\r\n\r\n" + body)
