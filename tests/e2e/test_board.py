"""A board (TensorBoard or any web tool) beside one task."""
import time
import urllib.request

import pytest

from conftest import write_spec

pytestmark = pytest.mark.slow


def test_a_board_runs_beside_its_task_and_its_url_is_shown(shoal, tmp_path):
    shoal.start_server()
    spec = write_spec(tmp_path, """
name: with-board
roles:
  worker: {instances: 2, cpus: 0.25, memory: 64M, command: 'sleep 20'}
board:
  command: /usr/bin/python3 -m http.server $SHOAL_BOARD_PORT --bind 127.0.0.1
  index: 1
""")
    job_id = shoal.submit(spec)

    def board_url():
        detail = shoal.status(job_id)
        return detail.get("board_url") or (detail["attempts"] and detail["attempts"][-1].get("board_url"))

    deadline = time.monotonic() + 30
    url = None
    while not url and time.monotonic() < deadline:
        url = board_url()
        time.sleep(0.2)
    assert url and url.startswith("http://127.0.0.1:"), shoal.status(job_id)
    assert f"board: {url}" in shoal.run("status", job_id, check=0).stdout
    body = None
    while body is None and time.monotonic() < deadline:
        try:
            body = urllib.request.urlopen(url, timeout=2).read().decode()
        except OSError:
            time.sleep(0.2)
    assert body and "Directory listing" in body
    shoal.run("kill", job_id, check=0)
    assert shoal.job_processes(job_id) == []
