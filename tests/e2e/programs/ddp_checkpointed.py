"""A PyTorch DDP training loop that checkpoints the way docs/checkpoints.md says: every
rank saves its model and optimizer to $SHOAL_CHECKPOINT_DIR every 25 steps and marks it
complete; on SIGTERM (a preemption) the ranks agree, through an all-reduce, on the step to
stop at, checkpoint it and exit. A restarted attempt resumes from the folder Shoal
restored. Rank 0 writes the final parameters to $FINAL."""
import os
import signal
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

STEPS = int(os.environ.get("STEPS", "300"))
folder = os.environ["SHOAL_CHECKPOINT_DIR"]
marker = os.environ["SHOAL_CHECKPOINT_MARKER"]
path = os.path.join(folder, "checkpoint.pt")

stop = False


def on_sigterm(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_sigterm)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
ddp = DistributedDataParallel(model)
optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
step = 0
if os.path.exists(path):
    saved = torch.load(path)
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    step = saved["step"]
print(f"rank {rank} starts at step {step}", flush=True)


def checkpoint():
    while os.path.exists(marker):  # Shoal has not taken the previous one yet
        time.sleep(0.01)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, path + ".tmp")
    os.replace(path + ".tmp", path)
    open(marker, "w").close()


while step < STEPS:
    flag = torch.tensor([1.0 if stop else 0.0])
    dist.all_reduce(flag)  # every rank stops at the same step
    if flag.item() > 0:
        checkpoint()
        print(f"rank {rank} preempted at step {step}", flush=True)
        sys.exit(0)
    generator = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(32, 16, generator=generator)
    y = x.sum(dim=1, keepdim=True).sin()
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(ddp(x), y)
    loss.backward()
    optimizer.step()
    step += 1
    if rank == 0:
        print(f"reporter progress:{step / STEPS:.4f}", file=sys.stderr, flush=True)
    time.sleep(0.02)
    if step % 25 == 0:
        checkpoint()
if rank == 0:
    torch.save(model.state_dict(), os.environ["FINAL"])
print(f"rank {rank} done at step {step}", flush=True)
dist.destroy_process_group()
