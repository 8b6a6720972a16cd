"""The training contract's pieces, without processes: hyperparameters, paths, config, environment, archives."""

from __future__ import annotations

import io
import json
import tarfile
from datetime import datetime, timezone
from pathlib import Path

import pytest

from sagemaker_plans_local.runtime.contract import Host, InstanceContract, JobFacts, hosts_of, log_stream
from sagemaker_plans_local.runtime.inputs import SourceError, UnsafeArchive, safe_extract
from sagemaker_plans_local.runtime.outputs import artifact_uri, output_prefix, pack
from sagemaker_plans_local.runtime.paths import InstanceTree, PathMapper
from sagemaker_plans_local.runtime.processes import Tail, exit_code
from sagemaker_plans_local.runtime.toolkit import (
    decode,
    env_value,
    script_mode,
    split_hyperparameters,
    to_cmd_args,
)

ARN = "arn:aws:sagemaker:eu-west-1:123456789012:training-job/job-1"


# -- hyperparameters -------------------------------------------------------------------------
def test_values_decode_as_json_or_stay_raw():
    assert decode('"train.py"') == "train.py"
    assert decode("0.1") == 0.1 and decode("true") is True and decode('{"a": 1}') == {"a": 1}
    assert decode("train.py") == "train.py" and decode("s3://b/k") == "s3://b/k"


def test_script_mode_needs_program_and_submit_directory():
    hps = {
        "sagemaker_program": '"train.py"',
        "sagemaker_submit_directory": '"s3://b/p/source/sourcedir.tar.gz"',
    }
    assert script_mode({"HyperParameters": hps}) == ("train.py", "s3://b/p/source/sourcedir.tar.gz")
    assert script_mode({"HyperParameters": {"sagemaker_program": "train.py"}}) is None
    assert script_mode({}) is None


def test_toolkit_split_and_command_line():
    user, sagemaker = split_hyperparameters(
        {
            "epochs": 3,
            "sagemaker_program": "t.py",
            "sagemaker_mpi_enabled": True,
            "_tuning_objective_metric": "loss",
            "x": "a",
        }
    )
    assert user == {"epochs": 3, "x": "a"}
    assert set(sagemaker) == {"sagemaker_program", "sagemaker_mpi_enabled", "_tuning_objective_metric"}
    assert to_cmd_args(
        {"lr": 0.1, "x": "a", "b-c": True, "opts": {"z": 1, "a": "b"}, "none": None, "list": [1, 2]}
    ) == ["--b-c", "True", "--list", "[1, 2]", "--lr", "0.1", "--none", "", "--opts", "a=b,z=1", "-x", "a"]


def test_env_values_follow_the_toolkit():
    assert env_value("text") == "text" and env_value(None) == ""
    assert env_value(3) == "3" and env_value(True) == "true"
    assert env_value({"b": 1, "a": [1, "x"]}) == '{"a":[1,"x"],"b":1}'


# -- /opt/ml mapping ----------------------------------------------------------------------------
def test_path_mapper():
    mapper = PathMapper(Path("/tmp/i/opt/ml"), Path("/tmp/cache/wp-1"))
    assert mapper.text("/opt/ml") == "/tmp/i/opt/ml"
    assert mapper.text("/opt/ml/model/x") == "/tmp/i/opt/ml/model/x"
    assert mapper.text("/opt/ml/sagemaker/warmpoolcache/pip") == "/tmp/cache/wp-1/pip"
    assert mapper.text("/opt/ml/sagemaker/warmpoolcache") == "/tmp/cache/wp-1"
    assert mapper.text("/opt/ml/sagemaker/warmpoolcachex") == "/tmp/i/opt/ml/sagemaker/warmpoolcachex"
    assert mapper.text("/opt/ml/code:/usr/lib") == "/tmp/i/opt/ml/code:/usr/lib"
    assert mapper.text("--dir=/opt/ml/checkpoints") == "--dir=/tmp/i/opt/ml/checkpoints"
    assert mapper.text('"/opt/ml/checkpoints"') == '"/tmp/i/opt/ml/checkpoints"'
    for untouched in ("s3://bucket/opt/ml/x", "/data/opt/ml", "/opt/mlx", "/opt/ml.d", "opt/ml"):
        assert mapper.text(untouched) == untouched
    assert mapper.value({"a": ["/opt/ml/x", 1]}) == {"a": ["/tmp/i/opt/ml/x", 1]}


