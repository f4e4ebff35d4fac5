"""Stands in for an MXNet (ps-lite) program: the scheduler listens on DMLC_PS_ROOT_PORT;
servers and workers register with it at DMLC_PS_ROOT_URI and wait until all
DMLC_NUM_SERVER servers and DMLC_NUM_WORKER workers have, as ps-lite's start-up does.
Workers then exit; the scheduler and servers serve until Shoal stops them."""
import os
import socket
import time

role = os.environ["DMLC_ROLE"]
root = (os.environ["DMLC_PS_ROOT_URI"], int(os.environ["DMLC_PS_ROOT_PORT"]))
expected = int(os.environ["DMLC_NUM_SERVER"]) + int(os.environ["DMLC_NUM_WORKER"])

if role == "scheduler":
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("0.0.0.0", root[1]))
    listener.listen(64)
    members = []
    while len(members) < expected:
        conn, _ = listener.accept()
        members.append((conn, conn.makefile().readline().strip()))
    for conn, _ in members:
        conn.sendall(b"ready\n")
        conn.close()
    roles = sorted(name for _, name in members)
    print(f"scheduler: all {expected} registered: {roles}", flush=True)
    while True:
        time.sleep(1)

deadline = time.time() + 60
while True:
    try:
        conn = socket.create_connection(root, timeout=60)
        break
    except OSError:
        if time.time() > deadline:
            raise
        time.sleep(0.1)
conn.sendall(f"{role}:{os.environ['SHOAL_INDEX']}\n".encode())
assert conn.makefile().readline().strip() == "ready"
print(f"{role} {os.environ['SHOAL_INDEX']}: registered with the scheduler at {root[0]}:{root[1]}", flush=True)
while role == "server":
    time.sleep(1)
