"""`shoal train` on Caffe's and CaffeOnSpark's kinds of files: CaffeOnSpark's LeNet and
CIFAR-10 quick nets (MemoryData with source_class, share_in_parallel, file: URIs, a mean
image) train from LMDBs of Caffe Datums that examples/caffeonspark-mnist/make_lmdb.py
writes; a siamese net whose towers share weights by name trains with ContrastiveLoss and
saves one set of weights under both towers; a file with several problems names them all
in one run."""
import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, SHOAL
from test_train import caffemodel_blobs

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif("ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ,
                                 reason="sanitizer builds leave shoal-train (LibTorch) out")]
EXAMPLE = REPO / "examples" / "caffeonspark-mnist"
MAKE_LMDB = EXAMPLE / "make_lmdb.py"


def make_lmdb(out: Path, *args):
    subprocess.run(["/usr/bin/python3", str(MAKE_LMDB), str(out), *args], check=True, capture_output=True, timeout=120)


def example_files(tmp_path: Path, net: str, solver: str, data_root: Path, **solver_changes):
    """The example's net and solver, with its file:/tmp/shoal-caffeonspark sources pointing
    at `data_root` and the solver's fields changed as given; returns the solver's path."""
    text = (EXAMPLE / net).read_text().replace("file:/tmp/shoal-caffeonspark", f"file:{data_root}")
    (tmp_path / net).write_text(text)
    lines = []
    for line in (EXAMPLE / solver).read_text().splitlines():
        key = line.split(":")[0].strip()
        lines.append(f"{key}: {solver_changes.pop(key)}" if key in solver_changes else line)
    lines += [f"{k}: {v}" for k, v in solver_changes.items()]
    (tmp_path / solver).write_text("\n".join(lines) + "\n")
    return tmp_path / solver


