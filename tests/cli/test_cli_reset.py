"""``sagemaker-plans-local reset``: the default backend's durable root emptied, or a given root, or a server."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.__main__ import main
from sagemaker_plans_local.backend import LocalBackend
from sagemaker_plans_local.pytest_plugin import FIXTURE_START
from sagemaker_plans_local.sdk.default_backend import ENDPOINT_VARIABLE, HOME_VARIABLE, default_backend_root


class Terminal(io.StringIO):
    """A stdin that is an interactive terminal, its answers given."""

    def isatty(self) -> bool:
        return True


def used_root(root: Path) -> Path:
    """``root`` after a backend kept a bucket and an object there."""
    with LocalBackend(start_time=FIXTURE_START, root=root) as backend:
        s3 = backend.client("s3")
        s3.create_bucket(Bucket="kept")
        s3.put_object(Bucket="kept", Key="k", Body=b"v")
    assert any(root.iterdir())
    return root


def test_reset_empties_the_default_backends_root_and_leaves_it_usable(capsys):
    root = used_root(default_backend_root())
    entries = sorted(root.iterdir())
    assert main(["reset"]) == 0  # stdin is no terminal here: no question asked
    assert root.is_dir() and list(root.iterdir()) == []
    out = capsys.readouterr().out.splitlines()
    assert out == [f"removed {entry}" for entry in entries] + [f"{root} is empty"]
    with LocalBackend(start_time=FIXTURE_START, root=root) as backend:
        assert backend.client("s3").list_buckets()["Buckets"] == []
        backend.client("s3").create_bucket(Bucket="kept")


def test_reset_root_empties_that_root_only(tmp_path):
    given_root, default = used_root(tmp_path / "given"), used_root(default_backend_root())
    kept = sorted(default.iterdir())
    assert main(["reset", "--root", str(given_root)]) == 0
    assert list(given_root.iterdir()) == [] and sorted(default.iterdir()) == kept


NAMES = st.text(st.characters(whitelist_categories=("L", "N"), whitelist_characters="-_."), min_size=1)
TREES = st.recursive(st.binary(max_size=8), lambda children: st.dictionaries(NAMES, children, max_size=4))


def write_tree(directory: Path, tree: dict) -> None:
    for name, child in tree.items():
        if name in (".", ".."):
            continue
        if isinstance(child, dict):
            (directory / name).mkdir()
            write_tree(directory / name, child)
        else:
            (directory / name).write_bytes(child)


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(tree=st.dictionaries(NAMES, TREES, max_size=5))
def test_reset_removes_whatever_is_under_the_root(tmp_path_factory, tree):
    root = tmp_path_factory.mktemp("root")
    write_tree(root, tree)
    outside = tmp_path_factory.mktemp("outside")
    (outside / "theirs").write_text("kept")
    (root / "link~out").symlink_to(outside, target_is_directory=True)  # "~": no tree name
    assert main(["reset", "--root", str(root), "--yes"]) == 0
    assert list(root.iterdir()) == []
    assert (outside / "theirs").read_text() == "kept"  # a link is removed, not followed


def test_a_missing_root_is_nothing_to_reset(tmp_path, capsys):
    assert main(["reset", "--root", str(tmp_path / "never")]) == 0
    assert "nothing to reset" in capsys.readouterr().out
    assert not (tmp_path / "never").exists()


def test_the_home_directory_and_its_parents_are_refused(tmp_path, monkeypatch, capsys):
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    (home / "notes.txt").write_text("mine")
    monkeypatch.setenv("HOME", str(home))
    for directory in (home, home.parent, tmp_path):
        assert main(["reset", "--root", str(directory), "--yes"]) == 1
        assert "not a backend root" in capsys.readouterr().err
    assert (home / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("answer, code", [("y\n", 0), ("yes\n", 0), ("n\n", 1), ("\n", 1)])
def test_a_terminal_is_asked_first(tmp_path, monkeypatch, capsys, answer, code):
    root = used_root(tmp_path / "root")
    monkeypatch.setattr(sys, "stdin", Terminal(answer))
    assert main(["reset", "--root", str(root)]) == code
    assert (list(root.iterdir()) == []) == (code == 0)
    assert f"Remove everything under {root}? [y/N]" in capsys.readouterr().out


def test_yes_asks_no_question(tmp_path, monkeypatch, capsys):
    root = used_root(tmp_path / "root")
    monkeypatch.setattr(sys, "stdin", Terminal(""))  # reading it would fail
    assert main(["reset", "--root", str(root), "--yes"]) == 0
    assert list(root.iterdir()) == [] and "[y/N]" not in capsys.readouterr().out


def test_the_console_script_resets_the_directory_of_the_variable(tmp_path):
    home = tmp_path / "home"
    root = used_root(home / "default")
    result = subprocess.run(
        [sys.executable, "-m", "sagemaker_plans_local", "reset"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, HOME_VARIABLE: str(home)},
    )
    assert result.returncode == 0, result.stderr
    assert list(root.iterdir()) == [] and result.stdout.splitlines()[-1] == f"{root} is empty"


def test_a_note_says_when_sessions_use_a_server_instead(monkeypatch, capsys):
    monkeypatch.setenv(ENDPOINT_VARIABLE, "http://127.0.0.1:9")
    assert main(["reset"]) == 0
    assert f"{ENDPOINT_VARIABLE} is set" in capsys.readouterr().err


def test_reset_endpoint_url_resets_a_running_server(sagemaker_server, capsys):
    s3 = sagemaker_server.backend().client("s3")
    s3.create_bucket(Bucket="on-the-server")
    sagemaker_server.backend().clock.advance(3600)
    assert main(["reset", "--endpoint-url", sagemaker_server.url + "/"]) == 0
    assert sagemaker_server.backend().client("s3").list_buckets()["Buckets"] == []
    assert capsys.readouterr().out.strip() == (
        f"reset the server at {sagemaker_server.url} (its clock now {FIXTURE_START.isoformat()})"
    )


def test_an_unreachable_server_is_reported(capsys):
    assert main(["reset", "--endpoint-url", "http://127.0.0.1:9", "--yes"]) == 1
    assert "cannot reach http://127.0.0.1:9/_sagemaker_plans_local/reset" in capsys.readouterr().err


def test_root_and_endpoint_url_together_are_refused(tmp_path):
    with pytest.raises(SystemExit) as exited:
        main(["reset", "--root", str(tmp_path), "--endpoint-url", "http://127.0.0.1:9"])
    assert exited.value.code == 2


def _read_one_line_then_close(command: list[str]) -> subprocess.CompletedProcess:
    """Run ``command`` reading one line of its output, then closing the pipe (as ``| head -1`` does)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    process.stderr.close()
    return subprocess.CompletedProcess(command, process.wait(timeout=300), first, stderr)


def test_reset_into_a_pipe_closed_early_still_empties_the_root_quietly(tmp_path):
    root = tmp_path / "root"
    for index in range(300):  # more lines than a pipe holds
        (root / f"entry-{index}").mkdir(parents=True)
    command = [sys.executable, "-m", "sagemaker_plans_local", "reset", "--yes", "--root", str(root)]
    done = _read_one_line_then_close(command)
    assert done.stdout.startswith(b"removed ")
    assert (done.returncode, done.stderr) == (0, b"")
    assert list(root.iterdir()) == []


def test_any_command_into_a_pipe_closed_early_ends_with_141_and_no_message(tmp_path):
    code = (
        "import sys\nfrom sagemaker_plans_local import __main__\nfrom sagemaker_plans_local.cli import main as cli\n"
        "cli.main = lambda argv=None: [print('line', index) for index in range(200000)] and 0\n"
        "sys.exit(__main__.main())\n"
    )
    done = _read_one_line_then_close([sys.executable, "-c", code])
    assert (done.stdout, done.returncode, done.stderr) == (b"line 0\n", 141, b"")
