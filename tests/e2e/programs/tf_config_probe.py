"""Stands in for a TensorFlow program (TensorFlow is not installable here): reads TF_CONFIG
exactly as tf.distribute.cluster_resolver.TFConfigClusterResolver does, serves its own
address from the cluster spec, and connects to every other address in it. It exits once it
has reached every peer and every peer has reached it; a "ps" task keeps serving until
Shoal stops it, as a real parameter server does."""
import json
import os
import signal
import socket
import sys
import threading
import time

config = json.loads(os.environ.get("TF_CONFIG") or "{}")
cluster = config.get("cluster", {})           # ClusterSpec(cluster)
task_type = config.get("task", {}).get("type")
task_id = int(config.get("task", {}).get("index", 0))
me = f"{task_type}:{task_id}"
addresses = {f"{role}:{i}": address for role, hosts in cluster.items() for i, address in enumerate(hosts)}
peers = {name: address for name, address in addresses.items() if name != me}
assert os.environ["TF_ROLE"] == task_type and os.environ["TF_INDEX"] == str(task_id)
assert json.loads(os.environ["TF_CLUSTER_DEF"]) == cluster

heard_from = set()
lock = threading.Lock()


def serve(listener):
    while True:
        conn, _ = listener.accept()
        name = conn.makefile().readline().strip()
        with lock:
            heard_from.add(name)
        conn.close()


if me in addresses:
    host, port = addresses[me].rsplit(":", 1)
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, int(port)))
    listener.listen(64)
    threading.Thread(target=serve, args=(listener,), daemon=True).start()

reached = set()


def stopped(signum, frame):
    # Shoal stops a ps with SIGTERM once the workers are done, and may do so within
    # milliseconds of its last connection: say what it reached and heard before it goes,
    # as a parameter server flushes its log, then die of the signal as it would have.
    print(f"{me} reached {len(reached)} of {len(peers)} peers: {sorted(reached)}", flush=True)
    print(f"{me} heard from {len(heard_from)} peers", flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


signal.signal(signal.SIGTERM, stopped)
deadline = time.time() + 60
while len(reached) < len(peers) and time.time() < deadline:
    for name, address in peers.items():
        if name in reached:
            continue
        host, port = address.rsplit(":", 1)
        try:
            with socket.create_connection((host, int(port)), timeout=2) as conn:
                conn.sendall((me + "\n").encode())
            reached.add(name)
        except OSError:
            pass
    if len(reached) < len(peers):
        time.sleep(0.1)
print(f"{me} reached {len(reached)} of {len(peers)} peers: {sorted(reached)}", flush=True)
if len(reached) < len(peers):
    sys.exit(f"{me} could not reach {sorted(set(peers) - reached)}")
while time.time() < deadline:
    with lock:
        if heard_from >= set(peers):
            break
    time.sleep(0.1)
print(f"{me} heard from {len(heard_from)} peers", flush=True)
if task_type == "ps":
    while True:
        time.sleep(1)
