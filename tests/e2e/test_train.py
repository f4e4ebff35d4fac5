"""`shoal train`: Caffe prototxt nets trained on LibTorch across workers. A 2-worker Shoal
job trains LeNet on Fashion-MNIST to >= 85% and writes features; resuming from a snapshot
continues the same trajectory (1 and 2 workers); 2 workers x 2 devices end where 1 worker x 4
devices do; -weights starts a net from a trained model by layer name; -features writes JSON
lines; models, outputs and data live on S3 as well; a bad prototxt is refused with its line."""
import json
import os
import re
import signal
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, SHOAL
from test_data import BUCKET, ceph, prefix_for  # noqa: F401 (ceph is a fixture)

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif("ASAN_OPTIONS" in os.environ or "TSAN_OPTIONS" in os.environ,
                                 reason="sanitizer builds leave shoal-train (LibTorch) out")]
EXAMPLE = REPO / "examples" / "lenet-fashion-mnist"
FMNIST = "/usr/share/datasets/fashion-mnist"

# A small net that uses most layer types: crops, mirrors, BatchNorm, Scale, Concat, Dropout.
SMALL_NET = f"""name: "small"
layer {{ name: "data" type: "Data" top: "data" top: "label" include {{ phase: TRAIN }}
  transform_param {{ scale: 0.015625 mean_value: 33 crop_size: 24 mirror: true }}
  data_param {{ source: "{FMNIST}/train-images-idx3-ubyte.gz" batch_size: 8 backend: IDX }} }}
layer {{ name: "data" type: "MemoryData" top: "data" top: "label" include {{ phase: TEST }}
  transform_param {{ scale: 0.015625 mean_value: 33 crop_size: 24 }}
  memory_data_param {{ source: "{FMNIST}/t10k-images-idx3-ubyte.gz" batch_size: 50 }} }}
layer {{ name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  param {{ lr_mult: 1 }} param {{ lr_mult: 2 decay_mult: 0 }}
  convolution_param {{ num_output: 8 kernel_size: 5 pad: 1 weight_filler {{ type: "msra" }} }} }}
layer {{ name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" }}
layer {{ name: "scale1" type: "Scale" bottom: "conv1" top: "conv1" scale_param {{ bias_term: true }} }}
layer {{ name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }}
layer {{ name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1" pooling_param {{ pool: MAX kernel_size: 3 stride: 2 }} }}
layer {{ name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param {{ num_output: 8 kernel_size: 3 weight_filler {{ type: "gaussian" std: 0.1 }} bias_filler {{ type: "constant" value: 0.1 }} }} }}
layer {{ name: "tanh2" type: "TanH" bottom: "conv2" top: "conv2" }}
layer {{ name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2" pooling_param {{ pool: AVE kernel_size: 2 stride: 2 }} }}
layer {{ name: "flat" type: "Flatten" bottom: "pool2" top: "flat" }}
layer {{ name: "ipa" type: "InnerProduct" bottom: "flat" top: "ipa" inner_product_param {{ num_output: 16 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "siga" type: "Sigmoid" bottom: "ipa" top: "ipa" }}
layer {{ name: "ipb" type: "InnerProduct" bottom: "flat" top: "ipb" inner_product_param {{ num_output: 16 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "cat" type: "Concat" bottom: "ipa" bottom: "ipb" top: "cat" }}
layer {{ name: "drop" type: "Dropout" bottom: "cat" top: "cat" dropout_param {{ dropout_ratio: 0.2 }} }}
layer {{ name: "ip" type: "InnerProduct" bottom: "cat" top: "ip" inner_product_param {{ num_output: 10 weight_filler {{ type: "xavier" }} }} }}
layer {{ name: "prob" type: "Softmax" bottom: "ip" top: "prob" include {{ phase: TEST }} }}
layer {{ name: "accuracy" type: "Accuracy" bottom: "ip" bottom: "label" top: "accuracy" include {{ phase: TEST }} }}
layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "ip" bottom: "label" top: "loss" }}
"""


def solver(net: Path, max_iter, snapshot=0, solver_type="SGD", policy='lr_policy: "multistep" gamma: 0.5 stepvalue: 60 stepvalue: 150'):
    momentum = "momentum: 0.9 momentum2: 0.99" if solver_type == "Adam" else "momentum: 0.9"
    base_lr = 0.002 if solver_type == "Adam" else 0.02
    return (f'net: "{net}"\nbase_lr: {base_lr}\n{momentum}\nweight_decay: 0.0005\n{policy}\n'
            f'display: 50\nmax_iter: {max_iter}\nsnapshot: {snapshot}\ntype: "{solver_type}"\nrandom_seed: 3\n')


