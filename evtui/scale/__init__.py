"""Scale-out of the heavy batch work on Ray: embedding a library, ranking a benchmark's items.

Both follow one pattern: the driver exports the work from DuckDB as Parquet shards, Ray Data runs
`map_batches` with a callable class that loads its model (or opens the library read-only) once per actor, and the
results come back as Parquet or rows that the driver stores exactly as the local engine would (docs/scale.md).

Ray is an optional extra: nothing outside this package imports it, and this module imports it only on demand.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import warnings
from types import ModuleType

from evtui.errors import EvtuiError

ENGINES: tuple[str, ...] = ("local", "ray")
INSTALL_HINT = "pip install 'evtui[ray]'"
# A local Ray instance takes at most this many CPUs unless told otherwise: evtui runs beside other work.
LOCAL_CPUS = 2


def ray_available() -> bool:
    return importlib.util.find_spec("ray") is not None


def require_ray() -> ModuleType:
    """The `ray` module, or an EvtuiError that says how to install it."""
    if not ray_available():
        raise EvtuiError(f"--engine ray needs Ray, which is not installed; install it with: {INSTALL_HINT}")
    try:
        import ray
        import ray.data  # noqa: F401 - the `data` part of the extra; fails here, clearly, when it is missing
    except ImportError as exc:
        raise EvtuiError(f"Ray is installed but cannot be imported ({exc}); reinstall it with: {INSTALL_HINT}") from exc
    return ray


def init_ray(address: str | None = None, *, num_cpus: int | None = None, progress: bool = False) -> ModuleType:
    """Connect to the cluster at `address`, or start a small local Ray; reuse an instance already running.

    `progress` turns Ray Data's own progress bars on (they go to stderr; only worth it on a terminal)."""
    ray = require_ray()
    if not ray.is_initialized():
        # Ray's INFO lines (and the per-operator logging it prints when stderr is no terminal) would drown our
        # own progress lines; warnings and errors still come through.
        os.environ.setdefault("RAY_DEDUP_LOGS", "1")
        opts: dict[str, object] = {"include_dashboard": False, "log_to_driver": False,
                                   "logging_level": logging.WARNING}
        try:
            if address:
                ray.init(address=address, **opts)
            else:
                ray.init(num_cpus=num_cpus or min(LOCAL_CPUS, os.cpu_count() or 1), **opts)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            where = f"the Ray cluster at {address}" if address else "a local Ray instance"
            raise EvtuiError(f"cannot start or reach {where}: {exc}") from exc
    with warnings.catch_warnings():  # Ray 2.60 warns about its own deprecated context fields on first use
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = progress
    ctx.execution_options.verbose_progress = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # e.g. "progress bars disabled": noise
    return ray  # type: ignore[no-any-return]


def cluster_cpus() -> int:
    """CPUs of the Ray instance this process is connected to (at least 1)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)))
