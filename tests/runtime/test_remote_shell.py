"""The container views' ssh: its command line, /etc/environment, and a host whose sshd is down."""

from __future__ import annotations

import subprocess
import sys

from sagemaker_plans_local.runtime import remote_shell, sshd
from sagemaker_plans_local.runtime.remote_shell import environment_file, split


def test_ssh_options_and_their_values_are_skipped_before_the_host():
    assert split(["-x", "algo-2", "orted", "-mca", "x"]) == ("algo-2", ["orted", "-mca", "x"])
    assert split(["-o", "StrictHostKeyChecking=no", "-p22", "root@algo-3", "touch", "/tmp/f"]) == (
        "algo-3",
        ["touch", "/tmp/f"],
    )
    assert split(["-qT", "--", "algo-1"]) == ("algo-1", [])


def test_etc_environment_is_read_as_pam_env_reads_it(tmp_path):
    path = tmp_path / "environment"
    path.write_text('# a comment\nA=1\nexport B="two words"\nnot a line\nSM_HPS={"a": 1}\n9X=no\n')
    assert environment_file(path) == {"A": "1", "B": "two words", "SM_HPS": '{"a": 1}'}
    assert environment_file(tmp_path / "missing") == {}


def test_a_host_whose_sshd_does_not_listen_is_refused_with_255(tmp_path):
    (tmp_path / "algo-2" / "system").mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-I", "-S", remote_shell.__file__, str(tmp_path), "algo-2", "true"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 255
    assert done.stderr == "ssh: connect to host algo-2 port 22: Connection refused\n"
    assert not sshd.up("algo-2", str(tmp_path / "algo-2" / "system"))
