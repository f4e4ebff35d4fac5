"""`shoal train`: Caffe prototxt nets trained on LibTorch across workers. A 2-worker Shoal
job trains LeNet on Fashion-MNIST to >= 85% and writes features; resuming from a snapshot
continues the same trajectory (1 and 2 workers); 2 workers x 2 devices end where 1 worker x 4
devices do; -weights starts a net from a trained model by layer name; -features writes JSON
lines; models, outputs and data live on S3 as well; a bad prototxt is refused with its line."""
import json
import os
import re
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
