"""What if: a week of jobs under four policies, compared (docs/what-if.md).

The workload (examples/what_if_data/jobs.csv, kept out of examples/data: the other examples' training
data): every night a data prep, a 4-hour pretraining on 2 x ml.p5.48xlarge after it and an evaluation
after that; six experiments each afternoon, each asking for a 600 s warm pool. The policies: on demand;
the workload as written (its warm pools); a longer keep-alive; a 48-hour plan of 2 x ml.p5.48xlarge
with overflow to on demand. Each policy runs on its own fresh backend (one process per policy); the
figures are read back through the API and the cost report.

Usage: python examples/what_if.py [OUT.png|OUT.svg|OUT.html] (default: what-if.png in the current directory)
"""

import sys
from pathlib import Path

from sagemaker_plans_local.inspection.timeline import save
from sagemaker_plans_local.simulation.simulator import simulate

HERE = Path(__file__).resolve().parent
POLICIES = ["on-demand", "as-is", "keep-alive=1800", "plan=ml.p5.48xlarge:2:48+keep-alive=600+overflow"]


def main(argv: list[str]) -> None:
    out = Path(argv[1]) if len(argv) > 1 else Path("what-if.png")
    simulation = simulate(HERE / "what_if_data" / "jobs.csv", POLICIES)
    print(
        f"{'policy':<50} {'total':>10} {'plan fees':>10} {'training':>9} {'pools':>7} {'warm':>5} {'p95 wait':>9}"
    )
    for result in simulation.results:
        print(
            f"{result.policy:<50} {result.total:>10} {result.plan_fees:>10} {result.training:>9} "
            f"{result.warm_pool:>7} {result.warm_starts:>5} {result.wait()['p95']:>8}s"
        )
    cheapest = min(simulation.results, key=lambda result: result.total)
    print(f"cheapest: {cheapest.policy} ({cheapest.total} {cheapest.currency})")
    print(f"wrote {save(simulation.figure(), out)}")


if __name__ == "__main__":
    main(sys.argv)
