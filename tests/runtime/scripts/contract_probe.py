"""Records what the training contract gives a script into the model directory."""

import json
import os
import sys

model_dir = os.environ["SM_MODEL_DIR"]
config_dir = os.environ["SM_INPUT_CONFIG_DIR"]
probe = {
    "argv": sys.argv[1:],
    "cwd": os.getcwd(),
    "executable": sys.executable,
    "prefix": sys.prefix,
    "env": {
        k: v
        for k, v in os.environ.items()
        if k.startswith(
            (
                "SM_",
                "SAGEMAKER_",
                "TRAINING_JOB",
                "PIP_",
                "MY_",
                "CURRENT_HOST",
                "AWS_REGION",
                "PYTHONPATH",
                "VIRTUAL_ENV",
            )
        )
    },
    "config": {
        name: json.load(open(os.path.join(config_dir, name)))
        for name in ("hyperparameters.json", "resourceconfig.json", "inputdataconfig.json")
    },
    "channels": {
        name: sorted(os.listdir(os.environ["SM_CHANNEL_" + name.upper()]))
        for name in json.loads(os.environ["SM_CHANNELS"])
    },
}
with open(os.path.join(model_dir, "probe.json"), "w") as out:
    json.dump(probe, out)
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "metrics.txt"), "w") as out:
    out.write("loss=0.1\n")
print("line one")
print("line two", file=sys.stderr)
print("line three")
