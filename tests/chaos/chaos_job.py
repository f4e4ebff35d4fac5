"""The chaos suite's training job: steps with a checkpoint after each, resumed by a
later attempt, and an output committed by rename at the end. Every write is atomic, so
a fault at any moment leaves either the old or the new file, never half of one.

With an S3 input in download mode (SHOAL_INPUT_TRAIN_DIR) it first checks every byte it
was given against the manifest the suite wrote (CHAOS_DIR/inputs.json), and fails if a
file is missing or not whole; with an output (SHOAL_OUTPUT_MODEL_DIR) it writes
CHAOS_OUTPUT_FILES files of CHAOS_OUTPUT_MB MiB there at the end, whose contents the suite
can recompute (output_block), for Shoal to upload when the program has ended."""
import hashlib
import json
import os
import sys
import time


def output_block(rank, file, mib):
    """MiB number `mib` of output file number `file` of task `rank`: distinct everywhere."""
    return hashlib.sha256(f"{rank}/{file}/{mib}".encode()).digest() * (1 << 15)


def output_name(file):
    return f"part-{file:04d}.bin"


def write_atomically(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(path + ".tmp", path)


def check_inputs(data, folder):
    with open(os.path.join(data, "inputs.json")) as f:
        manifest = json.load(f)  # name -> [size, sha256]
    for root, _, files in os.walk(folder):
        for name in files:
            digest, size = hashlib.sha256(), 0
            with open(os.path.join(root, name), "rb") as f:
                while chunk := f.read(1 << 20):
                    digest.update(chunk)
                    size += len(chunk)
            want = manifest.get(name)
            if want is None or [size, digest.hexdigest()] != want:
                sys.exit(f"input {name} is not whole: {size} bytes, sha256 {digest.hexdigest()}, expected {want}")
            print(f"input {name}: {size} bytes, whole", flush=True)


def main():
    data = os.environ["CHAOS_DIR"]
    rank = os.environ["SHOAL_RANK"]
    steps = int(os.environ.get("CHAOS_STEPS", "40"))
    checkpoint = os.path.join(data, f"checkpoint-{rank}")
    if "SHOAL_INPUT_TRAIN_DIR" in os.environ:
        check_inputs(data, os.environ["SHOAL_INPUT_TRAIN_DIR"])
    start = int(open(checkpoint).read()) if os.path.exists(checkpoint) else 0
    print(f"attempt {os.environ['SHOAL_ATTEMPT']} starts at step {start}", flush=True)
    for step in range(start, steps):
        time.sleep(0.15)
        write_atomically(checkpoint, str(step + 1))
        print(f"reporter progress: {(step + 1) / steps:.3f}", file=sys.stderr, flush=True)
    if "SHOAL_OUTPUT_MODEL_DIR" in os.environ:
        out = os.environ["SHOAL_OUTPUT_MODEL_DIR"]
        for file in range(int(os.environ.get("CHAOS_OUTPUT_FILES", "1"))):
            with open(os.path.join(out, output_name(file)), "wb") as f:
                for mib in range(int(os.environ.get("CHAOS_OUTPUT_MB", "1"))):
                    f.write(output_block(int(rank), file, mib))
    write_atomically(os.path.join(data, f"output-{rank}"), f"done after {steps} steps, resumed from {start}\n")


if __name__ == "__main__":
    main()
