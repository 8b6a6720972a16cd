"""Imports the package installed from requirements.txt and records where it came from."""

import json
import os
import sys

import tinypkg

with open(os.path.join(os.environ["SM_MODEL_DIR"], "package.json"), "w") as out:
    json.dump(
        {
            "value": tinypkg.VALUE,
            "file": tinypkg.__file__,
            "executable": sys.executable,
            "prefix": sys.prefix,
            "pip_cache": os.environ.get("PIP_CACHE_DIR"),
            "attrs_importable": __import__("importlib").util.find_spec("attrs") is not None,
        },
        out,
    )
print("tinypkg", tinypkg.VALUE)
