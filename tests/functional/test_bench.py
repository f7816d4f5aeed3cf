"""The EvidenceBench harness: metric, tasks, label blindness, determinism, stored runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.bench import TASKS, list_runs, run_evidencebench
from evtui.bench import evidencebench as eb
from evtui.bench.metrics import aspect_recall
from evtui.cli import main
from evtui.config import load_config
from evtui.errors import EvtuiError

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"  # dev_id_28, dev_id_16 (null results), train_id_49 (optimal 11)


def test_aspect_recall_hand_computed() -> None:
    sa = {0: [], 1: ["a", "b"], 2: ["b", "c"], 3: ["d"], 4: []}
    # coverable = {a, b, c, d} ∩ task aspects; "e" is a task aspect no sentence covers: not in the denominator
    assert aspect_recall([1], sa, ["a", "b", "c", "d", "e"]) == pytest.approx(2 / 4)
    assert aspect_recall([1, 2, 3], sa, ["a", "b", "c", "d"]) == 1.0
    assert aspect_recall([0, 4], sa, ["a", "b"]) == 0.0
    assert aspect_recall([3], sa, ["d", "x"]) == 1.0  # results-only aspect set
    assert aspect_recall([1], sa, ["x"]) is None  # nothing coverable: the item cannot be scored
    assert aspect_recall([1, 1, 1], sa, ["a", "b", "c"]) == pytest.approx(2 / 3)  # repeats add nothing


def test_task_k_and_null_results() -> None:
    items = json.loads(EB3.read_text())
    assert eb.task_k(items["evidencebench_train_id_49"], "er-optimal") == 11  # optimal > 10
    assert eb.task_k(items["evidencebench_dev_id_28"], "er-10") == 10
    assert eb.task_k(items["evidencebench_dev_id_16"], "results-er-5") is None  # null results fields
    assert eb.task_k(items["evidencebench_dev_id_16"], "er-optimal") == 1


def test_harness_on_three_items(tmp_path: Path) -> None:
    res = run_evidencebench(EB3, "results-er-5", "bm25-coverage", home=tmp_path)
    assert set(res) == {"dataset", "task", "method", "n_items", "n_skipped", "aspect_recall", "per_item", "seconds"}
    assert res["n_items"] == 2 and res["n_skipped"] == 1 and "evidencebench_dev_id_16" not in res["per_item"]
    assert 0 <= res["aspect_recall"] <= 100
    assert res["aspect_recall"] == pytest.approx(sum(res["per_item"].values()) / 2, abs=0.01)
    opt = run_evidencebench(EB3, "er-optimal", "bm25", home=tmp_path)
    assert opt["n_items"] == 3 and opt["n_skipped"] == 0


def test_scores_match_a_manual_count(tmp_path: Path) -> None:
    """The harness's per-item recall equals recounting from the picked sentence indices by hand."""
    items = json.loads(EB3.read_text())
    picks: dict[str, list[int]] = {}
    real = eb.make_ranker

    def spy(library, method, seed):  # type: ignore[no-untyped-def]
        rank = real(library, method, seed)

        def wrapped(task: eb.Task) -> list[int]:
            picks[task.item_id] = rank(task)
            return picks[task.item_id]
        return wrapped

    eb.make_ranker = spy  # type: ignore[assignment]
    try:
        res = run_evidencebench(EB3, "er-10", "bm25", home=tmp_path)
    finally:
        eb.make_ranker = real  # type: ignore[assignment]
    for item_id, item in items.items():
        covered = {a for i in picks[item_id] for a in item["sentence_index2aspects"][str(i)]}
        coverable = {a for v in item["sentence_index2aspects"].values() for a in v} & set(item["aspect_list_ids"])
        assert res["per_item"][item_id] == pytest.approx(100 * len(covered & coverable) / len(coverable), abs=1e-3)
        assert len(picks[item_id]) <= 10


def test_ranker_never_sees_labels(tmp_path: Path) -> None:
    seen: list[object] = []
    real = eb.make_ranker

    def spy(library, method, seed):  # type: ignore[no-untyped-def]
        rank = real(library, method, seed)

        def wrapped(task: object) -> list[int]:
            seen.append(task)
            return rank(task)  # type: ignore[arg-type]
        return wrapped

    eb.make_ranker = spy  # type: ignore[assignment]
    try:
        run_evidencebench(EB3, "er-optimal", "bm25", home=tmp_path)
    finally:
        eb.make_ranker = real  # type: ignore[assignment]
    assert seen and all(isinstance(t, eb.Task) for t in seen)
    # `results` says which task is asked (results evidence or any), not what the answer is
    assert set(eb.Task.__dataclass_fields__) == {"item_id", "hypothesis", "paper_id", "k", "results"}


def test_random_is_seeded(tmp_path: Path) -> None:
    a = run_evidencebench(EB3, "er-10", "random", seed=1, home=tmp_path)
    b = run_evidencebench(EB3, "er-10", "random", seed=1, home=tmp_path)
    c = run_evidencebench(EB3, "er-10", "random", seed=2, home=tmp_path)
    assert a["per_item"] == b["per_item"]
    assert a["per_item"] != c["per_item"]


def test_cli_all_tasks_and_stored_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "evidencebench", "--data", str(EB3), "--task", "all", "--method", "bm25", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["task"] for r in out] == list(TASKS)
    assert main(["bench", "runs", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert len(runs) == 4 and {r["task"] for r in runs} == set(TASKS)
    assert all("aspect_recall" in r["metrics"] for r in runs)
    from evtui.library import Library

    with Library(load_config()) as lib:
        assert len(list_runs(lib)) == 4


def test_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(EvtuiError, match="unknown task"):
        run_evidencebench(EB3, "er-3", "bm25", home=tmp_path)
    bad = tmp_path / "x.json"
    bad.write_text('{"a": 1}')
    with pytest.raises(EvtuiError, match="not an EvidenceBench"):
        run_evidencebench(bad, "er-10", "bm25", home=tmp_path)


def test_a_figure_on_the_rankers_training_file_says_in_sample(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    same_name = tmp_path / "evidencebench_dev_set.json"  # a file the shipped ranker was trained on, by name
    shutil.copy(EB3, same_name)
    assert main(["bench", "evidencebench", "--data", str(same_name), "--task", "er-10", "--method", "best",
                 "--limit", "1", "--no-save"]) == 0
    out = capsys.readouterr()
    assert "in-sample" in out.out and "in-sample: the method's learned model" in out.err
    # eb3.json's items are training items under another file name: in-sample too; the same items reworded are not
    assert main(["bench", "evidencebench", "--data", str(EB3), "--task", "er-10", "--method", "best",
                 "--limit", "1", "--no-save"]) == 0
    assert "in-sample" in capsys.readouterr().out
    items = json.loads(EB3.read_text())
    for item in items.values():
        item["hypothesis"] = "Reworded: " + item["hypothesis"]
    (fresh := tmp_path / "mine.json").write_text(json.dumps(items))
    assert main(["bench", "evidencebench", "--data", str(fresh), "--task", "er-10", "--method", "best",
                 "--limit", "1", "--no-save"]) == 0
    other = capsys.readouterr()
    assert "in-sample" not in other.out + other.err
