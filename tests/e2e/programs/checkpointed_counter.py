"""Counts to TOTAL, a step every 20 ms, keeping its count in $SHOAL_CHECKPOINT_DIR as a
program following docs/checkpoints.md does: it writes state.json, marks it complete, and
does not touch the folder again until Shoal has taken it (the marker is gone). On SIGTERM
it reads the preemption file, checkpoints the step it reached, and exits. Every start and
stop is appended to the file EVENTS names."""
import json
import os
import signal
import sys
import time

TOTAL = int(os.environ.get("TOTAL", "400"))
FAIL_ONCE_AT = int(os.environ.get("FAIL_ONCE_AT", "0"))
folder = os.environ["SHOAL_CHECKPOINT_DIR"]
marker = os.environ["SHOAL_CHECKPOINT_MARKER"]
state = os.path.join(folder, "state.json")
events = open(os.environ["EVENTS"], "a")


def note(line):
    events.write(line + "\n")
    events.flush()


stop = False


def on_sigterm(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_sigterm)
step = json.load(open(state))["step"] if os.path.exists(state) else 0
note(f"start {step}")


def checkpoint():
    while os.path.exists(marker):  # Shoal has not taken the previous one yet
        time.sleep(0.01)
    with open(state + ".tmp", "w") as out:
        json.dump({"step": step}, out)
    os.replace(state + ".tmp", state)
    open(marker, "w").close()


while step < TOTAL:
    if stop:
        checkpoint()
        notice = open(os.environ["SHOAL_PREEMPTION_FILE"]).read()
        note(f"stop {step} " + json.dumps(notice))
        sys.exit(0)
    if FAIL_ONCE_AT and step == FAIL_ONCE_AT and not os.path.exists(os.environ["FAILED_FLAG"]):
        open(os.environ["FAILED_FLAG"], "w").close()
        note(f"crash {step}")
        sys.exit(3)
    step += 1
    print(f"reporter progress:{step / TOTAL:.4f}", file=sys.stderr, flush=True)
    time.sleep(0.02)
    if step % 50 == 0:
        checkpoint()
note(f"done {step}")
