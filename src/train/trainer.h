// Trainer: what `shoal train` does with its flags on one worker: train (TRAIN phase net,
// -devices solver threads, each with its own replica), test, extract features.
//
// Contract (one step, every worker in lock step):
//  1. each replica g = rank * devices + d runs forward and backward on its own batch
//     (partition.h), its gradients landing in its own flat buffer;
//  2. the worker sums its replicas' gradients (and BatchNorm's state blobs), then the
//     workers allreduce the sum; the result is divided by the number of replicas;
//  3. the worker applies the solver's update (solver_update.h: Caffe's six solvers,
//     lr_mult and decay_mult per blob) once, to replica 0, and copies it to the others.
//  Every replica of every worker then holds the same weights: checked every
//  -checkReplicas iterations (default: every display interval, and at the end) by
//  comparing the replicas' bytes and a hash of them across workers.
//  Snapshots (weights .caffemodel, solver state .solverstate in Caffe's layout, see
//  solver_state.h, plus the data position) are written by rank 0, atomically, every
//  `snapshot` iterations, at the end, and when SIGINT or SIGTERM stops training (then the
//  run ends with kAborted); -snapshot resumes from one of Shoal's or Caffe's.
//  Rank 0 logs Caffe's lines (caffe_log.h) and Shoal's reporter lines.
// Thread-safety: Run is called once, from the main thread.
#pragma once

#include "common/status.h"
#include "train/cluster.h"
#include "train/train_flags.h"

namespace shoal::train {

Status RunTrainer(const TrainFlags& flags, Cluster& cluster);

}  // namespace shoal::train