def run_train(*args, cwd, timeout=600):
    result = subprocess.run([SHOAL, "train", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


def test_caffeonspark_lenet_files_train_from_lmdb_with_file_uris(tmp_path):
    data = tmp_path / "data"
    make_lmdb(data / "mnist", "--train", "6400", "--test", "1000")
    conf = example_files(tmp_path, "lenet_memory_train_test.prototxt", "lenet_memory_solver.prototxt", data,
                         max_iter=300, test_interval=300, display=100)
    out = tmp_path / "out"
    code, log = run_train("-train", "-test", "-conf", str(conf), "-model", f"file:{out}/lenet.caffemodel",
                          "-output", f"file://{out}/test.json", "-threads", "1", cwd=tmp_path)
    assert code == 0, log
    # file: URIs name absolute paths: nothing lands under ./file:
    assert not (tmp_path / "file:").exists()
    result = json.loads((out / "test.json").read_text())
    assert result["images"] == 1000 and result["accuracy"] > 0.65, result
    assert (out / "mnist_lenet_iter_300.caffemodel").exists() and (out / "mnist_lenet_iter_300.solverstate").exists()
    assert "Test net output #0: accuracy = " in log, log


def test_caffeonspark_cifar10_quick_subtracts_its_mean_file(tmp_path):
    data = tmp_path / "data"
    make_lmdb(data / "cifar", "--train", "3000", "--test", "500", "--size", "32", "--channels", "3", "--mean")
    conf = example_files(tmp_path, "cifar10_quick_train_test.prototxt", "cifar10_quick_solver.prototxt", data,
                         max_iter=150, test_interval=150, display=50, snapshot=100)
    out = tmp_path / "out"
    code, log = run_train("-train", "-test", "-conf", str(conf), "-model", f"file:{out}/cifar.caffemodel",
                          "-output", f"file:{out}/test.json", "-threads", "1", cwd=tmp_path)
    assert code == 0, log
    result = json.loads((out / "test.json").read_text())
    assert result["images"] == 500 and result["accuracy"] > 0.5, result
    # snapshot_format: HDF5 (as the solver says): Caffe's .h5 files, and a run resumes from them.
    for name in ("cifar10_quick_iter_100.caffemodel.h5", "cifar10_quick_iter_100.solverstate.h5"):
        assert (out / name).read_bytes()[:8] == b"\x89HDF\r\n\x1a\n", name
    assert f"Snapshotting to HDF5 file {out}/cifar10_quick_iter_100.caffemodel.h5" in log, log
    resumed = tmp_path / "resumed"
    code, log = run_train("-train", "-conf", str(conf), "-model", str(resumed / "cifar.caffemodel"), "-threads", "1",
                          "-snapshot", str(out / "cifar10_quick_iter_100.solverstate.h5"), cwd=tmp_path)
    assert code == 0 and "Resuming from" in log and "at iteration 100" in log, log
    assert sorted(p.name for p in resumed.iterdir()) == [
        "cifar.caffemodel", "cifar10_quick_iter_150.caffemodel.h5", "cifar10_quick_iter_150.solverstate.h5"]
    # A mean of other images (1 x 28 x 28) is refused by name, before any training.
    make_lmdb(data / "other", "--train", "10", "--test", "10", "--mean")
    (data / "cifar" / "mean.binaryproto").write_bytes((data / "other" / "mean.binaryproto").read_bytes())
    code, log = run_train("-train", "-conf", str(conf), "-model", str(out / "again.caffemodel"), cwd=tmp_path)
    assert code != 0 and "mean_file holds 784 values" in log, log
    assert not (out / "again.caffemodel").exists()


SIAMESE = """name: "siamese"
layer { name: "pairs" type: "Data" top: "pair_data" top: "sim" data_param { source: "%s" batch_size: 32 backend: LMDB }
  transform_param { scale: 0.00390625 } }
layer { name: "slice_pair" type: "Slice" bottom: "pair_data" top: "data" top: "data_p" slice_param { slice_dim: 1 slice_point: 1 } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1" param { name: "conv1_w" lr_mult: 1 } param { name: "conv1_b" lr_mult: 2 }
  convolution_param { num_output: 8 kernel_size: 5 stride: 2 weight_filler { type: "xavier" } } }
layer { name: "ip1" type: "InnerProduct" bottom: "conv1" top: "ip1" param { name: "ip1_w" lr_mult: 1 } param { name: "ip1_b" lr_mult: 2 }
  inner_product_param { num_output: 32 weight_filler { type: "xavier" } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "feat" type: "InnerProduct" bottom: "ip1" top: "feat" param { name: "feat_w" lr_mult: 1 } param { name: "feat_b" lr_mult: 2 }
  inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
layer { name: "conv1_p" type: "Convolution" bottom: "data_p" top: "conv1_p" param { name: "conv1_w" lr_mult: 1 } param { name: "conv1_b" lr_mult: 2 }
  convolution_param { num_output: 8 kernel_size: 5 stride: 2 weight_filler { type: "xavier" } } }
layer { name: "ip1_p" type: "InnerProduct" bottom: "conv1_p" top: "ip1_p" param { name: "ip1_w" lr_mult: 1 } param { name: "ip1_b" lr_mult: 2 }
  inner_product_param { num_output: 32 weight_filler { type: "xavier" } } }
layer { name: "relu1_p" type: "ReLU" bottom: "ip1_p" top: "ip1_p" }
layer { name: "feat_p" type: "InnerProduct" bottom: "ip1_p" top: "feat_p" param { name: "feat_w" lr_mult: 1 } param { name: "feat_b" lr_mult: 2 }
  inner_product_param { num_output: 2 weight_filler { type: "xavier" } } }
layer { name: "loss" type: "ContrastiveLoss" bottom: "feat" bottom: "feat_p" bottom: "sim" top: "loss" contrastive_loss_param { margin: 1 } }
"""


def write_pairs(path: Path, count: int):
    """An LMDB of Caffe's siamese pairs: 2-channel Datums (two Fashion-MNIST images), label 1
    when both show the same class, as Caffe's convert_mnist_siamese_data writes them."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_lmdb", MAKE_LMDB)
    ml = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ml)
    images, _, _ = ml.read_idx(ml.DATA / "train-images-idx3-ubyte.gz", ml.DATA / "train-labels-idx1-ubyte.gz", 2 * count)
    rng = np.random.default_rng(5)
    records = []
    for i in range(count):
        a = images[i]
        same = i % 2 == 0
        partner = next(b for b in rng.permutation(len(images)) if (images[b][1] == a[1]) == same)
        b = images[partner]
        records.append(ml.datum(2, 28, 28, a[0] + b[0], int(a[1] == b[1])))
    ml.write_lmdb(path, records)


def test_siamese_towers_share_weights_by_name_and_learn(tmp_path):
    write_pairs(tmp_path / "pairs_lmdb", 2048)
    (tmp_path / "siamese.prototxt").write_text(SIAMESE % (tmp_path / "pairs_lmdb"))
    conf = tmp_path / "solver.prototxt"
    conf.write_text('net: "siamese.prototxt"\nbase_lr: 0.01\nmomentum: 0.9\nweight_decay: 0.0000\nlr_policy: "fixed"\n'
                    'display: 20\nmax_iter: 200\nrandom_seed: 2\nsnapshot_after_train: false\n')
    code, log = run_train("-train", "-conf", str(conf), "-model", str(tmp_path / "siamese.caffemodel"), "-threads", "1",
                          cwd=tmp_path)
    assert code == 0, log
    # conv1 (8 x 1 x 5 x 5 + 8) + ip1 (32 x 8 x 12 x 12 + 32) + feat (2 x 32 + 2), once: the towers share them.
    assert f"{208 + 36896 + 66} parameters" in log, log
    losses = [float(line.split("loss = ")[1].split()[0]) for line in log.splitlines() if ", loss = " in line]
    assert len(losses) >= 5 and losses[-1] < 0.8 * losses[0], losses
    blobs = caffemodel_blobs(tmp_path / "siamese.caffemodel")
    for layer in ("conv1", "ip1", "feat"):
        for i in (0, 1):
            np.testing.assert_array_equal(blobs[f"{layer}/{i}"], blobs[f"{layer}_p/{i}"])


def test_every_problem_of_a_net_file_is_named_in_one_run(tmp_path):
    (tmp_path / "net.prototxt").write_text(
        'layer { name: "d" type: "Data" top: "data" top: "label" data_param { source: "x" batch_size: 4 rand_skip: 9 } }\n'
        'layer { name: "h5" type: "HDF5Data" top: "x" hdf5_data_param { source: "list.txt" batch_size: 4 } }\n'
        'layer { name: "sum" type: "Eltwise" bottom: "data" top: "s" }\n'
        'layer { name: "loss" type: "SoftmaxWithLoss" bottom: "s" bottom: "label" top: "loss" }\n')
    conf = tmp_path / "solver.prototxt"
    conf.write_text('net: "net.prototxt"\nbase_lr: 0.1\nmax_iter: 10\n')
    code, log = run_train("-train", "-conf", str(conf), "-model", str(tmp_path / "m.caffemodel"), cwd=tmp_path)
    assert code == 2, log
    assert "3 problems" in log, log
    assert "net.prototxt:1: rand_skip is not supported" in log, log
    assert "net.prototxt:2: layer 'h5' has type 'HDF5Data'" in log, log
    assert "net.prototxt:3: layer 'sum' (Eltwise) needs at least 2 bottoms" in log, log
    assert not (tmp_path / "m.caffemodel").exists()


AUTOENCODER = """name: "MNISTAutoencoder"
layer { name: "data" type: "Data" top: "data" include { phase: TRAIN }
  transform_param { scale: 0.0039215684 } data_param { source: "%(train)s" batch_size: 50 backend: IDX } }
layer { name: "data" type: "Data" top: "data" include { phase: TEST stage: "test-on-train" }
  transform_param { scale: 0.0039215684 } data_param { source: "%(train)s" batch_size: 50 backend: IDX } }
layer { name: "data" type: "Data" top: "data" include { phase: TEST stage: "test-on-test" }
  transform_param { scale: 0.0039215684 } data_param { source: "%(test)s" batch_size: 50 backend: IDX } }
layer { name: "flatdata" type: "Flatten" bottom: "data" top: "flatdata" }
layer { name: "encode1" type: "InnerProduct" bottom: "data" top: "encode1" param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 1 decay_mult: 0 }
  inner_product_param { num_output: 128 weight_filler { type: "gaussian" std: 1 sparse: 15 } bias_filler { type: "constant" value: 0 } } }
layer { name: "encode1neuron" type: "Sigmoid" bottom: "encode1" top: "encode1neuron" }
layer { name: "encode2" type: "InnerProduct" bottom: "encode1neuron" top: "encode2" param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 1 decay_mult: 0 }
  inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 1 sparse: 15 } bias_filler { type: "constant" value: 0 } } }