def caffemodel_blobs(path: Path):
    """Every blob of a .caffemodel (NetParameter: layer=100 -> name=1, blobs=7 -> data=5)."""
    def fields(buf):
        i = 0
        while i < len(buf):
            key, i = varint(buf, i)
            num, wire = key >> 3, key & 7
            if wire == 2:
                n, i = varint(buf, i)
                yield num, buf[i:i + n]
                i += n
            elif wire == 0:
                _, i = varint(buf, i)
            elif wire == 5:
                i += 4
            elif wire == 1:
                i += 8
            else:
                raise ValueError(f"wire type {wire}")

    def varint(buf, i):
        shift = value = 0
        while True:
            b = buf[i]
            i += 1
            value |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return value, i

    blobs = {}
    for num, layer in fields(path.read_bytes()):
        if num != 100:
            continue
        name, index = None, 0
        for lnum, value in fields(layer):
            if lnum == 1:
                name = value.decode()
            elif lnum == 7:
                data = b"".join(v for bnum, v in fields(value) if bnum == 5)
                blobs[f"{name}/{index}"] = np.frombuffer(data, dtype="<f4")
                index += 1
    return blobs


def train(conf: Path, model, *flags, workers=1, devices=1, cwd=None, timeout=300, env=None):
    """Runs `shoal train` on `workers` workers by hand (a file rendezvous); returns rank 0's log.
    `model` is a path or a URI."""
    rdv = (model.parent if isinstance(model, Path) else cwd) / f"rdv-{Path(str(model)).stem}"
    rdv.mkdir(parents=True, exist_ok=True)
    procs = []
    for rank in range(workers):
        cluster = ["-clusterSize", str(workers), "-rank", str(rank), "-rendezvous", str(rdv)] if workers > 1 else []
        procs.append(subprocess.Popen(
            [SHOAL, "train", "-train", "-conf", str(conf), "-model", str(model), "-devices", str(devices),
             "-threads", "1", *cluster, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=cwd, env=env))
    logs = [p.communicate(timeout=timeout)[0] for p in procs]
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log
    return logs[0]


def assert_same_weights(a: Path, b: Path, rtol, atol):
    wa, wb = caffemodel_blobs(a), caffemodel_blobs(b)
    assert wa.keys() == wb.keys() and len(wa) == 15, (sorted(wa), sorted(wb))
    for key in wa:
        assert wa[key].shape == wb[key].shape, key
        np.testing.assert_allclose(wa[key], wb[key], rtol=rtol, atol=atol, err_msg=key)


def test_lenet_two_worker_job_reaches_85_percent_and_writes_features(shoal, tmp_path):
    shoal.start_server()
    out = tmp_path / "out"
    # The example as it is, with fewer iterations at a higher rate so that CI stays short.
    conf = tmp_path / "solver.prototxt"
    conf.write_text((EXAMPLE / "lenet_solver.prototxt").read_text()
                    .replace('net: "lenet_train_test.prototxt"', f'net: "{EXAMPLE}/lenet_train_test.prototxt"')
                    .replace("max_iter: 1000", "max_iter: 400").replace("base_lr: 0.01", "base_lr: 0.05")
                    .replace("snapshot: 500", "snapshot: 200"))
    command = (f"worker={SHOAL} train -train -test -conf {conf} -model {out}/lenet.caffemodel "
               f"-output {out}/test.json")
    _, job_id = shoal.run_job(EXAMPLE / "job.yaml", "--command", command, check=0, timeout=400)
    result = json.loads((out / "test.json").read_text())
    assert result["images"] == 10000, result
    assert result["accuracy"] >= 0.85, result
    log = shoal.logs(job_id, index=0)
    assert "2 worker(s) x 1 device(s)" in log, log
    assert "Optimization done: 400 iterations" in log, log
    assert (out / "lenet_iter_200.solverstate").exists() and (out / "lenet_iter_400.caffemodel").exists()

    # -features as a 2-worker job: every worker writes its half, one row per test image.
    features = tmp_path / "features"
    command = (f"worker={SHOAL} train -features ip2 -label label -outputFormat csv -conf {conf} "
               f"-model {out}/lenet.caffemodel -output {features}")
    shoal.run_job(EXAMPLE / "job.yaml", "--command", command, check=0, timeout=300)
    parts = sorted(features.glob("part-*.csv"))
    assert [p.name for p in parts] == ["part-00000.csv", "part-00001.csv"]
    rows = [line for p in parts for line in p.read_text().splitlines()[1:]]
    assert len(rows) == 10000
    assert sorted(int(r.split(",")[0]) for r in rows) == list(range(10000))
    first = rows[0].split(",")
    assert len(first[1].split()) == 10 and first[2] in {str(c) for c in range(10)}, rows[0]


@pytest.mark.parametrize("workers,solver_type", [(1, "SGD"), (2, "Adam")])
def test_resume_from_a_snapshot_continues_the_same_trajectory(tmp_path, workers, solver_type):
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    straight, first, resumed = (tmp_path / d for d in ("straight", "first", "resumed"))
    (tmp_path / "s200.prototxt").write_text(solver(net, 200, 0, solver_type))
    (tmp_path / "s100.prototxt").write_text(solver(net, 100, 0, solver_type))
    train(tmp_path / "s200.prototxt", straight / "m.caffemodel", workers=workers)
    log = train(tmp_path / "s100.prototxt", first / "m.caffemodel", workers=workers)
    assert "Snapshotting to" in log and (first / "m_iter_100.solverstate").exists(), log
    log = train(tmp_path / "s200.prototxt", resumed / "m.caffemodel", "-snapshot",
                str(first / "m_iter_100.solverstate"), workers=workers)
    assert "Resuming from" in log and "at iteration 100" in log, log
    assert "Optimization done: 100 iterations" in log, log
    assert_same_weights(straight / "m.caffemodel", resumed / "m.caffemodel", rtol=1e-5, atol=1e-6)


def test_two_workers_by_two_devices_match_one_worker_by_four(tmp_path):
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(net, 100, solver_type="Nesterov", policy='lr_policy: "inv" gamma: 0.001 power: 0.75'))
    # -checkReplicas 1: every replica of every worker is compared after every step.
    log = train(conf, tmp_path / "a" / "m.caffemodel", "-checkReplicas", "1", workers=2, devices=2)
    assert "2 worker(s) x 2 device(s), batch 8 per replica (32 per iteration)" in log, log
    log = train(conf, tmp_path / "b" / "m.caffemodel", "-checkReplicas", "1", workers=1, devices=4)
    assert "1 worker(s) x 4 device(s), batch 8 per replica (32 per iteration)" in log, log
    assert_same_weights(tmp_path / "a" / "m.caffemodel", tmp_path / "b" / "m.caffemodel", rtol=1e-3, atol=1e-4)
    # ...and a different split of the data (1 x 2) does not: the check can fail.
    log = train(conf, tmp_path / "c" / "m.caffemodel", workers=1, devices=2)
    with pytest.raises(AssertionError):
        assert_same_weights(tmp_path / "a" / "m.caffemodel", tmp_path / "c" / "m.caffemodel", rtol=1e-3, atol=1e-4)


