"""Every MPI rank adds its rank and says where it runs; rank 0 prints (and saves) what all of them saw."""

import json
import os
import socket
import sys

from mpi4py import MPI

comm = MPI.COMM_WORLD
total = comm.allreduce(comm.Get_rank() + 1, op=MPI.SUM)
seen = comm.gather({"rank": comm.Get_rank(), "sum": total, "host": socket.gethostname()})
sys.stdout.write(f"rank-{comm.Get_rank()}-of-{comm.Get_size()}\n")
sys.stdout.flush()
if comm.Get_rank() == 0:
    sys.stdout.write(f"mpi {json.dumps(seen, sort_keys=True)}\n")  # one write: no other rank's text inside
    sys.stdout.flush()
    with open(os.path.join(os.environ["SM_MODEL_DIR"], "mpi.json"), "w") as out:
        json.dump(seen, out)
