"""A gloo all-reduce over every torchrun worker; rank 0 saves the result and the world it saw."""

import json
import os
import socket
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, size = dist.get_rank(), dist.get_world_size()
value = torch.tensor([float(rank + 1)])
dist.all_reduce(value)
names = [None] * size
dist.all_gather_object(names, socket.gethostname())
line = {"rank": rank, "size": size, "sum": value.item(), "hosts": names, "master": os.environ["MASTER_ADDR"]}
sys.stdout.write(f"torch {json.dumps(line, sort_keys=True)}\n")  # one write: ranks share the pipe
sys.stdout.flush()
if rank == 0 and "SM_MODEL_DIR" in os.environ:
    with open(os.path.join(os.environ["SM_MODEL_DIR"], "torch.json"), "w") as out:
        json.dump(line, out)
dist.destroy_process_group()
