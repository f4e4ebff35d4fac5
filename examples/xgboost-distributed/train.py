"""Distributed XGBoost, written as for dmlc-submit: the Rabit communicator finds its
tracker through DMLC_TRACKER_URI / DMLC_TRACKER_PORT and its task through DMLC_TASK_ID.
Each worker trains on its own shard of a synthetic binary classification problem; Rabit
sums the histograms, so every worker ends with the same model.

    python3 train.py [--rounds 20] [--output DIR]
"""
import argparse
import hashlib
import os
import sys

import numpy as np
import xgboost as xgb
from xgboost import collective


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--output", default=".")
    args = parser.parse_args()

    with collective.CommunicatorContext():
        rank, world = collective.get_rank(), collective.get_world_size()
        rng = np.random.default_rng(1000 + rank)  # each worker's own shard
        features = rng.normal(size=(args.rows, 8))
        labels = (features[:, 0] + 0.5 * features[:, 1] - features[:, 2] > 0).astype(int)
        train = xgb.DMatrix(features, label=labels)
        params = {"objective": "binary:logistic", "max_depth": 4, "eta": 0.3, "tree_method": "hist", "nthread": 1,
                  "eval_metric": "error"}
        history = {}
        booster = xgb.train(params, train, num_boost_round=args.rounds, evals=[(train, "train")],
                            evals_result=history, verbose_eval=False)
        os.makedirs(args.output, exist_ok=True)
        path = os.path.join(args.output, f"model-{rank}.json")
        booster.save_model(path)
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        print(f"rank {rank} of {world}: train error {history['train']['error'][-1]:.4f}")
        print(f"model sha256: {digest}")
        sys.stderr.write("reporter progress:1.0\n")


if __name__ == "__main__":
    main()
