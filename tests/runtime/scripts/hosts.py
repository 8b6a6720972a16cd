"""algo-2 fails at once when --fail-second is given; every other host sleeps (to be stopped)."""

import os
import sys
import time

host = os.environ["SM_CURRENT_HOST"]
print("host", host, os.environ["SM_HOSTS"], flush=True)
with open(os.path.join(os.environ["SM_MODEL_DIR"], "host.txt"), "w") as out:
    out.write(host)
if "--fail-second" in sys.argv:
    if host == "algo-2":
        print("algo-2 gives up", file=sys.stderr)
        sys.exit(5)
    time.sleep(60)
