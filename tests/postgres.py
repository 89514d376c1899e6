"""A real PostgreSQL server for tests and benchmarks: initdb + pg_ctl in a temporary directory.

Debian's `postgresql` package provides the binaries (`.ci/run` installs it when missing). The
server runs as a non-root user (initdb refuses root): `postgres` when it exists, else a system
user made for it. It listens on 127.0.0.1 on a free port, with durability off (a test server).

    with PostgresServer() as pg:
        pg.create_database("t1")
        url = pg.url("t1")          # postgresql://intake@127.0.0.1:PORT/t1
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from tests.support import WAIT

SUPERUSER = "intake"
RUN_AS = ("postgres", "intakepg")  # non-root users to run the server as, first that exists


def find_postgres(search_path: str | None = None) -> Path | None:
    """The directory holding initdb, pg_ctl and postgres: PATH first, else the newest
    /usr/lib/postgresql/*/bin (Debian keeps them off PATH)."""
    found = shutil.which("initdb", path=search_path)
    if found and shutil.which("pg_ctl", path=search_path):
        return Path(os.path.realpath(found)).parent
    if search_path is not None:
        return None
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def unavailable_reason(search_path: str | None = None) -> str | None:
    """Why no PostgreSQL server can be started here, or None when one can."""
    if find_postgres(search_path) is None:
        return "PostgreSQL is not installed (no initdb/pg_ctl; Debian package 'postgresql')"
    if os.geteuid() == 0 and not shutil.which("runuser"):
        return "running as root without runuser: cannot start PostgreSQL as another user"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _server_user() -> str | None:
    """The non-root user to run the server as (None: we are not root, run as ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in RUN_AS:
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            continue
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", RUN_AS[1]],
        check=True,
        capture_output=True,
    )
    return RUN_AS[1]


class PostgresServer:
    """A throwaway PostgreSQL server (see the module docstring)."""

    def __init__(self) -> None:
        reason = unavailable_reason()
        if reason:
            raise RuntimeError(reason)
        self.bin = find_postgres()
        self.user = _server_user()
        self.root = Path(tempfile.mkdtemp(prefix="intake-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.started = False

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        command = [str(self.bin / args[0]), *args[1:]]
        if self.user is not None:
            command = ["runuser", "-u", self.user, "--", *command]
        return subprocess.run(
            command, check=True, capture_output=True, text=True, cwd=self.root, timeout=WAIT
        )

    def start(self) -> PostgresServer:
        if self.user is not None:
            shutil.chown(self.root, self.user)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", SUPERUSER, "-E", "UTF8",
                  "--locale=C", "--no-sync")  # fmt: skip
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=300"
        )
        # -w: pg_ctl returns once the server accepts connections (at most WAIT seconds).
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"), "-w",
                  "-t", str(int(WAIT)), "-o", options, "start")  # fmt: skip
        self.started = True
        return self

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Make a fresh database; return its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        if self.started:
            try:
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            except (subprocess.CalledProcessError, subprocess.TimeoutExpired):
                pass
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()


def wait_until_ready(url: str, timeout: float = WAIT) -> None:
    """Block until the server accepts connections."""
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        try:
            psycopg.connect(url).close()
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
