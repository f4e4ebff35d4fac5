"""The chaos suite's training job: steps with a checkpoint after each, resumed by a
later attempt, and an output committed by rename at the end. Every write is atomic, so
a fault at any moment leaves either the old or the new file, never half of one."""
import os
import sys
import time

data = os.environ["CHAOS_DIR"]
rank = os.environ["SHOAL_RANK"]
steps = int(os.environ.get("CHAOS_STEPS", "40"))
checkpoint = os.path.join(data, f"checkpoint-{rank}")


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


start = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
print(f"attempt {os.environ['SHOAL_ATTEMPT']} starts at step {start}", flush=True)
for step in range(start, steps):
    time.sleep(0.15)
    write_atomically(checkpoint, str(step + 1))
    print(f"reporter progress: {(step + 1) / steps:.3f}", file=sys.stderr, flush=True)
write_atomically(os.path.join(data, f"output-{rank}"), f"done after {steps} steps, resumed from {start}\n")
