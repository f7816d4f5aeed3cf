"""Benchmark harness: the same Searcher as `evtui search`, scored against public benchmarks.

One contract between search and evaluation: runs and qrels as {query_id: {doc_or_sentence_id: score}}.
"""

from evtui.bench.checkcovid import run_checkcovid
from evtui.bench.evidencebench import TASKS, run_evidencebench
from evtui.bench.runs import list_runs, save_run
from evtui.bench.scifact import run_scifact

__all__ = ["TASKS", "list_runs", "run_checkcovid", "run_evidencebench", "run_scifact", "save_run"]
