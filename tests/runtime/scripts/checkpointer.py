"""Reads the checkpoints it finds and writes a new one; exits with the code given as --exit."""

import argparse
import os
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--checkpoint-dir")
parser.add_argument("--exit", type=int, default=0)
args = parser.parse_args()
found = sorted(os.listdir(args.checkpoint_dir))
print("found", ",".join(found))
with open(os.path.join(args.checkpoint_dir, "step-2.ckpt"), "w") as out:
    out.write("two")
sys.exit(args.exit)
