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
    # one write: unbuffered, print() writes "mpi" and the JSON apart, and mpirun tags each piece
    # as a line of its own when another rank's line comes between them (as on SageMaker)
    sys.stdout.write(f"mpi {json.dumps(seen, sort_keys=True)}\n")
    sys.stdout.flush()
    with open(os.path.join(os.environ["SM_MODEL_DIR"], "mpi.json"), "w") as out:
        json.dump(seen, out)
