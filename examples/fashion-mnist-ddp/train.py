#!/usr/bin/env python3
"""Train a small CNN on Fashion-MNIST with PyTorch DistributedDataParallel.

An ordinary torchrun-style script: CPU only, gloo backend, default env://
rendezvous (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK come from
the launcher). Without WORLD_SIZE in the environment it runs as a single
process. Progress is reported on stderr as ``reporter progress:<float>``.

Data: the IDX gzip files of Debian's dataset-fashion-mnist package.
"""

import argparse
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

DEFAULT_DATA_DIR = "/usr/share/datasets/fashion-mnist"
MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST training-set pixel statistics


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64,
                   help="per-rank mini-batch size")
    p.add_argument("--lr", type=float, default=0.05,
                   help="SGD learning rate (momentum 0.9)")
    p.add_argument("--train-limit", type=int, default=0,
                   help="use only the first N training images (0: all)")
    p.add_argument("--test-limit", type=int, default=0,
                   help="use only the first N test images (0: all)")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--threads", type=int, default=1,
                   help="torch.set_num_threads")
    p.add_argument("--output", default=None,
                   help="directory where rank 0 saves model.pt")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def read_idx(path, expected_magic):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    if magic != expected_magic:
        raise ValueError(f"{path}: bad IDX magic {magic:#x}")
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    arr = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    return arr.reshape(dims)


def load_split(data_dir, prefix, limit):
    images = read_idx(os.path.join(data_dir, f"{prefix}-images-idx3-ubyte.gz"),
                      0x00000803)
    labels = read_idx(os.path.join(data_dir, f"{prefix}-labels-idx1-ubyte.gz"),
                      0x00000801)
    if limit and limit > 0:
        images, labels = images[:limit], labels[:limit]
    x = torch.from_numpy(images.astype(np.float32) / 255.0)
    x = ((x - MEAN) / STD).unsqueeze(1)  # N x 1 x 28 x 28
    y = torch.from_numpy(labels.astype(np.int64))
    return x, y


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 7 * 7, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return self.fc2(x)


class Progress:
    """Prints ``reporter progress:<p>`` to stderr, at most ~2 per second."""

    def __init__(self, min_interval=0.5):
        self.min_interval = min_interval
        self.last = 0.0

    def report(self, p, force=False):
        now = time.monotonic()
        if force or now - self.last >= self.min_interval:
            self.last = now
            p = min(max(p, 0.0), 1.0)
            print(f"reporter progress:{p:.4f}", file=sys.stderr, flush=True)


def log(rank, msg):
    print(f"[rank {rank}] {msg}", file=sys.stderr, flush=True)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
        rank, world_size = dist.get_rank(), dist.get_world_size()
    else:
        rank, world_size = 0, 1
    progress = Progress()
    progress.report(0.0, force=True)

    t0 = time.monotonic()
    train_x, train_y = load_split(args.data_dir, "train", args.train_limit)
    test_x, test_y = load_split(args.data_dir, "t10k", args.test_limit)
    log(rank, f"world size {world_size}, {len(train_x)} train / "
              f"{len(test_x)} test images, loaded in "
              f"{time.monotonic() - t0:.1f}s")

    model = Net()
    if distributed:
        ddp_model = DistributedDataParallel(model)
    else:
        ddp_model = model
    optimizer = torch.optim.SGD(ddp_model.parameters(), lr=args.lr,
                                momentum=0.9)

    # Each rank trains on its own shard; the sampler pads the shards to equal
    # length so every rank runs the same number of steps.
    sampler = DistributedSampler(range(len(train_x)), num_replicas=world_size,
                                 rank=rank, shuffle=True, seed=args.seed)
    steps_per_epoch = (len(sampler) + args.batch_size - 1) // args.batch_size
    total_steps = max(1, args.epochs * steps_per_epoch)
    step = 0
    epoch_loss = float("nan")
    t_train = time.monotonic()
    for epoch in range(args.epochs):
        ddp_model.train()
        sampler.set_epoch(epoch)
        indices = torch.tensor(list(sampler), dtype=torch.long)
        loss_sum = 0.0
        count = 0
        for start in range(0, len(indices), args.batch_size):
            idx = indices[start:start + args.batch_size]
            x, y = train_x[idx], train_y[idx]
            optimizer.zero_grad()
            loss = F.cross_entropy(ddp_model(x), y)
            loss.backward()
            optimizer.step()
            loss_sum += loss.item() * len(idx)
            count += len(idx)
            step += 1
            progress.report(step / total_steps)

        # Mean training loss of the epoch over all ranks (same value on every
        # rank after the all-reduce).
        stats = torch.tensor([loss_sum, float(count)], dtype=torch.float64)
        if distributed:
            dist.all_reduce(stats)
        epoch_loss = (stats[0] / stats[1]).item()
        log(rank, f"epoch {epoch + 1}/{args.epochs} train loss "
                  f"{epoch_loss:.6f} ({time.monotonic() - t_train:.1f}s)")
    progress.report(1.0, force=True)

    # Every rank evaluates the (identical) model on the whole test set.
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(test_x), 1000):
            out = model(test_x[start:start + 1000])
            correct += (out.argmax(1) == test_y[start:start + 1000]).sum().item()
    accuracy = 100.0 * correct / max(1, len(test_x))

    print(f"final loss: {epoch_loss:.6f}", flush=True)
    print(f"test accuracy: {accuracy:.2f}%", flush=True)
    log(rank, f"total time {time.monotonic() - t0:.1f}s")

    if args.output and rank == 0:
        os.makedirs(args.output, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(args.output, "model.pt"))
        log(rank, f"saved {os.path.join(args.output, 'model.pt')}")

    if distributed:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
