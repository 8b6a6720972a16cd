"""The ``sdk`` marker's rules (tests/sdk_split.py): what `make test` runs under every SDK major."""

import ast
import textwrap

import pytest

from sagemaker_plans_local import pytest_plugin
from tests import sdk_split


def touches(source):
    return sdk_split.touches_sdk(ast.parse(textwrap.dedent(source)))


@pytest.mark.parametrize(
    "source",
    [
        "import sagemaker",
        "import sagemaker.estimator as estimator",
        "from sagemaker.train import ModelTrainer",
        "from sagemaker_plans_local.sdk.major import session_module",
        "import sagemaker_plans_local.sdk.flag",
        "from sagemaker_plans_local import Estimator",
        "from sagemaker_plans_local import LocalBackend, activated",
        "with backend.activate():\n    pass",
        "subprocess.run([sys.executable, '-c', 'import sagemaker; print(1)'])",
        "code = 'from sagemaker_plans_local.sdk.default_backend import default_backend'",
        "code = 'import json, sagemaker.session'",
        "code = 'import json\\nfrom sagemaker_plans_local import LocalBackend, Session'",
    ],
)
def test_code_reaching_the_sdk_is_recognised(source):
    assert touches(source)


@pytest.mark.parametrize(
    "source",
    [
        "from sagemaker_plans_local import LocalBackend",
        "from sagemaker_plans_local.transport.activation import Activation",
        "import sagemaker_plans_local.services.sagemaker.api.service",
        "client = boto3.client('sagemaker', region_name='us-east-1')",
        "arn = 'arn:aws:sagemaker:us-east-1:123456789012:training-job/a'",
        "import sagemaker_core_free_module",
        "code = 'import json\\nfrom sagemaker_plans_local import LocalBackend\\nLocalBackend()'",
        "code = 'import sagemaker_plans_local.services'",
    ],
)
def test_code_without_the_sdk_is_not(source):
    assert not touches(source)


def test_a_module_is_split_by_test_unless_its_shared_code_reaches_the_sdk(tmp_path):
    per_test = tmp_path / "test_per_test.py"
    per_test.write_text(
        textwrap.dedent(
            """
            from sagemaker_plans_local import LocalBackend

            def helper():
                return LocalBackend()

            def test_plain():
                helper()

            def test_sdk():
                from sagemaker_plans_local.sdk.major import sdk_major

            class TestGroup:
                def test_inside(self, backend):
                    with backend.activate():
                        pass
            """
        )
    )
    shared = tmp_path / "test_shared.py"
    shared.write_text(
        "from sagemaker_plans_local.sdk.major import logs_module\n\ndef test_plain():\n    pass\n"
    )
    assert sdk_split._module_units(per_test) == (
        False,
        {"test_plain": False, "test_sdk": True, "TestGroup": True},
    )
    assert sdk_split._module_units(shared) == (True, {"test_plain": False})


def test_fixtures_count_by_their_own_code():
    assert sdk_split._fixture_touches_sdk(pytest_plugin.sagemaker_session)
    assert not sdk_split._fixture_touches_sdk(pytest_plugin.sagemaker_backend)
    assert not sdk_split._fixture_touches_sdk(pytest_plugin.sagemaker_client)


def test_the_session_fixture_marks_a_test_that_uses_it(request, sagemaker_session):
    # this test's own code reaches no SDK: the fixture alone puts it under every major
    assert request.node.get_closest_marker("sdk") is not None


def test_a_test_on_the_backend_alone_is_not_marked(request, backend):
    assert request.node.get_closest_marker("sdk") is None
