#!/usr/bin/env python3
"""The PyTorch DDP baseline for bench/train/run.sh: Caffe's LeNet, or Caffe's CIFAR-10 quick
net on Fashion-MNIST's 1 x 28 x 28 images (--net), with the same layers, batch, data order
(each rank a contiguous shard, read in order), solver (SGD, momentum 0.9, weight decay
5e-4, lr 0.01) and threads as `shoal train`. Prints images/s.

Run one process per rank with RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT set (gloo)."""
import argparse
import gzip
import os
import struct
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 20, 5)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.ip1 = nn.Linear(800, 500)
        self.ip2 = nn.Linear(500, 10)

    def forward(self, x):
        x = F.max_pool2d(self.conv1(x), 2, 2, ceil_mode=True)
        x = F.max_pool2d(self.conv2(x), 2, 2, ceil_mode=True)
        x = F.relu(self.ip1(x.flatten(1)))
        return self.ip2(x)


class Cifar10Quick(nn.Module):
    """Caffe's examples/cifar10/cifar10_quick_train_test.prototxt, on one channel."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 5, padding=2)
        self.conv2 = nn.Conv2d(32, 32, 5, padding=2)
        self.conv3 = nn.Conv2d(32, 64, 5, padding=2)
        self.ip1 = nn.Linear(64 * 3 * 3, 64)
        self.ip2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 3, 2, ceil_mode=True))
        x = F.avg_pool2d(F.relu(self.conv2(x)), 3, 2, ceil_mode=True)
        x = F.avg_pool2d(F.relu(self.conv3(x)), 3, 2, ceil_mode=True)
        return self.ip2(self.ip1(x.flatten(1)))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=300)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--net", choices=["lenet", "cifar10_quick"], default="lenet")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        dist.init_process_group("gloo")
    images = read_idx(f"{DATA}/train-images-idx3-ubyte.gz")
    labels = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz")
    shard = len(images) // world
    x = torch.from_numpy(images[rank * shard:(rank + 1) * shard].astype(np.float32) * 0.00390625).unsqueeze(1)
    y = torch.from_numpy(labels[rank * shard:(rank + 1) * shard].astype(np.int64))
    torch.manual_seed(1)
    model = LeNet() if args.net == "lenet" else Cifar10Quick()
    if world > 1:
        model = DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
    steps = shard // args.batch
    start, cpu_start = time.perf_counter(), time.process_time()
    for it in range(args.iters):
        s = (it % steps) * args.batch
        opt.zero_grad()
        loss = F.cross_entropy(model(x[s:s + args.batch]), y[s:s + args.batch])
        loss.backward()
        opt.step()
    secs, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    if rank == 0:
        print(f"ddp: {world} worker(s), {args.iters} iterations in {secs:.2f} s, "
              f"{args.iters * args.batch * world / secs:.1f} images/s "
              f"(this worker: {cpu:.2f} CPU s, {args.iters * args.batch / cpu:.1f} images per CPU s), "
              f"loss {loss.item():.4f}", flush=True)
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
