"""One ``streamlit run`` server for a test or a bench: started headless on a port, waited for until
healthy, and always stopped (terminate, then kill). Used by ``tests/test_browser.py`` and the
browser benches (``bench/open_app.py``, ``bench/app_latency.py``, ``bench/app_load.py``)."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Iterator, Mapping

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 120) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited early with code {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("streamlit did not become healthy")


def stop(proc: subprocess.Popen, timeout: float = 30) -> None:
    """Terminate the server; kill it when it does not stop within ``timeout`` s."""
    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@contextmanager
def streamlit_server(entry: str, port: int, env: Mapping[str, str], output: IO | None = None,
                     stop_timeout: float = 30) -> Iterator[str]:
    """``streamlit run <entry>`` (from the repository root) on ``port`` with ``env``, its output to
    ``output`` (default: discarded); yields the URL once healthy and stops the server on exit."""
    proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", entry, "--server.headless", "true",
                             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
                            cwd=ROOT, env=dict(env), stdout=output if output is not None else subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        yield url
    finally:
        stop(proc, stop_timeout)
