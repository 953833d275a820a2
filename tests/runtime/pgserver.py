"""A throwaway PostgreSQL cluster for the tests and benchmarks: ``initdb`` + ``pg_ctl``.

``PostgresServer`` makes a cluster in a fresh temporary directory, listening on a free
loopback port (TCP only, trust authentication, no Unix socket outside the directory), and can
crash it (``pg_ctl stop -m immediate``: no checkpoint, the next start replays the WAL) and
start it again on the same port and data, as a server restart in production would.

PostgreSQL refuses to run as root. As root (CI, containers) the cluster belongs to the
``postgres`` system user that Debian's package creates, and every server command runs through
``runuser -u postgres --``; the directory is made directly under the system temp directory,
because pytest's own temp directories are private to root. Debian installs the binaries in
``/usr/lib/postgresql/<version>/bin``, which is not on PATH: ``find_bindir`` looks there too.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: PATH first, then Debian's layout
    (the newest version), then ``pg_config --bindir``."""
    on_path = shutil.which("pg_ctl")
    if on_path and shutil.which("initdb"):
        return Path(os.path.realpath(on_path)).parent
    candidates = sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda p: [int(x) for x in Path(p).parent.name.split(".") if x.isdigit()] or [0],
    )
    for bindir in reversed(candidates):
        if os.access(os.path.join(bindir, "pg_ctl"), os.X_OK) and os.access(os.path.join(bindir, "initdb"), os.X_OK):
            return Path(bindir)
    pg_config = shutil.which("pg_config")
    if pg_config:
        out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        bindir = Path(out.stdout.strip())
        if out.returncode == 0 and (bindir / "pg_ctl").exists() and (bindir / "initdb").exists():
            return bindir
    return None


def missing() -> str | None:
    """Why a real PostgreSQL cannot run here, or ``None`` when it can."""
    if find_bindir() is None:
        return "PostgreSQL's initdb/pg_ctl not found (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and runuser (util-linux) is missing"
    return None


class PostgresServer:
    """One cluster: ``start()``, ``kill()`` (a crash), ``start()`` again, ``stop()``, ``cleanup()``."""

    def __init__(self, *settings: str, port: int | None = None) -> None:
        bindir = find_bindir()
        if bindir is None:
            raise RuntimeError(missing() or "PostgreSQL not found")
        self.bindir = bindir
        self.port = port or free_port()
        self.settings = settings
        self.as_root = os.geteuid() == 0
        self.directory = Path(tempfile.mkdtemp(prefix="dupguard-pg-"))
        self.data = self.directory / "data"
        self.log = self.directory / "server.log"
        if self.as_root:
            user = pwd.getpwnam("postgres")
            os.chown(self.directory, user.pw_uid, user.pw_gid)
        self._initdb()

    @property
    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def _cmd(self, *args: str) -> list[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if self.as_root else []
        return prefix + [str(self.bindir / args[0]), *args[1:]]

    def _run(self, *args: str, timeout: float = 60) -> None:
        out = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=timeout, cwd=self.directory)
        if out.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({out.returncode}): {out.stderr.strip() or out.stdout.strip()}")

    def _initdb(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale")
        conf = [
            "listen_addresses = '127.0.0.1'",
            f"port = {self.port}",
            f"unix_socket_directories = '{self.directory}'",
            "max_connections = 200",
            "shared_buffers = 16MB",
            *self.settings,
        ]
        with open(self.data / "postgresql.auto.conf", "a", encoding="utf-8") as f:
            f.write("\n".join(conf) + "\n")

    def start(self) -> PostgresServer:
        # -w: pg_ctl waits until the server accepts connections (recovery included)
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "start")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.accepting():
                return self
            time.sleep(0.02)
        raise RuntimeError(f"postgres did not accept connections on port {self.port}")

    def accepting(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def running(self) -> bool:
        out = subprocess.run(
            self._cmd("pg_ctl", "-D", str(self.data), "status"), capture_output=True, cwd=self.directory
        )
        return out.returncode == 0

    def kill(self) -> None:
        """A crash: every backend is stopped at once, nothing is checkpointed."""
        if self.running():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def stop(self) -> None:
        if self.data.exists() and self.running():
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def cleanup(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
