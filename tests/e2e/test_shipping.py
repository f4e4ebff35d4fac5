"""Files and archives shipped with a job, and side-by-side versions of one package."""
import tarfile
import zipfile

import pytest

from conftest import write_spec

pytestmark = pytest.mark.slow


def make_versions(tmp_path):
    """Two archives holding two versions of one small Python module, shoalver."""
    archives = {}
    for version, kind in (("1.0", "tar.gz"), ("2.0", "zip")):
        source = tmp_path / f"src-{version}" / "shoalver"
        source.mkdir(parents=True)
        (source / "__init__.py").write_text(f"VERSION = {version!r}\n")
        path = tmp_path / f"shoalver-{version}.{kind}"
        if kind == "zip":
            with zipfile.ZipFile(path, "w") as archive:
                archive.write(source / "__init__.py", "lib/shoalver/__init__.py")
        else:
            with tarfile.open(path, "w:gz") as archive:
                archive.add(source, "lib/shoalver")
        archives[version] = path
    return archives


def test_two_jobs_use_two_versions_of_one_package_side_by_side(shoal, tmp_path):
    shoal.start_server()
    archives = make_versions(tmp_path)
    (tmp_path / "settings.json").write_text('{"answer": 42}')
    ids = {}
    for version, archive in archives.items():
        spec = write_spec(tmp_path, f"""
name: uses-{version.replace('.', '-')}
files: [settings.json]
archives:
  - path: {archive.name}
    name: pkg
    prepend: {{PYTHONPATH: [lib]}}
roles:
  worker:
    instances: 2
    cpus: 0.25
    memory: 64M
    command: >-
      /usr/bin/python3 -c "import shoalver, json, os;
      print('shoalver', shoalver.VERSION, 'from', shoalver.__file__);
      print('answer', json.load(open(os.path.join(os.environ['SHOAL_TASK_DIR'], 'settings.json')))['answer'])"
""", f"job-{version}.yaml")
        ids[version] = shoal.submit(spec)
    for version, job_id in ids.items():
        assert shoal.run("wait", job_id).returncode == 0, shoal.status(job_id)
        for index in (0, 1):
            log = shoal.logs(job_id, index=index)
            assert f"shoalver {version} from {shoal.home}/jobs/{job_id}/attempt-1/worker-{index}/pkg/lib" in log, log
            assert "answer 42" in log


@pytest.mark.parametrize("label,archive,message", [
    ("missing", None, "is not a readable file"),
    ("not an archive", "plain.txt", "is not an archive"),
])
def test_bad_archives_are_refused_before_anything_starts(shoal, tmp_path, label, archive, message):
    if archive:
        (tmp_path / archive).write_text("just text, not an archive\n")
    spec = write_spec(tmp_path, f"""
archives: [{{path: {archive or 'nowhere.tar.gz'}}}]
roles: {{worker: {{cpus: 0.5, memory: 64M, command: 'true'}}}}
""")
    result = shoal.run("run", str(spec))
    assert result.returncode == 2, result.stderr
    assert "archives[0].path" in result.stderr and message in result.stderr
    assert not (shoal.home / "server.json").exists()
