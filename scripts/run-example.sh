#!/usr/bin/env bash
# The main job: installs what Shoal needs, builds it, and trains a CNN on Fashion-MNIST
# with PyTorch DDP on 2 workers of the embedded local cluster (about 3 minutes on 2
# cores). Extra arguments go to `shoal run`, e.g. --instances worker=3.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
status=0
build/shoal run examples/fashion-mnist-ddp/job.yaml "$@" || status=$?
echo
echo "The worker's output (test accuracy at the end):"
id=$(build/shoal list --limit 1 --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["jobs"][0]["id"])')
build/shoal logs "$id" --role worker --index 0 | grep -E "final loss|test accuracy" || true
exit $status
