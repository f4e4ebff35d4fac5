#!/usr/bin/python3
"""Writes Fashion-MNIST (Debian's dataset-fashion-mnist) as LMDB databases of Caffe Datums,
the form Caffe's convert_mnist_data and CaffeOnSpark's LMDB source read, with keys
"%08d" in record order. Optionally pads the images to a larger square, repeats the
grey channel (3 channels, as CIFAR-10's nets expect) and writes the training set's mean
image as Caffe's compute_image_mean does (mean.binaryproto, a BlobProto).

    make_lmdb.py OUT_DIR [--train N] [--test N] [--size 32] [--channels 3] [--mean]

Needs mdb_load (Debian's lmdb-utils); writes OUT_DIR/train_lmdb and OUT_DIR/test_lmdb."""
import argparse
import gzip
import struct
import subprocess
import sys
from pathlib import Path

DATA = Path("/usr/share/datasets/fashion-mnist")


def varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(number: int, value) -> bytes:
    if isinstance(value, bytes):
        return varint(number << 3 | 2) + varint(len(value)) + value
    return varint(number << 3) + varint(value)


def datum(channels: int, height: int, width: int, pixels: bytes, label: int) -> bytes:
    return field(1, channels) + field(2, height) + field(3, width) + field(4, pixels) + field(5, label)


def read_idx(images: Path, labels: Path, count: int):
    with gzip.open(images) as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        n = min(n, count)
        pixels = f.read(n * rows * cols)
    with gzip.open(labels) as f:
        f.read(8)
        marks = f.read(n)
    return [(pixels[i * rows * cols:(i + 1) * rows * cols], marks[i]) for i in range(n)], rows, cols


def reshape(image: bytes, rows: int, cols: int, size: int, channels: int) -> bytes:
    top, left = (size - rows) // 2, (size - cols) // 2
    plane = bytearray(size * size)
    for y in range(rows):
        start = (top + y) * size + left
        plane[start:start + cols] = image[y * cols:(y + 1) * cols]
    return bytes(plane) * channels


def write_lmdb(path: Path, records):
    if path.exists():
        sys.exit(f"make_lmdb: {path} exists; remove it first")
    path.mkdir(parents=True)
    body, size = [], 0
    for i, value in enumerate(records):
        body += [" " + (b"%08d" % i).hex(), " " + value.hex()]
        size += len(value) + 64
    # The map must hold every page: half-full leaves and overflow pages take up to four
    # times the data; the file grows only as far as it is written.
    mapsize = (4 * size // 4096 + 256) * 4096
    lines = ["VERSION=3", "format=bytevalue", "type=btree", f"mapsize={mapsize}", "HEADER=END"] + body
    lines.append("DATA=END")
    subprocess.run(["mdb_load", "-f", "/dev/stdin", str(path)], input=("\n".join(lines) + "\n").encode(), check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", type=Path)
    ap.add_argument("--train", type=int, default=60000, help="training images (default: all 60,000)")
    ap.add_argument("--test", type=int, default=10000, help="test images (default: all 10,000)")
    ap.add_argument("--size", type=int, default=28, help="pad the 28 x 28 images to this size")
    ap.add_argument("--channels", type=int, default=1, choices=[1, 3])
    ap.add_argument("--mean", action="store_true", help="write OUT/mean.binaryproto of the training images")
    args = ap.parse_args()
    if args.size < 28:
        sys.exit("make_lmdb: --size must be at least 28")
    for part, count in (("train", args.train), ("t10k", args.test)):
        images, rows, cols = read_idx(DATA / f"{part}-images-idx3-ubyte.gz", DATA / f"{part}-labels-idx1-ubyte.gz", count)
        shaped = [reshape(img, rows, cols, args.size, args.channels) for img, _ in images]
        name = "train_lmdb" if part == "train" else "test_lmdb"
        write_lmdb(args.out / name, (datum(args.channels, args.size, args.size, px, label)
                                     for px, (_, label) in zip(shaped, images)))
        print(f"make_lmdb: {len(shaped)} images -> {args.out / name}")
        if args.mean and part == "train":
            total = [0] * len(shaped[0])
            for px in shaped:
                for j, v in enumerate(px):
                    total[j] += v
            mean = struct.pack(f"<{len(total)}f", *(t / len(shaped) for t in total))
            blob = field(1, 1) + field(2, args.channels) + field(3, args.size) + field(4, args.size) + field(5, mean)
            (args.out / "mean.binaryproto").write_bytes(blob)
            print(f"make_lmdb: mean image -> {args.out / 'mean.binaryproto'}")


if __name__ == "__main__":
    main()