def test_two_workers_summing_while_backward_runs_match_one_worker_by_two_byte_for_byte(tmp_path):
    """2 workers x 1 device sum their gradients in buckets during the backward pass (the
    LeNet-sized net has three); 1 worker x 2 devices sums its replicas after it. Each
    element is the same a + b, so the models are the same bytes."""
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(EXAMPLE / "lenet_train_test.prototxt", 40, 0))
    log = train(conf, tmp_path / "a" / "m.caffemodel", workers=2)
    assert "gradients summed across workers in 3 bucket(s) as the backward pass produces them" in log, log
    log = train(conf, tmp_path / "b" / "m.caffemodel", workers=1, devices=2)
    assert "bucket" not in log, log
    assert (tmp_path / "a" / "m.caffemodel").read_bytes() == (tmp_path / "b" / "m.caffemodel").read_bytes()


@pytest.mark.parametrize("net_text,where,what", [
    ('layer {\n  name: "d" type: "Data" top: "data" top: "label"\n  data_param { source: "x" batch_size: 1 }\n}\n'
     'layer {\n  name: "py"\n  type: "Python"\n  bottom: "data" top: "n"\n  python_param { module: "m" layer: "L" }\n}\n',
     "net.prototxt:7:", "'Python'"),
    ('layer {\n  name: "d" type: "Data" top: "data"\n  data_param { source: "x" batch_size: 1\n    shuffle: true }\n}\n',
     "net.prototxt:4:", "shuffle"),
], ids=["unsupported layer", "unknown field"])
def test_bad_prototxt_is_refused_with_its_line(tmp_path, net_text, where, what):
    (tmp_path / "net.prototxt").write_text(net_text)
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(tmp_path / "net.prototxt", 10))
    result = subprocess.run([SHOAL, "train", "-train", "-conf", str(conf), "-model", str(tmp_path / "m")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert where in result.stderr and what in result.stderr, result.stderr
    assert not (tmp_path / "m").exists()


def small_solver(tmp_path, net_text=SMALL_NET, name="small", max_iter=20, base_lr=None):
    net = tmp_path / f"{name}.prototxt"
    net.write_text(net_text)
    conf = tmp_path / f"{name}_solver.prototxt"
    text = solver(net, max_iter)
    conf.write_text(text if base_lr is None else text.replace("base_lr: 0.02", f"base_lr: {base_lr}"))
    return conf


def test_weights_start_a_net_from_a_trained_model_layer_by_layer_name(tmp_path):
    trained = tmp_path / "trained.caffemodel"
    train(small_solver(tmp_path), trained)
    # The same net with its last layer renamed, trained one step at a vanishing rate: what it
    # ends with is what it started from.
    renamed = SMALL_NET.replace('name: "ip" type', 'name: "ip_new" type')
    assert renamed != SMALL_NET
    tuned = tmp_path / "tuned.caffemodel"
    train(small_solver(tmp_path, renamed, "renamed", max_iter=1, base_lr="1e-30"), tuned, "-weights", str(trained))
    before, after = caffemodel_blobs(trained), caffemodel_blobs(tuned)
    copied = [k for k in before if not k.startswith(("bn1/", "ip/"))]  # BatchNorm's statistics move in a forward pass
    assert len(copied) == 10, copied
    for key in copied:
        np.testing.assert_allclose(after[key], before[key], rtol=1e-6, atol=1e-9, err_msg=key)
    assert "ip_new/0" in after and after["ip_new/0"].shape == before["ip/0"].shape
    assert not np.allclose(after["ip_new/0"], before["ip/0"]), "a layer of another name starts from its filler"


def test_features_as_json_lines_one_per_test_image(tmp_path):
    conf = small_solver(tmp_path)
    model = tmp_path / "small.caffemodel"
    train(conf, model)
    out = tmp_path / "features"
    result = subprocess.run([SHOAL, "train", "-features", "ip,accuracy", "-label", "label", "-outputFormat", "json",
                             "-conf", str(conf), "-model", str(model), "-output", str(out), "-threads", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [json.loads(line) for line in (out / "part-00000.json").read_text().splitlines()]
    assert len(rows) == 10000
    assert sorted(int(r["SampleID"]) for r in rows) == list(range(10000))
    assert all(len(r["ip"]) == 10 and r["label"] in range(10) for r in rows[:100]), rows[0]
    # accuracy is a scalar per batch (50 images): each image's row carries its batch's.
    for batch in range(0, 10000, 50):
        accuracies = {tuple(r["accuracy"]) for r in rows[batch:batch + 50]}
        assert len(accuracies) == 1 and 0 <= next(iter(accuracies))[0] <= 1, (batch, accuracies)


def test_models_outputs_and_data_on_s3(ceph, tmp_path, request):
    env, s3 = ceph
    prefix = prefix_for(request)
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                 "t10k-labels-idx1-ubyte.gz"):
        s3.put(f"{prefix}/data/{name}", Path(FMNIST, name).read_bytes())
    data = f"s3://{BUCKET}/{prefix}/data"
    net = SMALL_NET.replace(f"{FMNIST}/", f"{data}/")
    assert net.count(data) == 2
    conf = small_solver(tmp_path, net, "on-s3")
    model = f"s3://{BUCKET}/{prefix}/model/small.caffemodel"
    run_env = dict(os.environ, **env)
    train(conf, model, cwd=tmp_path, env=run_env)
    assert s3.get(f"{prefix}/model/small.caffemodel"), "the model was written to S3"
    result = subprocess.run([SHOAL, "train", "-test", "-conf", str(conf), "-model", model,
                             "-output", f"s3://{BUCKET}/{prefix}/test.json", "-threads", "1"],
                            capture_output=True, text=True, timeout=300, env=run_env)
    assert result.returncode == 0, result.stdout + result.stderr
    body = s3.get(f"{prefix}/test.json")
    assert body and json.loads(body)["images"] == 10000, body


# Caffe's own schema of a .solverstate (caffe/src/caffe/proto/caffe.proto), to read Shoal's
# snapshots as Caffe reads them and to write states as Caffe writes them.
CAFFE_SOLVERSTATE_PROTO = """syntax = "proto2";
package caffe;
message BlobShape { repeated int64 dim = 1 [packed = true]; }
message BlobProto {
  optional BlobShape shape = 7;
  repeated float data = 5 [packed = true];
  repeated float diff = 6 [packed = true];
  repeated double double_data = 8 [packed = true];
  repeated double double_diff = 9 [packed = true];
  optional int32 num = 1 [default = 0];
  optional int32 channels = 2 [default = 0];
  optional int32 height = 3 [default = 0];
  optional int32 width = 4 [default = 0];
}
message SolverState {
  optional int32 iter = 1;
  optional string learned_net = 2;
  repeated BlobProto history = 3;
  optional int32 current_step = 4 [default = 0];
}
"""


def caffe_state(tmp_path: Path, mode: str, data: bytes) -> bytes:
    """protoc --decode / --encode of a caffe.SolverState with Caffe's schema."""
    proto = tmp_path / "caffe_solverstate.proto"
    proto.write_text(CAFFE_SOLVERSTATE_PROTO)
    return subprocess.run(["protoc", f"--{mode}=caffe.SolverState", "-I", str(tmp_path), str(proto)],
                          input=data, capture_output=True, check=True).stdout


def history_shapes(state_text: str):
    """The dims of every history blob of a decoded state, in order."""
    blobs = re.findall(r"^history \{\n(.*?)^\}", state_text, re.S | re.M)
    return [[int(d) for d in re.findall(r"dim: (\d+)", b)] for b in blobs]


def solver_of_type(net: Path, max_iter, solver_type):
    """solver(), with Caffe's conditions for each type: no momentum for AdaGrad and RMSProp."""
    text = solver(net, max_iter, 0, solver_type)
    if solver_type in ("AdaGrad", "RMSProp"):
        text = text.replace("momentum: 0.9", "rms_decay: 0.95" if solver_type == "RMSProp" else "")
    return text


@pytest.mark.parametrize("solver_type,sets", [("SGD", 1), ("Adam", 2), ("AdaDelta", 2), ("AdaGrad", 1), ("RMSProp", 1)])
def test_snapshots_are_caffes_solverstate_and_a_caffe_state_resumes(tmp_path, solver_type, sets):
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    straight, first, elsewhere, caffe = (tmp_path / d for d in ("straight", "first", "elsewhere", "caffe"))
    (tmp_path / "s200.prototxt").write_text(solver_of_type(net, 200, solver_type))
    (tmp_path / "s100.prototxt").write_text(solver_of_type(net, 100, solver_type))
    train(tmp_path / "s200.prototxt", straight / "m.caffemodel")
    log = train(tmp_path / "s100.prototxt", first / "m.caffemodel")
    model = first / "m_iter_100.caffemodel"
    assert f"Snapshotting to binary proto file {model}" in log, log
    assert f"Snapshotting solver state to binary proto file {first / 'm_iter_100.solverstate'}" in log, log
    # As Caffe reads it: one history blob per learnable blob, with its shape (Adam: all first
    # moments, then all second moments), and learned_net the model's path.
    text = caffe_state(tmp_path, "decode", (first / "m_iter_100.solverstate").read_bytes()).decode()
    assert "iter: 100\n" in text and f'learned_net: "{model}"\n' in text and "current_step: 1\n" in text, text[:300]
    blobs = caffemodel_blobs(model)
    shapes = history_shapes(text)
    assert len(shapes) == sets * len(blobs) == sets * 15, len(shapes)
    for shape, (name, values) in zip(shapes, list(blobs.items()) * sets):
        assert int(np.prod(shape)) == values.size, (name, shape)
    # A state as Caffe writes it (no Shoal data position), its model moved elsewhere: resumes
    # on the same trajectory.
    elsewhere.mkdir()
    caffe.mkdir()
    (elsewhere / "w.caffemodel").write_bytes(model.read_bytes())
    caffe_text = re.sub(r"^1000 \{.*?^\}\n", "", text, flags=re.S | re.M)
    assert caffe_text != text and "\n1000 {" not in caffe_text
    caffe_text = caffe_text.replace(f'learned_net: "{model}"', f'learned_net: "{elsewhere / "w.caffemodel"}"')
    (caffe / "c_iter_100.solverstate").write_bytes(caffe_state(tmp_path, "encode", caffe_text.encode()))
    log = train(tmp_path / "s200.prototxt", caffe / "m.caffemodel", "-snapshot", str(caffe / "c_iter_100.solverstate"))
    assert "Resuming from" in log and "at iteration 100" in log and "holds no data position" in log, log
    assert_same_weights(straight / "m.caffemodel", caffe / "m.caffemodel", rtol=1e-5, atol=1e-6)


def parse_caffe_log(text: str, year=2026):
    """Caffe's tools/extra/parse_log.py (and extract_seconds.py), line by line: the train and
    test rows it would write to its CSV files."""
    regex_iteration = re.compile(r"Iteration (\d+)")
    regex_train_output = re.compile(r"Train net output #(\d+): (\S+) = ([\.\deE+-]+)")
    regex_test_output = re.compile(r"Test net output #(\d+): (\S+) = ([\.\deE+-]+)")
    regex_learning_rate = re.compile(r"lr = ([-+]?[0-9]*\.?[0-9]+([eE]?[-+]?[0-9]+)?)")

    def when(line):
        import datetime
        line = line.strip().split()
        month, day = int(line[0][1:3]), int(line[0][3:5])
        timestamp = line[1]
        pos = timestamp.rfind(".")
        hour, minute, second = (int(x) for x in timestamp[:pos].split(":"))
        return datetime.datetime(year, month, day, hour, minute, second, int(timestamp[pos + 1:]))

    lines = text.splitlines()
    start = when(next(line for line in lines if "Solving" in line))
    iteration, learning_rate = -1, float("nan")
    rows = {"train": [], "test": []}
    current = {"train": None, "test": None}
    for line in lines:
        m = regex_iteration.search(line)
        if m:
            iteration = float(m.group(1))
        if iteration == -1:
            continue
        try:
            seconds = (when(line) - start).total_seconds()
        except ValueError:
            continue
        m = regex_learning_rate.search(line)
        if m:
            learning_rate = float(m.group(1))
        for kind, regex in (("train", regex_train_output), ("test", regex_test_output)):
            m = regex.search(line)
            row = current[kind]
            if m:
                if not row or row["NumIters"] != iteration:
                    if row:
                        rows[kind].append(row)
                    row = {"NumIters": iteration, "Seconds": seconds, "LearningRate": learning_rate}
                row[m.group(2)] = float(m.group(3))
            if row and rows[kind] and len(row) == len(rows[kind][0]):
                rows[kind].append(row)
                row = None
            current[kind] = row
    return rows


def test_caffe_log_lines_parse_with_caffes_parse_log(tmp_path):
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(net, 6, policy='lr_policy: "multistep" gamma: 0.5 stepvalue: 2 stepvalue: 4')
                    .replace("display: 50", "display: 1\naverage_loss: 3\ntest_interval: 3\ntest_iter: 2"))
    log = train(conf, tmp_path / "m.caffemodel")
    glog = r"I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [a-z_]+\.cpp:\d+\] "
    # The rate printed for iteration N is iteration N's (Caffe prints before the update).
    rates = {int(n): float(r) for n, r in re.findall(glog + r"Iteration (\d+), lr = (\S+)", log)}
    assert rates == {0: 0.02, 1: 0.02, 2: 0.01, 3: 0.01, 4: 0.005, 5: 0.005}, log
    # The displayed loss is the mean of the last average_loss (3) iterations' losses.
    losses = {int(n): float(v) for n, v in re.findall(glog + r"Iteration (\d+) \([^)]*iter/s, [^)]*s/1 iters\), loss = (\S+)", log)}
    outputs = [float(v) for v in re.findall(glog + r"    Train net output #0: loss = (\S+) \(\* 1 = \S+ loss\)", log)]
    assert sorted(losses) == list(range(6)) and len(outputs) == 6, log
    for n in range(6):
        window = outputs[max(0, n - 2):n + 1]
        assert losses[n] == pytest.approx(sum(window) / len(window), rel=1e-5), (n, losses, outputs)
    assert re.search(glog + r"Iteration 3, Testing net \(#0\)\n", log), log
    assert re.search(glog + r"    Test net output #0: accuracy = \S+\n.*" + r"    Test net output #1: loss = \S+ \(\* 1 = \S+ loss\)", log), log
    assert re.search(glog + r"Optimization Done\.", log), log
    assert "reporter metric: loss=" in log and "reporter metric: test_accuracy=" in log, log
    rows = parse_caffe_log(log)
    assert [r["NumIters"] for r in rows["train"]] == [0, 1, 2, 3, 4, 5], rows["train"]
    assert all("loss" in r and r["Seconds"] >= 0 for r in rows["train"]), rows["train"]
    assert [r["NumIters"] for r in rows["test"]] == [0, 3, 6], rows["test"]
    assert all(0 <= r["accuracy"] <= 1 and r["loss"] > 0 for r in rows["test"]), rows["test"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_snapshots_then_exits_128_plus_it(tmp_path, sig):
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(net, 1000000).replace("display: 50", "display: 10"))
    out = tmp_path / "out"
    proc = subprocess.Popen([SHOAL, "train", "-train", "-conf", str(conf), "-model", str(out / "m.caffemodel"),
                             "-threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if re.search(r"\] Iteration 20 \(", line):
            proc.send_signal(sig)
            break
    rest = proc.communicate(timeout=120)[0]
    log = "".join(seen) + rest
    assert proc.returncode == 128 + sig, log
    assert "Optimization stopped early." in log and f"stopped by {sig.name} at iteration" in log, log
    stopped_at = int(re.search(r"stopped by \S+ at iteration (\d+)", log).group(1))
    assert stopped_at > 20
    assert (out / f"m_iter_{stopped_at}.caffemodel").exists() and (out / f"m_iter_{stopped_at}.solverstate").exists(), log


def test_a_signal_to_one_worker_stops_both_and_each_exits_as_signalled(tmp_path):
    """SIGTERM to rank 1 only (a preemption whose signal reaches one worker first): both
    stop at the same iteration, and rank 0, never signalled itself, names the signal,
    says it went to another worker and exits 143 too."""
    net = tmp_path / "small.prototxt"
    net.write_text(SMALL_NET)
    conf = tmp_path / "solver.prototxt"
    conf.write_text(solver(net, 1000000).replace("display: 50", "display: 10"))
    rdv = tmp_path / "rdv"
    rdv.mkdir()
    procs = [subprocess.Popen([SHOAL, "train", "-train", "-conf", str(conf), "-model", str(tmp_path / "out" / "m.caffemodel"),
                               "-threads", "1", "-clusterSize", "2", "-rank", str(rank), "-rendezvous", str(rdv)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in (0, 1)]
    seen = []
    for line in procs[0].stdout:
        seen.append(line)
        if re.search(r"\] Iteration 20 \(", line):
            procs[1].send_signal(signal.SIGTERM)
            break
    logs = ["".join(seen) + procs[0].communicate(timeout=120)[0], procs[1].communicate(timeout=120)[0]]
    assert [p.returncode for p in procs] == [143, 143], logs
    leader = re.search(r"stopped by SIGTERM at iteration (\d+) \(sent to another worker\), after its snapshot", logs[0])
    signalled = re.search(r"stopped by SIGTERM at iteration (\d+), after its snapshot", logs[1])
    assert leader and signalled and leader.group(1) == signalled.group(1), logs


def test_file_uris_are_paths_and_bad_ones_are_refused(tmp_path):
    conf = small_solver(tmp_path, max_iter=3)
    train(conf, f"file:{tmp_path}/out/m.caffemodel", cwd=tmp_path)
    assert (tmp_path / "out" / "m.caffemodel").exists() and (tmp_path / "out" / "m_iter_3.solverstate").exists()
    assert not (tmp_path / "file:").exists()
    train(conf, f"file://{tmp_path}/out3/m.caffemodel", cwd=tmp_path)
    assert (tmp_path / "out3" / "m.caffemodel").exists()
    for flag, uri, why in [("-model", "file:out/m.caffemodel", "is not an absolute file URI"),
                           ("-weights", f"file://nas1{tmp_path}/m.caffemodel", "names a file on host 'nas1'")]:
        model = ["-model", str(tmp_path / "m2.caffemodel")] if flag != "-model" else []
        result = subprocess.run([SHOAL, "train", "-train", "-conf", str(conf), flag, uri, *model],
                                capture_output=True, text=True, timeout=60, cwd=tmp_path)
        assert result.returncode == 2 and why in result.stderr and uri in result.stderr, result.stderr


def test_features_of_scalar_blobs_accuracy_and_loss(tmp_path):
    conf = small_solver(tmp_path, max_iter=5)
    model = tmp_path / "small.caffemodel"
    train(conf, model)
    out = tmp_path / "features"
    result = subprocess.run([SHOAL, "train", "-features", "accuracy,loss", "-label", "label", "-conf", str(conf),
                             "-model", str(model), "-output", str(out), "-threads", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [json.loads(line) for line in (out / "part-00000.json").read_text().splitlines()]
    assert len(rows) == 10000
    for batch in range(0, 10000, 50):  # a scalar of a batch (50 images) on each of its rows
        chunk = rows[batch:batch + 50]
        assert len({(r["accuracy"][0], r["loss"][0]) for r in chunk}) == 1, batch
        assert 0 <= chunk[0]["accuracy"][0] <= 1 and chunk[0]["loss"][0] > 0 and chunk[0]["label"] in range(10)


def test_caffeonsparks_command_line(tmp_path):
    conf = small_solver(tmp_path, max_iter=2)
    train(conf, tmp_path / "m.caffemodel", "-connection", "ethernet", "-persistent", "-lmdb_partitions", "1")

    def refused(*flags, env=None):
        result = subprocess.run([SHOAL, "train", "-train", "-conf", str(conf), "-model", str(tmp_path / "x.caffemodel"),
                                 *flags], capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode == 2, result.stderr
        return result.stderr

    assert "collectives run over TCP" in refused("-connection", "infiniband")
    assert "-resize resizes encoded images" in refused("-resize")
    assert "conversion tools" in refused("-imageRoot", str(tmp_path))
    assert "give -lmdb_partitions 1" in refused("-lmdb_partitions", "3")
    assert "needs -rank R and -rendezvous DIR" in refused("-clusterSize", "2")
    # In a Shoal job (its variables) -clusterSize needs no -rank or -rendezvous, and must be
    # the job's worker count.
    job = dict(os.environ, SHOAL_TRAIN_MASTER="127.0.0.1:1", SHOAL_WORLD_SIZE="1", SHOAL_RANK="0", SHOAL_JOB_ID="j")
    assert "does not match this Shoal job's 1 workers: give -clusterSize 1" in refused("-clusterSize", "2", env=job)
    assert "in a Shoal job the job places its workers" in refused("-clusterSize", "1", "-rank", "0", env=job)
    train(conf, tmp_path / "job.caffemodel", "-clusterSize", "1", env=job)


def test_shared_blobs_have_one_history_and_every_layer_keeps_its_blobs(tmp_path):
    from test_train_caffe_files import SIAMESE, write_pairs
    write_pairs(tmp_path / "pairs_lmdb", 256)
    (tmp_path / "siamese.prototxt").write_text(SIAMESE % (tmp_path / "pairs_lmdb"))
    conf = tmp_path / "solver.prototxt"
    conf.write_text('net: "siamese.prototxt"\nbase_lr: 0.01\nmomentum: 0.9\nlr_policy: "fixed"\n'
                    'display: 5\nmax_iter: 10\nrandom_seed: 2\n')
    log = train(conf, tmp_path / "out" / "s.caffemodel")
    # Caffe's .caffemodel holds every layer's blobs, shared ones too; its history one blob per
    # owner (Caffe's learnable_params_): the first tower's six.
    blobs = caffemodel_blobs(tmp_path / "out" / "s_iter_10.caffemodel")
    assert len(blobs) == 12 and np.array_equal(blobs["conv1/0"], blobs["conv1_p/0"]), sorted(blobs)
    text = caffe_state(tmp_path, "decode", (tmp_path / "out" / "s_iter_10.solverstate").read_bytes()).decode()
    shapes = history_shapes(text)
    owners = [k for k in blobs if not k.split("/")[0].endswith("_p")]
    assert len(shapes) == len(owners) == 6, (shapes, owners)
    for shape, name in zip(shapes, owners):
        assert int(np.prod(shape)) == blobs[name].size, (name, shape)
    conf.write_text(conf.read_text().replace("max_iter: 10", "max_iter: 15"))
    log = train(conf, tmp_path / "more" / "s.caffemodel", "-snapshot", str(tmp_path / "out" / "s_iter_10.solverstate"))
    assert "at iteration 10" in log, log


def test_cluster_size_in_a_shoal_job_needs_no_rank_and_must_match(shoal, tmp_path):
    shoal.start_server()
    conf = small_solver(tmp_path, max_iter=10)
    out = tmp_path / "out"
    command = (f"worker={SHOAL} train -train -conf {conf} -model {out}/m.caffemodel -clusterSize 2 "
               f"-connection ethernet -persistent -threads 1")
    _, job_id = shoal.run_job(EXAMPLE / "job.yaml", "--command", command, check=0, timeout=300)
    log = shoal.logs(job_id, index=0)
    assert "2 worker(s) x 1 device(s)" in log and "Optimization Done." in log, log
    result, job_id = shoal.run_job(EXAMPLE / "job.yaml", "--command", command.replace("-clusterSize 2", "-clusterSize 3"),
                                   timeout=300)
    assert result.returncode != 0, result.stderr
    # Each worker refuses; the first to fail may stop the other before it writes its own.
    log = shoal.logs(job_id, index=0) + shoal.logs(job_id, index=1)
    assert "-clusterSize 3 does not match this Shoal job's 2 workers: give -clusterSize 2" in log, log


def test_snapshot_with_weights_takes_the_weights_from_weights_as_caffeonspark_does(tmp_path):
    conf = small_solver(tmp_path, max_iter=4)
    out = tmp_path / "out"
    train(conf, out / "m.caffemodel")
    # The state alone, its model gone from beside it and from where learned_net says.
    state = tmp_path / "state" / "m_iter_4.solverstate"
    state.parent.mkdir()
    state.write_bytes((out / "m_iter_4.solverstate").read_bytes())
    weights = tmp_path / "w.caffemodel"
    (out / "m_iter_4.caffemodel").rename(weights)
    more = small_solver(tmp_path, name="more", max_iter=6)
    result = subprocess.run([SHOAL, "train", "-train", "-conf", str(more), "-model", str(tmp_path / "x.caffemodel"),
                             "-snapshot", str(state)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert f"learned_net {out / 'm_iter_4.caffemodel'}" in result.stderr, result.stderr
    log = train(more, tmp_path / "y.caffemodel", "-snapshot", str(state), "-weights", str(weights))
    assert f"from {weights}" in log and "at iteration 4" in log, log
