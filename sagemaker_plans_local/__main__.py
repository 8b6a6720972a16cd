"""``python -m sagemaker_plans_local run script.py [args]``: run an unmodified script locally.

With ``SAGEMAKER_PLANS_LOCAL=0`` the script runs as with ``python script.py``: against AWS.
"""

from __future__ import annotations

import argparse
import runpy
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sagemaker_plans_local",
        description="Run SageMaker code with every boto3 client and sagemaker.Session() answered in-process.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a Python script locally")
    run.add_argument("script", help="the script to run, as with `python script.py`")
    run.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    options = parser.parse_args(argv)

    from sagemaker_plans_local.sdk.activation import activated

    sys.argv = [options.script, *options.args]
    with activated():
        runpy.run_path(options.script, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