# -- hosts, config files, environment --------------------------------------------------------------
def test_hosts_of_homogeneous_and_heterogeneous_clusters():
    assert hosts_of({"InstanceType": "ml.m5.xlarge", "InstanceCount": 2}) == [
        Host("algo-1", "ml.m5.xlarge", "homogeneousCluster"),
        Host("algo-2", "ml.m5.xlarge", "homogeneousCluster"),
    ]
    groups = {
        "InstanceGroups": [
            {"InstanceGroupName": "cpu", "InstanceType": "ml.c5.xlarge", "InstanceCount": 1},
            {"InstanceGroupName": "gpu", "InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2},
        ]
    }
    assert [(h.name, h.group) for h in hosts_of(groups)] == [
        ("algo-1", "cpu"),
        ("algo-2", "gpu"),
        ("algo-3", "gpu"),
    ]


def contract(tmp_path, spec_extra=None, host=1, count=2, cache_dir=None, expires=None):
    spec = {
        "HyperParameters": {
            "sagemaker_program": '"train.py"',
            "sagemaker_submit_directory": '"s3://b/src.tar.gz"',
            "sagemaker_distributed_dataparallel_enabled": "true",
            "epochs": "2",
            "out": '"/opt/ml/checkpoints/out"',
        },
        "ResourceConfig": {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": count},
        "InputDataConfig": [
            {
                "ChannelName": "train",
                "ContentType": "text/csv",
                "DataSource": {"S3DataSource": {"S3Uri": "s3://b/train", "S3DataType": "S3Prefix"}},
            }
        ],
        "RoleArn": "arn:aws:iam::123456789012:role/R",
    }
    spec.update(spec_extra or {})
    facts = JobFacts("job-1", ARN, spec, cache_dir, expires)
    hosts = hosts_of(spec["ResourceConfig"])
    tree = InstanceTree(tmp_path / f"algo-{host}")
    return InstanceContract(facts, hosts[host - 1], hosts, tree)


def test_config_files_as_sagemaker_writes_them(tmp_path):
    c = contract(tmp_path, host=2)
    c.tree.reset()
    c.write_config_files()
    read = lambda name: json.loads((c.tree.input_config / name).read_text())  # noqa: E731
    hps = read("hyperparameters.json")
    assert hps["epochs"] == "2" and hps["sagemaker_program"] == '"train.py"'
    assert hps["out"] == json.dumps(str(c.tree.checkpoints / "out"))  # /opt/ml paths mapped
    assert read("resourceconfig.json") == {
        "current_host": "algo-2",
        "current_instance_type": "ml.p4d.24xlarge",
        "current_group_name": "homogeneousCluster",
        "hosts": ["algo-1", "algo-2"],
        "instance_groups": [
            {
                "instance_group_name": "homogeneousCluster",
                "instance_type": "ml.p4d.24xlarge",
                "hosts": ["algo-1", "algo-2"],
            }
        ],
        "network_interface_name": "eth0",
    }
    assert read("inputdataconfig.json") == {
        "train": {
            "TrainingInputMode": "File",
            "S3DistributionType": "FullyReplicated",
            "RecordWrapperType": "None",
            "ContentType": "text/csv",
        }
    }
    for directory in (c.tree.model, c.tree.output_data, c.tree.code, c.tree.input_data):
        assert directory.is_dir()


def test_environment_of_a_second_host(tmp_path):
    expires = datetime(2026, 5, 1, 8, 30, tzinfo=timezone.utc)
    c = contract(
        tmp_path,
        host=2,
        cache_dir=tmp_path / "cache",
        expires=expires,
        spec_extra={
            "Environment": {
                "SM_HOSTS": "user cannot override",
                "PIP_CACHE_DIR": "/opt/ml/sagemaker/warmpoolcache/pip",
                "PYTHONUNBUFFERED": "0",
            }
        },
    )
    env = c.environment({"PATH": "/usr/bin", "SM_STALE": "x", "PYTHONPATH": "/lib"})
    assert "SM_STALE" not in env and env["PATH"] == "/usr/bin"
    assert env["SM_HOSTS"] == '["algo-1","algo-2"]' and env["SM_CURRENT_HOST"] == "algo-2"
    assert env["CURRENT_HOST"] == "algo-2" and env["AWS_REGION"] == "eu-west-1"
    assert env["SM_HP_OUT"] == str(c.tree.checkpoints / "out")
    assert env["SM_FRAMEWORK_PARAMS"] == '{"sagemaker_distributed_dataparallel_enabled":true}'
    assert env["SM_DISTRIBUTION_INSTANCE_GROUPS"] == '["homogeneousCluster"]'
    assert env["SM_LOG_LEVEL"] == "20" and env["SM_FRAMEWORK_MODULE"] == ""
    assert env["SM_IS_HETERO"] == "false"
    training_env = json.loads(env["SM_TRAINING_ENV"])
    assert training_env["is_master"] is False and training_env["master_hostname"] == "algo-1"
    assert training_env["distribution_hosts"] == ["algo-1", "algo-2"]
    # Each instance of a multi-instance pool has its own cache (its own volume on AWS).
    assert env["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"] == str(tmp_path / "cache" / "algo-2")
    assert env["PIP_CACHE_DIR"] == str(tmp_path / "cache" / "algo-2" / "pip")
    assert env["SAGEMAKER_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP"] == str(int(expires.timestamp()))
    assert env["PYTHONUNBUFFERED"] == "0"  # the user's Environment wins over our defaults...
    assert env["PYTHONPATH"] == f"{c.tree.code}:/lib"
    assert c.argv("python") == [
        "python",
        "train.py",
        "--epochs",
        "2",
        "--out",
        str(c.tree.checkpoints / "out"),
    ]


def test_checkpoint_dir_mapping(tmp_path):
    assert contract(tmp_path).checkpoint_dir() is None
    c = contract(tmp_path, spec_extra={"CheckpointConfig": {"S3Uri": "s3://b/c"}})
    assert c.checkpoint_dir() == c.tree.checkpoints
    c = contract(
        tmp_path, spec_extra={"CheckpointConfig": {"S3Uri": "s3://b/c", "LocalPath": "/opt/ml/ckpt/x"}}
    )
    assert c.checkpoint_dir() == c.tree.opt_ml / "ckpt" / "x"


def test_log_stream_name():
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert log_stream("job-1", "algo-2", at) == f"job-1/algo-2-{int(at.timestamp())}"


# -- archives ---------------------------------------------------------------------------------------
def archive(*members) -> io.BytesIO:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for member, data in members:
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    buffer.seek(0)
    return buffer


def file_member(name, data=b"x"):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def link_member(name, target, kind=tarfile.SYMTYPE):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info, None


def test_safe_extract_writes_members_inside(tmp_path):
    dest = tmp_path / "code"
    dest.mkdir()
    count = safe_extract(
        archive(file_member("train.py"), file_member("pkg/util.py"), link_member("alias.py", "train.py")),
        dest,
    )
    assert count == 3 and (dest / "pkg" / "util.py").read_bytes() == b"x"
    assert (dest / "alias.py").is_symlink()


@pytest.mark.parametrize(
    "members",
    [
        [file_member("../evil.py")],
        [file_member("a/../../evil.py")],
        [file_member("/tmp/evil.py")],
        [link_member("link", "/etc")],
        [link_member("link", "../../outside")],
        [link_member("link", "..", tarfile.SYMTYPE), file_member("link/evil.py")],
        [link_member("hard", "../../etc/passwd", tarfile.LNKTYPE)],
        [link_member("dev", "", tarfile.CHRTYPE)],
    ],
    ids=[
        "dotdot",
        "nested-dotdot",
        "absolute",
        "abs-symlink",
        "rel-symlink",
        "through-symlink",
        "hardlink",
        "device",
    ],
)
def test_safe_extract_refuses_escapes(tmp_path, members):
    dest = tmp_path / "deep" / "code"
    dest.mkdir(parents=True)
    with pytest.raises(UnsafeArchive) as refused:
        safe_extract(archive(*members), dest)
    assert repr(members[0][0].name) in str(refused.value)  # refused at the first bad member
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "deep" / "evil.py").exists()


def test_corrupt_archive_is_a_source_error(tmp_path):
    with pytest.raises(SourceError):
        safe_extract(io.BytesIO(b"not a tarball at all"), tmp_path)


# -- outputs and small helpers ------------------------------------------------------------------------
def test_output_locations():
    assert output_prefix("s3://b/out/", "job") == ("b", "out/job/output/")
    assert output_prefix("s3://b", "job") == ("b", "job/output/")
    assert artifact_uri("s3://b/out", "job") == "s3://b/out/job/output/model.tar.gz"


def test_pack_has_relative_members(tmp_path):
    (tmp_path / "model" / "sub").mkdir(parents=True)
    (tmp_path / "model" / "w.bin").write_bytes(b"w")
    (tmp_path / "model" / "sub" / "c.json").write_text("{}")
    with tarfile.open(pack(tmp_path / "model", tmp_path / "m.tar.gz")) as tar:
        assert sorted(tar.getnames()) == ["sub", "sub/c.json", "w.bin"]


def test_exit_codes_and_tails():
    assert exit_code(0) == 0 and exit_code(3) == 3 and exit_code(-15) == 143 and exit_code(-9) == 137
    tail = Tail(limit=20)
    for line in ("aaaaaaaaaa", "bbbbbbbbbb", "cccc"):
        tail.add(line)
    assert tail.text() == "bbbbbbbbbb\ncccc"
    tail.add("d" * 50)
    assert tail.text() == "d" * 20


@pytest.mark.parametrize(
    "output_path, key",
    [
        ("s3://b", "job/output/model.tar.gz"),
        ("s3://b/", "job/output/model.tar.gz"),
        ("s3://b/out", "out/job/output/model.tar.gz"),
        ("s3://b/out/", "out/job/output/model.tar.gz"),
        (
            "s3://b/prefix//",
            "prefix//job/output/model.tar.gz",
        ),  # S3 keys are literal: the empty segment stays
    ],
)
def test_the_artifacts_key_takes_one_trailing_slash_off_the_output_path(output_path, key):
    assert artifact_uri(output_path, "job") == f"s3://b/{key}"
