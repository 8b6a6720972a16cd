"""Writes to stderr (many lines) and exits 3; with --failure-file, writes /opt/ml/output/failure too."""

import os
import sys

for i in range(200):
    print(f"noise {i:03d} " + "x" * 20, file=sys.stderr)
print("ValueError: the real cause", file=sys.stderr)
if "--failure-file" in sys.argv:
    with open(os.path.join(os.environ["SM_OUTPUT_DIR"], "failure"), "w") as out:
        out.write("CUDA out of memory\n")
with open(os.path.join(os.environ["SM_MODEL_DIR"], "partial.bin"), "w") as out:
    out.write("partial")
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "debug.txt"), "w") as out:
    out.write("debug")
sys.exit(3)
