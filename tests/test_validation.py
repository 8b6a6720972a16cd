"""Model-driven request validation, with AWS's wording, on real SageMaker shapes."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sagemaker_plans_local.protocol.errors import ApiError
from sagemaker_plans_local.protocol.patterns import matcher
from sagemaker_plans_local.protocol.service_model import operation_model, service_model
from sagemaker_plans_local.protocol.validation import validate_request, violations

CREATE = operation_model("CreateTrainingJob")
MODEL = service_model()
PATTERNED = sorted(name for name in MODEL.shape_names if "pattern" in MODEL.shape_for(name).metadata)
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def create_request(**changes):
    request = {
        "TrainingJobName": "job-1",
        "RoleArn": ROLE,
        "AlgorithmSpecification": {"TrainingImage": "img:latest", "TrainingInputMode": "File"},
        "OutputDataConfig": {"S3OutputPath": "s3://bucket/out"},
        "ResourceConfig": {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
        "StoppingCondition": {"MaxRuntimeInSeconds": 3600},
    }
    request.update(changes)
    return request


def problems(**changes):
    return violations(CREATE.input_shape, create_request(**changes))


def resources(**changes):
    return {"InstanceType": "ml.m5.xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30, **changes}


def shape(name):
    return MODEL.shape_for(name)


def test_every_pattern_in_the_model_compiles():
    assert len(PATTERNED) > 100
    for name in PATTERNED:
        matcher(shape(name).metadata["pattern"])


def test_a_valid_request_has_no_violations():
    assert problems() == []
    validate_request(CREATE, create_request())


def test_required_members():
    request = create_request(OutputDataConfig={})
    del request["RoleArn"]
    assert violations(CREATE.input_shape, request) == [
        "Value null at 'outputDataConfig.s3OutputPath' failed to satisfy constraint: Member must not be null",
        "Value null at 'roleArn' failed to satisfy constraint: Member must not be null",
    ]


def test_explicit_null_is_missing():
    assert problems(RoleArn=None) == [
        "Value null at 'roleArn' failed to satisfy constraint: Member must not be null"
    ]


def test_enum_lists_the_model_values_in_order():
    (message,) = problems(ResourceConfig=resources(InstanceType="ml.foo"))
    assert message.startswith(
        "Value 'ml.foo' at 'resourceConfig.instanceType' failed to satisfy constraint: "
        "Member must satisfy enum value set: [ml.m4.xlarge, ml.m4.2xlarge, ml.m4.4xlarge, "
    )
    assert message.endswith("]")
    assert message.count(", ") == len(shape("TrainingInstanceType").metadata["enum"]) - 1


def test_string_length_bounds():
    image = "x" * 256
    assert problems(AlgorithmSpecification={"TrainingImage": image, "TrainingInputMode": "File"}) == [
        f"Value '{image}' at 'algorithmSpecification.trainingImage' failed to satisfy constraint: "
        "Member must have length less than or equal to 255"
    ]
    assert problems(RoleArn="arn:aws:iam::1:role") == [
        "Value 'arn:aws:iam::1:role' at 'roleArn' failed to satisfy constraint: "
        "Member must have length greater than or equal to 20",
        "Value 'arn:aws:iam::1:role' at 'roleArn' failed to satisfy constraint: "
        r"Member must satisfy regular expression pattern: arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+",
    ]


def test_list_and_map_size_bounds():
    vpc = {"SecurityGroupIds": [], "Subnets": ["subnet-1"]}
    assert problems(VpcConfig=vpc) == [
        "Value '[]' at 'vpcConfig.securityGroupIds' failed to satisfy constraint: "
        "Member must have length greater than or equal to 1"
    ]
    (message,) = problems(HyperParameters={f"k{i:03}": "v" for i in range(101)})
    assert message.startswith("Value '{k000=v, k001=v, ")
    assert message.endswith(
        "...' at 'hyperParameters' failed to satisfy constraint: "
        "Member must have length less than or equal to 100"
    )


def test_numeric_bounds():
    assert problems(ResourceConfig=resources(KeepAlivePeriodInSeconds=21601, InstanceCount=-1)) == [
        "Value '-1' at 'resourceConfig.instanceCount' failed to satisfy constraint: "
        "Member must have value greater than or equal to 0",
        "Value '21601' at 'resourceConfig.keepAlivePeriodInSeconds' failed to satisfy constraint: "
        "Member must have value less than or equal to 21600",
    ]


def test_pattern():
    assert problems(TrainingJobName="my_job") == [
        "Value 'my_job' at 'trainingJobName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
    ]


def test_patterns_match_the_whole_value():
    assert problems(TrainingJobName="job-1 ") != []
    assert problems(TrainingJobName="-job") != []


@pytest.mark.parametrize(
    ("member", "value", "type_name"),
    [
        ("TrainingJobName", 5, "string"),
        ("EnableManagedSpotTraining", "true", "boolean"),
        ("ResourceConfig", ["ml.m5.xlarge"], "structure"),
        ("Tags", {"Key": "k"}, "list"),
        ("HyperParameters", [["epochs", "3"]], "map"),
    ],
)
def test_type_mismatches(member, value, type_name):
    (message,) = problems(**{member: value})
    path = member[0].lower() + member[1:]
    assert message.endswith(f"at '{path}' failed to satisfy constraint: Member must be of type {type_name}")


def test_numbers_are_not_booleans_or_strings():
    assert problems(ResourceConfig=resources(InstanceCount=True, VolumeSizeInGB="30")) == [
        "Value 'true' at 'resourceConfig.instanceCount' failed to satisfy constraint: Member must be of type integer",
        "Value '30' at 'resourceConfig.volumeSizeInGB' failed to satisfy constraint: Member must be of type integer",
    ]


def test_timestamps_must_be_decoded_datetimes():
    shape = operation_model("ListTrainingJobs").input_shape
    now = datetime.datetime(2024, 5, 1, tzinfo=datetime.timezone.utc)
    assert violations(shape, {"CreationTimeAfter": now}) == []
    assert violations(shape, {"CreationTimeAfter": 1714521600}) == [
        "Value '1714521600' at 'creationTimeAfter' failed to satisfy constraint: Member must be of type timestamp"
    ]


def test_list_element_paths_are_one_based_and_in_numeric_order():
    subnets = ["subnet-1", "bad subnet"] + [f"subnet-{i}" for i in range(7)] + ["x" * 33]
    assert problems(VpcConfig={"SecurityGroupIds": ["sg-1"], "Subnets": subnets}) == [
        "Value 'bad subnet' at 'vpcConfig.subnets.2.member' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [-0-9a-zA-Z]+",
        f"Value '{'x' * 33}' at 'vpcConfig.subnets.10.member' failed to satisfy constraint: "
        "Member must have length less than or equal to 32",
    ]


def test_null_list_element():
    vpc = {"SecurityGroupIds": [None], "Subnets": ["subnet-1"]}
    assert problems(VpcConfig=vpc) == [
        "Value null at 'vpcConfig.securityGroupIds.1.member' failed to satisfy constraint: Member must not be null"
    ]


def test_structures_inside_lists():
    tags = [{"Key": "team", "Value": "ml"}, {"Value": "x"}]
    assert problems(Tags=tags) == [
        "Value null at 'tags.2.member.key' failed to satisfy constraint: Member must not be null"
    ]


def test_map_values_and_keys():
    environment = {"GOOD": "x" * 513, "1BAD": "v"}
    assert problems(Environment=environment) == [
        "Value '1BAD' at 'environment' failed to satisfy constraint: "
        "Map keys must satisfy constraint: [Member must satisfy regular expression pattern: [a-zA-Z_][a-zA-Z0-9_]*]",
        f"Value '{'x' * 513}' at 'environment.GOOD' failed to satisfy constraint: "
        "Member must have length less than or equal to 512",
    ]


def test_unicode_categories_in_tag_patterns():
    good = [{"Key": "équipe:ml/2024 Ω", "Value": "ñandú-データ"}]
    assert problems(Tags=good) == []
    bad = [{"Key": "cost#center", "Value": "ok"}, {"Key": "ok", "Value": "smile 😀"}]
    assert problems(Tags=bad) == [
        "Value 'cost#center' at 'tags.1.member.key' failed to satisfy constraint: "
        r"Member must satisfy regular expression pattern: ([\p{L}\p{Z}\p{N}_.:/=+\-@]*)",
        "Value 'smile 😀' at 'tags.2.member.value' failed to satisfy constraint: "
        r"Member must satisfy regular expression pattern: ([\p{L}\p{Z}\p{N}_.:/=+\-@]*)",
    ]


def test_quantified_dollar_is_an_end_anchor():
    key = shape("CustomerMetadataKey")
    assert "${1,128}" in key.metadata["pattern"]
    assert violations(key, "owner:team", "k") == []
    assert violations(key, "owner{1,128}", "k") != []


def test_lookbehind():
    algorithm = {"AlgorithmName": "my-algo", "TrainingInputMode": "File"}
    assert problems(AlgorithmSpecification=algorithm) == []
    algorithm["AlgorithmName"] = "my-algo-"
    (message,) = problems(AlgorithmSpecification=algorithm)
    assert message.startswith("Value 'my-algo-' at 'algorithmSpecification.algorithmName'")


def test_java_semantics_of_predefined_classes():
    role = shape("RoleArn")
    assert violations(role, ROLE, "r") == []
    assert violations(role, ROLE.replace("1234", "١٢٣٤"), "r") != []  # \d is ASCII in Java
    lambda_arn = shape("TrainingRepositoryCredentialsProviderArn")
    assert violations(lambda_arn, "arn:aws:lambda:us-east-1:123456789012:function:f", "a") == []
    assert violations(lambda_arn, "arn:awsé:lambda:us-east-1:123456789012:function:f", "a") != []  # \p{Alnum}
    value = shape("HyperParameterValue")
    assert violations(value, "a\tb", "v") == []
    assert violations(value, "a\rb", "v") != []  # Java's . excludes every line terminator
    catalog = shape("AthenaCatalog")  # Java surrogate pairs: [\uD800\uDC00-\uDBFF\uDFFF]
    assert violations(catalog, "catalog 😀", "c") == []


def test_catastrophic_pattern_is_bounded():
    name = shape("ClusterSchedulerPriorityClassName")
    assert violations(name, "a-b-c", "n") == []
    (message,) = violations(name, "a" * 60 + "!", "n")
    assert "Member must satisfy regular expression pattern" in message


def test_recursive_shapes():
    search = operation_model("Search").input_shape
    deep = {"SubExpressions": [{"SubExpressions": [{"Filters": [{"Name": "x", "Operator": "Like"}]}]}]}
    assert violations(search, {"Resource": "TrainingJob", "SearchExpression": deep}) == [
        "Value 'Like' at 'searchExpression.subExpressions.1.member.subExpressions.1.member.filters.1.member.operator' "
        "failed to satisfy constraint: Member must satisfy enum value set: "
        "[Equals, NotEquals, GreaterThan, GreaterThanOrEqualTo, LessThan, LessThanOrEqualTo, Contains, Exists, "
        "NotExists, In]"
    ]


def test_unknown_members_are_not_validated_here():  # the wire refuses them first
    assert problems(Unheard={"Of": 1}, ResourceConfig=resources(Colour="red")) == []


def test_explicit_null_of_an_optional_member():
    assert problems(VpcConfig=None, ResourceConfig=resources(KeepAlivePeriodInSeconds=None)) == [
        "Value null at 'resourceConfig.keepAlivePeriodInSeconds' failed to satisfy constraint: "
        "Member must not be null",
        "Value null at 'vpcConfig' failed to satisfy constraint: Member must not be null",
    ]


def test_path_prefix():
    assert violations(shape("StoppingCondition"), {"MaxRuntimeInSeconds": 0}, "stoppingCondition") == [
        "Value '0' at 'stoppingCondition.maxRuntimeInSeconds' failed to satisfy constraint: "
        "Member must have value greater than or equal to 1"
    ]


def test_validate_request_raises_one_error_with_all_violations():
    request = create_request(TrainingJobName="bad name", ResourceConfig=resources(InstanceCount=-1))
    with pytest.raises(ApiError) as error:
        validate_request(CREATE, request)
    assert error.value.code == "ValidationException"
    assert error.value.status == 400
    assert error.value.message == (
        "2 validation errors detected: "
        "Value '-1' at 'resourceConfig.instanceCount' failed to satisfy constraint: "
        "Member must have value greater than or equal to 0; "
        "Value 'bad name' at 'trainingJobName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}"
    )


def test_validate_request_single_violation_wording():
    with pytest.raises(ApiError) as error:
        validate_request(CREATE, create_request(RoleArn=None))
    assert error.value.message.startswith("1 validation error detected: Value null at 'roleArn'")


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(PATTERNED), value=st.text())
def test_patterns_never_raise(name, value):
    found = violations(shape(name), value, "member")
    assert all(message.startswith(f"Value '{value}' at 'member' failed") for message in found)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_quick_look_finds_a_violation_exactly_when_the_full_walk_does(data):
    from sagemaker_plans_local.protocol.validation import _checker, _validity
    from tests.model_strategies import for_shape

    operation = data.draw(st.sampled_from(["CreateTrainingJob", "ListTrainingJobs", "CreateTrainingPlan"]))
    shape = operation_model(operation).input_shape
    value = data.draw(for_shape(shape))
    out: list = []
    _checker(shape)(value, "", out)
    assert _validity(shape)(value) == (out == [])
