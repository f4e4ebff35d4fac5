"""A minimal torchrun-style program: joins the process group from the environment that
torchrun would set, all-reduces its rank, and prints what it saw."""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
value = torch.tensor([float(dist.get_rank())])
dist.all_reduce(value)
print(f"rank={os.environ['RANK']} local_rank={os.environ['LOCAL_RANK']} local_world_size={os.environ['LOCAL_WORLD_SIZE']} "
      f"group_rank={os.environ['GROUP_RANK']} world_size={dist.get_world_size()} sum={int(value.item())}", flush=True)
dist.destroy_process_group()
