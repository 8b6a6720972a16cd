"""Account ids are exactly 12 ASCII digits wherever one is read (docs/server.md, "How a request is
routed"): not another script's digits (``\\d`` takes them), not with a trailing newline (``$`` does)."""

from __future__ import annotations

import json
import shutil
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.core.arns import is_account_id
from sagemaker_plans_local.server.guard import host_name
from sagemaker_plans_local.server.routing import DEFAULT_ACCOUNT, account_for
from sagemaker_plans_local.server.runner import LocalServer
from tests.server.clients import CONTROL
from tests.server.clients import client as boto_client
from tests.server.test_guard import START, send

SEVERAL = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    max_examples=40,
)
ASCII_ID = st.text(st.sampled_from("0123456789"), min_size=12, max_size=12)
#: Twelve decimal digits of any script, at least one not ASCII (U+0661, U+0967, U+FF11, ...).
OTHER_DIGITS = st.text(st.characters(categories=["Nd"]), min_size=12, max_size=12).filter(
    lambda text: not text.isascii()
)
#: Not account ids: other scripts' digits, or an ASCII id with something around it.
NOT_IDS = st.one_of(
    OTHER_DIGITS,
    st.tuples(ASCII_ID, st.sampled_from(["\n", "\r\n", " ", "\t", "\x00", "0"])).map("".join),
    st.tuples(st.sampled_from(["\n", " ", "+"]), ASCII_ID).map("".join),
)


@pytest.fixture
def server(tmp_path):
    with LocalServer(start_time=START, root=tmp_path / "root") as running:
        yield running


def accounts_on_disk(server) -> list[str]:
    return sorted(entry.name for entry in (server.accounts.root / "accounts").iterdir())


@given(ASCII_ID)
def test_twelve_ascii_digits_are_an_account_id(text):
    assert is_account_id(text) and account_for(text) == text


@given(NOT_IDS)
def test_anything_else_is_not_and_selects_the_default_account(text):
    assert not is_account_id(text)
    assert account_for(text) == DEFAULT_ACCOUNT


@SEVERAL
@given(account=NOT_IDS)
def test_a_control_account_that_is_no_ascii_id_is_a_400_and_makes_no_account(server, account):
    before = accounts_on_disk(server)
    path = CONTROL + "settings?account=" + quote(account, safe="")
    status, _, body = send(
        server, "POST", path, b'{"instance_quota": 5}', {"Content-Type": "application/json"}
    )
    assert (status, json.loads(body)["error"]) == (400, "BadRequest")
    assert accounts_on_disk(server) == before


@SEVERAL
@given(key=NOT_IDS)
def test_a_presigned_key_id_that_is_no_ascii_id_reaches_the_default_account(server, key):
    """STS's GetCallerIdentity through query authentication: the key id is percent-encoded UTF-8."""
    before = accounts_on_disk(server)
    query = (
        "Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential={quote(key + '/20260101/us-east-1/sts/aws4_request', safe='')}"
        f"&X-Amz-Date=20260101T000000Z&X-Amz-SignedHeaders=host&X-Amz-Signature={'0' * 64}"
    )
    status, _, body = send(server, "GET", "/?" + query)
    if status != 200:  # a key id with white space is no credential at all
        assert status == 403 and any(c.isspace() for c in key)
    else:
        assert f"<Account>{DEFAULT_ACCOUNT}</Account>" in body.decode()
    assert accounts_on_disk(server) == before


def test_an_s3_v2_key_id_with_a_newline_makes_no_account_directory(server):
    status, _, body = send(server, "GET", "/?AWSAccessKeyId=123456789012%0A&Signature=x&Expires=1")
    assert status == 200, body
    assert accounts_on_disk(server) == [DEFAULT_ACCOUNT]


@pytest.mark.parametrize("account", ["123456789012\n", "\u0661" * 12, "12345678901", "abc"])
def test_a_backend_is_made_for_account_ids_only(server, account):
    with pytest.raises(ValueError, match="12"):
        LocalBackend(account_id=account)
    with pytest.raises(ValueError, match="12"):
        server.backend(account)
    assert accounts_on_disk(server) == [DEFAULT_ACCOUNT]


def test_a_root_holding_a_directory_named_by_no_account_id_still_serves(tmp_path):
    """Today's code may have made one (``accounts/'123456789012\\n'``): it is left alone."""
    root = tmp_path / "root"
    LocalServer(start_time=START, root=root).stop()
    with LocalBackend(root=tmp_path / "stray", start_time=START) as stray:
        stray.client().list_training_jobs()
    shutil.move(tmp_path / "stray", root / "accounts" / "123456789012\n")
    (root / "clock.json").unlink()  # a root from before clock.json: every account is read at start
    with LocalServer(start_time=START, root=root) as server:
        assert server.accounts.advance(60) == START.replace(minute=1)
        assert send(server, "POST", CONTROL + "reset", b"{}", {"Content-Type": "application/json"})[0] == 200


@pytest.mark.parametrize("host", ["localhost:\u0668\u0660", "127.0.0.1:8\u06f0", "[::1]:\uff18\uff10"])
def test_a_host_port_is_ascii_digits(host):
    assert host_name(host) is None


def test_the_scope_and_date_patterns_take_ascii_digits_only():
    from sagemaker_plans_local.server import credentials, signatures
    from sagemaker_plans_local.server.errors import RouteError

    arabic_date = "\u0662\u0660\u0662\u0666\u0660\u0661\u0660\u0661"
    with pytest.raises(RouteError):
        credentials.parse({}, f"X-Amz-Credential=k/{arabic_date}/us-east-1/sts/aws4_request", "query")
    with pytest.raises(RouteError):
        credentials.parse({}, "X-Amz-Credential=k/20260101/us-east-1/sts/aws4_request%0A", "query")
    credential = credentials.parse({}, "X-Amz-Credential=k/20260101/us-east-1/sts/aws4_request", "query")
    bad_date = credential._replace(date="20260101T000000Z\n", signature="0" * 64, signed_headers=("host",))
    request = signatures.SignedRequest("GET", "localhost", "/", "", {}, b"")
    with pytest.raises(RouteError) as refused:
        signatures.verify(request, bad_date, {"k": "s"}, "sts", "query")
    assert refused.value.status == 400


def test_a_decoded_length_in_other_digits_is_a_400_not_a_500(server):
    """``'\\xb2'`` (latin-1 ``²``) passes ``str.isdigit`` and fails ``int``: once a 500."""
    boto_client(server, "s3").create_bucket(Bucket="digits")
    headers = {
        "Authorization": f"AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/s3/aws4_request, "
        f"SignedHeaders=host, Signature={'0' * 64}",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": b"\xb2",
    }
    status, _, body = send(server, "PUT", "/digits/key", b"0\r\n\r\n", headers)
    assert status == 400, body
    assert boto_client(server, "s3").list_objects_v2(Bucket="digits")["KeyCount"] == 0
