"""Teacher runs trained in parallel on a GPU machine (one process each) are joined as if one process had made them:
the pool's soft labels are the mean of the runs' logits and the pool's sha256 is recorded for the student's check."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "verifier"))
import train_verifier as tv  # noqa: E402
import train_verifier_teacher as teacher  # noqa: E402


def _run(folder: Path, name: str, cal: np.ndarray, pool: np.ndarray, y: np.ndarray) -> None:
    folder.mkdir()
    np.savez_compressed(folder / "logits.npz", **{f"{name}/cal": cal, f"{name}/ccdev": cal[:2], f"{name}/pool": pool})
    np.save(folder / "y_cal.npy", y)
    np.save(folder / "y_ccdev.npy", y[:2])
    (folder / "summary.json").write_text(json.dumps({name: {"cal_side": 0.5}, "command": "one run"}))


def test_merge_averages_the_runs_and_records_the_pool(tmp_path: Path) -> None:
    y = np.array([0, 1, 2, 0])
    right = np.array([[3.0, 0, 0], [0, 3, 0], [0, 0, 3], [3, 0, 0]])
    wrong = np.array([[0.0, 2, 0], [2, 0, 0], [0, 0, 3], [3, 0, 0]])  # reads both sides backwards
    _run(tmp_path / "a", "mpnet:2e-5:4:0", right, np.ones((3, 3)), y)
    _run(tmp_path / "b", "mpnet:2e-5:4:1", wrong, np.zeros((3, 3)), y)
    pool = [{"claim": f"c{i}", "sentence": f"s{i}", "prev": ""} for i in range(3)]
    out = tmp_path / "T"
    out.mkdir()
    assert teacher.merge([tmp_path / "a", tmp_path / "b"], out, "mpnet", pool, "merged") == 0
    np.testing.assert_allclose(np.load(out / "pool_logits.npy"), 0.5)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["pool_logits"]["runs"] == ["mpnet:2e-5:4:0", "mpnet:2e-5:4:1"]
    assert summary["pool_sha256"] == tv.pool_digest(pool)
    assert summary["mpnet:mean of 2"]["cal_side"] == 1.0  # mean logits: the confident run wins both sides
    assert summary["mpnet:mean of 2"]["ccdev_side"] == 1.0
    with np.load(out / "logits.npz") as z:
        assert sorted(z.files) == sorted(f"mpnet:2e-5:4:{s}/{k}" for s in (0, 1) for k in ("cal", "ccdev", "pool"))
