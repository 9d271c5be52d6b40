"""Helpers for real-browser tests: a Streamlit server on loopback and headless Debian Chromium.

The benchmarks that drive the page use it too (benchmarks/report.py puts tests/ on their path): it lives
with the tests, which must not depend on the benchmark scripts."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_rss_mib(url: str) -> float:
    """Resident memory of the `streamlit run` serving `url` (VmRSS in /proc: Linux only)."""
    port = str(urllib.parse.urlsplit(url).port).encode()
    for proc in Path("/proc").iterdir():
        try:
            args = (proc / "cmdline").read_bytes().split(b"\0") if proc.name.isdigit() else []
            if b"streamlit" in args and port in args:
                line = next(x for x in (proc / "status").read_text().splitlines() if x.startswith("VmRSS:"))
                return int(line.split()[1]) / 1024
        except OSError:  # a process that ended meanwhile
            continue
    raise RuntimeError(f"no streamlit process serves {url}")


@contextmanager
def streamlit_server(root: Path, index: Path, timeout: float = 90, env: dict | None = None):
    """Run the app on 127.0.0.1 and yield its URL; stop it afterwards. `env` adds variables (SEARCH_DATA)."""
    port = free_port()
    # the server's output goes to a file: an unread pipe fills up and then blocks the server
    log = tempfile.NamedTemporaryFile("w+", prefix="streamlit-", suffix=".log", delete=False)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "streamlit_app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=root, env={**os.environ, "SEARCH_INDEX": str(index), **(env or {})}, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if urllib.request.urlopen(url + "/_stcore/health", timeout=2).status == 200:
                    break
            except OSError:
                time.sleep(0.3)
        else:
            raise RuntimeError("streamlit did not start:\n" + Path(log.name).read_text()[-3000:])
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        os.unlink(log.name)


def launch(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
