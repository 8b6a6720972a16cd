"""A small pure-Python training script following the SageMaker training contract.

It fits y = a*x + b to the CSV rows of the training channel by gradient
descent, saves the model to SM_MODEL_DIR and keeps a run counter in the
warm pool's persistent cache, as the developer guide suggests.
"""

import argparse
import csv
import json
import os
from pathlib import Path


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--beta_1", type=float, default=0.9)
    parser.add_argument("--beta_2", type=float, default=0.999)
    parser.add_argument("--model_dir", default=None)  # the TensorFlow estimator passes it
    return parser.parse_known_args()[0]


def load_rows(channel: Path):
    rows = []
    for path in sorted(channel.rglob("*.csv")):
        with open(path) as handle:
            rows += [(float(x), float(y)) for x, y in csv.reader(handle)]
    return rows


def main():
    args = parse_args()
    channel = Path(os.environ.get("SM_CHANNEL_TRAINING", os.environ.get("SM_CHANNEL_TRAIN", ".")))
    rows = load_rows(channel)
    print(f"training on {len(rows)} rows from {channel.name}, epochs={args.epochs}")

    # The persistent cache outlives the job while its warm pool is reused.
    cache = Path(os.environ["SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY"])
    runs_file = cache / "runs.txt"
    runs = int(runs_file.read_text()) + 1 if runs_file.exists() else 1
    runs_file.write_text(str(runs))
    (cache / "test_dir").mkdir(exist_ok=True)
    print(f"persistent cache {cache}: run #{runs} on this warm pool")
    print(f"PIP_CACHE_DIR={os.environ.get('PIP_CACHE_DIR')}")

    a = b = 0.0
    rate = 0.01
    for _epoch in range(args.epochs * 200):
        grad_a = sum((a * x + b - y) * x for x, y in rows) / len(rows)
        grad_b = sum((a * x + b - y) for x, y in rows) / len(rows)
        a, b = a - rate * grad_a, b - rate * grad_b
    loss = sum((a * x + b - y) ** 2 for x, y in rows) / len(rows)
    print(f"a={a:.3f} b={b:.3f} loss={loss:.4f}")

    model_dir = Path(os.environ["SM_MODEL_DIR"])
    (model_dir / "model.json").write_text(json.dumps({"a": a, "b": b, "loss": loss}))


if __name__ == "__main__":
    main()