layer { name: "decode2" type: "InnerProduct" bottom: "encode2" top: "decode2" param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 1 decay_mult: 0 }
  inner_product_param { num_output: 128 weight_filler { type: "gaussian" std: 1 sparse: 15 } bias_filler { type: "constant" value: 0 } } }
layer { name: "decode2neuron" type: "Sigmoid" bottom: "decode2" top: "decode2neuron" }
layer { name: "decode1" type: "InnerProduct" bottom: "decode2neuron" top: "decode1" param { lr_mult: 1 decay_mult: 1 } param { lr_mult: 1 decay_mult: 0 }
  inner_product_param { num_output: 784 weight_filler { type: "gaussian" std: 1 sparse: 15 } bias_filler { type: "constant" value: 0 } } }
layer { name: "loss" type: "SigmoidCrossEntropyLoss" bottom: "decode1" bottom: "flatdata" top: "cross_entropy_loss" loss_weight: 1 }
layer { name: "decode1neuron" type: "Sigmoid" bottom: "decode1" top: "decode1neuron" }
layer { name: "loss" type: "EuclideanLoss" bottom: "decode1neuron" bottom: "flatdata" top: "l2_error" loss_weight: 0 }
"""

# The solvers of Caffe's examples/mnist/mnist_autoencoder_solver*.prototxt, shortened.
AUTOENCODER_SOLVERS = {
    "Nesterov": 'type: "Nesterov"\nbase_lr: 0.01\nlr_policy: "step"\ngamma: 0.1\nstepsize: 10000\nmomentum: 0.95\nweight_decay: 0.0005\n',
    "AdaGrad": 'type: "AdaGrad"\nbase_lr: 0.01\nlr_policy: "fixed"\nweight_decay: 0.0005\n',
    "AdaDelta": 'type: "AdaDelta"\nbase_lr: 1.0\nlr_policy: "fixed"\nmomentum: 0.95\ndelta: 1e-8\nweight_decay: 0.0005\n',
    "RMSProp": 'type: "RMSProp"\nbase_lr: 0.01\nlr_policy: "fixed"\nrms_decay: 0.98\nweight_decay: 0.0005\n',
}


@pytest.mark.parametrize("solver_type", sorted(AUTOENCODER_SOLVERS))
def test_autoencoder_with_two_staged_test_nets_learns_with_each_solver(tmp_path, solver_type):
    fmnist = "/usr/share/datasets/fashion-mnist"
    (tmp_path / "autoencoder.prototxt").write_text(AUTOENCODER % {
        "train": f"{fmnist}/train-images-idx3-ubyte.gz", "test": f"{fmnist}/t10k-images-idx3-ubyte.gz"})
    (tmp_path / "solver.prototxt").write_text(
        'net: "autoencoder.prototxt"\n'
        'test_state: { stage: "test-on-train" }\ntest_iter: 4\n'
        'test_state: { stage: "test-on-test" }\ntest_iter: 4\n'
        'test_interval: 100\ntest_compute_loss: true\ndisplay: 20\nmax_iter: 100\nrandom_seed: 4\n'
        'snapshot_after_train: false\n' + AUTOENCODER_SOLVERS[solver_type])
    code, log = run_train("-train", "-conf", "solver.prototxt", "-model", "ae.caffemodel", "-threads", "1", cwd=tmp_path)
    assert code == 0, log
    # Two test nets, each with the data layer of its stage, before and after training.
    assert log.count("Testing net (#0)") == 2 and log.count("Testing net (#1)") == 2, log
    assert "Test loss: " in log, log
    # A monitor (loss_weight 0) is shown without Caffe's "(* w = ... loss)".
    l2 = [line for line in log.splitlines() if "Test net output #1: l2_error = " in line]
    assert len(l2) == 4 and not any("(*" in line for line in l2), log
    losses = [float(line.split("loss = ")[1].split()[0]) for line in log.splitlines() if ", loss = " in line]
    assert len(losses) == 5 and losses[-1] < 0.9 * losses[0], (solver_type, losses)


def test_hdf5_snapshots_of_a_net_with_slashes_in_layer_names_are_refused_before_training(tmp_path):
    fmnist = "/usr/share/datasets/fashion-mnist"
    (tmp_path / "net.prototxt").write_text(
        f'layer {{ name: "data" type: "Data" top: "data" top: "label" data_param {{ source: "{fmnist}/train-images-idx3-ubyte.gz" batch_size: 8 backend: IDX }} }}\n'
        'layer { name: "inception_3a/1x1" type: "InnerProduct" bottom: "data" top: "ip" inner_product_param { num_output: 10 } }\n'
        'layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }\n')
    (tmp_path / "solver.prototxt").write_text('net: "net.prototxt"\nbase_lr: 0.1\nmax_iter: 10\nsnapshot_format: HDF5\n')
    code, log = run_train("-train", "-conf", "solver.prototxt", "-model", "m.caffemodel", cwd=tmp_path)
    assert code == 2, log
    assert "layer 'inception_3a/1x1' holds a '/'; use snapshot_format: BINARYPROTO" in log, log
    assert "Iteration 0" not in log and not (tmp_path / "m.caffemodel").exists()
