"""A ContainerEntrypoint job's program: records what the container sees into /opt/ml/model/seen.json."""

import getpass
import json
import os
import shutil
import sys

seen = {
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "uid": os.getuid(),
    "user": getpass.getuser(),
    "prefix": sys.prefix,
    "on_path": {name: shutil.which(name) for name in ("python", "python3", "pip", "pip3")},
    "env": {
        k: v
        for k, v in os.environ.items()
        if k.startswith(
            (
                "SM_",
                "SAGEMAKER_",
                "TRAINING_JOB",
                "AWS_",
                "MY_",
                "CURRENT_HOST",
                "USER",
                "LOGNAME",
                "PYTHONPATH",
            )
        )
    },
    "resourceconfig": json.load(open("/opt/ml/input/config/resourceconfig.json")),
    "hyperparameters": json.load(open("/opt/ml/input/config/hyperparameters.json")),
    "train": sorted(os.listdir("/opt/ml/input/data/train")),
    "opt": sorted(os.listdir("/opt")),
}
cache = os.environ.get("SAGEMAKER_MANAGED_WARMPOOL_CACHE_DIRECTORY")
if cache:
    marker = os.path.join(cache, "marker")
    seen["cache_before"] = open(marker).read() if os.path.exists(marker) else ""
    with open(marker, "a") as out:
        out.write(os.environ["TRAINING_JOB_NAME"] + "\n")
with open("/opt/ml/model/seen.json", "w") as out:
    json.dump(seen, out)
print("seen by", os.environ["TRAINING_JOB_NAME"], seen["resourceconfig"]["current_host"])
if os.environ.get("MY_FAILURE"):
    with open("/opt/ml/output/failure", "w") as out:
        out.write(os.environ["MY_FAILURE"])
    sys.exit(3)
