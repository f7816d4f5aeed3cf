"""Benchmark harness: the same Searcher as `evtui search`, scored against public benchmarks.

One contract between search and evaluation: runs and qrels as {query_id: {doc_or_sentence_id: score}}.
"""

from evtui.bench.evidencebench import TASKS, run_evidencebench
from evtui.bench.runs import list_runs, save_run

__all__ = ["TASKS", "list_runs", "run_evidencebench", "save_run"]
