"""A throwaway PostgreSQL server in a temporary folder, for the tests and the reliability campaign: Debian's
``postgresql`` binaries (initdb, pg_ctl), trust authentication on 127.0.0.1 and a free port, removed
afterwards. As root (CI), the server runs as the ``postgres`` user, which PostgreSQL requires.

    with throwaway_server() as server:
        dsn = server.dsn  # postgresql://semanno@127.0.0.1:PORT/semanno
        server.stop(); server.start()  # a restart, as an operator's would be
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


class Unavailable(RuntimeError):
    """PostgreSQL's server binaries are not installed here (the message says how to install them)."""


def bin_dir() -> Path:
    """The folder of initdb and pg_ctl: ``pg_config --bindir``, else Debian's /usr/lib/postgresql/N/bin."""
    if shutil.which("pg_config"):
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip()
        if out and (Path(out) / "initdb").exists():
            return Path(out)
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    raise Unavailable("PostgreSQL's server is not installed (Debian: apt-get install -y postgresql)")


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, folder: Path, port: int, bindir: Path, as_user: str | None, fsync: bool = False):
        self.folder, self.port, self.bindir, self.as_user, self.fsync = folder, port, bindir, as_user, fsync
        self.data, self.log = folder / "data", folder / "server.log"

    @property
    def dsn(self) -> str:
        return f"postgresql://semanno@127.0.0.1:{self.port}/semanno"

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if self.as_user:
            cmd = ["runuser", "-u", self.as_user, "--", *cmd]
        return subprocess.run(cmd, capture_output=True, text=True)

    def init(self) -> None:
        r = self._run("initdb", "-D", str(self.data), "-U", "semanno", "--auth=trust", "-E", "UTF8", "--no-sync")
        if r.returncode:
            raise Unavailable(f"initdb failed: {r.stderr.strip()[-400:]}")

    def start(self) -> None:
        opts = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=100"
                + ("" if self.fsync else " -c fsync=off"))  # tests need no durability; benchmarks measure with it
        r = self._run("pg_ctl", "-D", str(self.data), "-o", opts, "-l", str(self.log), "-w", "-t", "60", "start")
        if r.returncode:
            raise Unavailable(f"pg_ctl start failed: {r.stderr.strip()[-400:]} {self.log.read_text()[-400:]}")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def createdb(self, name: str = "semanno") -> None:
        import psycopg

        with psycopg.connect(f"postgresql://semanno@127.0.0.1:{self.port}/postgres", autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')


@contextmanager
def throwaway_server(fsync: bool = False):
    """A running server with an empty database ``semanno``; stopped and removed afterwards. ``fsync``:
    durable commits, as an operator's server has (the benchmarks); tests run without."""
    bindir = bin_dir()
    as_user = "postgres" if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="semanno-pg-"))
    if as_user:
        shutil.chown(folder, as_user)
    server = Server(folder, _free_port(), bindir, as_user, fsync)
    try:
        server.init()
        server.start()
        deadline = time.time() + 30
        while True:
            try:
                server.createdb()
                break
            except Exception:
                if time.time() > deadline:
                    raise
                time.sleep(0.3)
        yield server
    finally:
        server.stop("immediate")
        shutil.rmtree(folder, ignore_errors=True)
