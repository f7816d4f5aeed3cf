#!/usr/bin/env bash
# Smoke test of the real terminal app: `evtui` in tmux, driven by keys, its screen read back with capture-pane.
# A small library is built from tests/fixtures/core in a throw-away EVTUI_HOME; nothing of the user's is touched.
# Keys: a triplet query, enter, j, space (select), e (export screen), q (quit). Exits non-zero on any miss.
set -u
cd "$(dirname "$0")/.."
if ! command -v tmux >/dev/null 2>&1; then
  echo "tui-smoke: skipped: tmux not found"
  exit 0
fi
EVTUI="${EVTUI:-evtui}"
if ! command -v "$EVTUI" >/dev/null 2>&1; then
  echo "tui-smoke: the evtui command is not installed (pip install -e .)" >&2
  exit 1
fi
work="$(mktemp -d)"
session="evtui-smoke-$$"
cleanup() { tmux kill-session -t "$session" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
export EVTUI_HOME="$work/home" EVTUI_CONFIG="$work/config.toml" EVTUI_DEMO=false
"$EVTUI" ingest tests/fixtures/core >/dev/null 2>&1 || { echo "tui-smoke: ingest of tests/fixtures/core failed" >&2; exit 1; }

# The expectations below are for bm25-coverage: cycle the method select (m) from the default to it.
steps="$(python -c 'from evtui import methods as s; m = list(s.search_methods()); print((m.index("bm25-coverage") - m.index(s.DEFAULT_METHOD)) % len(m))')"

tmux new-session -d -s "$session" -x 140 -y 40 \
  "EVTUI_HOME='$EVTUI_HOME' EVTUI_CONFIG='$EVTUI_CONFIG' EVTUI_DEMO=false '$EVTUI'; echo \"evtui exited with \$?\"; sleep 30"

pane() { tmux capture-pane -p -t "$session"; }
fail() {
  echo "tui-smoke: FAILED: $1" >&2
  echo "---- screen ----" >&2
  pane >&2
  exit 1
}
expect() {  # expect TEXT WHAT [SECONDS]
  local i
  for ((i = 0; i < ${3:-15} * 10; i++)); do
    pane | grep -qF -- "$1" && return 0
    sleep 0.1
  done
  fail "$2: '$1' did not appear"
}
keys() { tmux send-keys -t "$session" "$@"; sleep 0.3; }

expect "sentences" "the library opened" 30
keys Tab
for ((n = 0; n < steps; n++)); do keys m; done
keys /
keys -l "(phenobarbital, induce, dyskinesia)"
expect "relation: induce" "the aspect chips"
keys Enter
expect "bm25-coverage ·" "the search finished"
expect "Phenobarbital-induced dyskinesia" "the top result"
pane | grep -qF "triplet" || fail "the detected mode is not shown"
keys j
keys space
expect "sentence(s) selected" "the selection"
keys e
expect "Selection · 1 sentence(s)" "the export screen"
expect "Evidence" "the Markdown preview"

# The CLI beside the open app: reading commands work (DuckDB read-only beside it), a second writer is refused.
out="$("$EVTUI" search "(phenobarbital, induce, dyskinesia)" --method bm25-coverage --json 2>"$work/cli.err")" \
  || fail "a CLI search while the app is open exited non-zero: $(cat "$work/cli.err")"
grep -qF "Phenobarbital-induced dyskinesia" <<<"$out" || fail "the CLI search beside the app found nothing"
"$EVTUI" stats >/dev/null 2>"$work/cli.err" || fail "evtui stats beside the app: $(cat "$work/cli.err")"
if "$EVTUI" ingest tests/fixtures/core >/dev/null 2>"$work/cli.err"; then
  fail "a second writer was let in while the app is open"
fi
grep -qF "in use by process" "$work/cli.err" || fail "the second writer's message: $(cat "$work/cli.err")"

# 80×24: back on the search screen, the side pane folds away and the results keep a wide sentence column.
tmux resize-window -t "$session" -x 80 -y 24
keys Escape
expect "sentence · paper · section" "the results at 80×24"
expect "support ·" "the verdict bar" 60
# (a toast's lines start with ▌: Search m's note on the method it switched to may name "covered" too)
pane | grep -vF "▌" | grep -qF "covered" && fail "the detail pane is shown at 80×24 without d"
keys d
expect "covered" "the detail pane after d"
keys Escape
expect "sentence · paper · section" "the results again after Esc"
# The Bench screen at 80×24: its preselected sweep (seconds), its cost shown first, stored runs listed.
bench="no bench (no ../shared EvidenceBench dev set)"
if [ -f ../shared/datasets/evidencebench/evidencebench_dev_set.json ]; then
  keys b
  expect "this sweep: 3 runs" "the Bench screen's cost line" 30
  keys r
  expect "done · 3 run(s) stored" "the preselected sweep" 120
  keys 2
  expect "bm25-coverage" "the stored runs in the Runs tab"
  keys Escape
  expect "sentence · paper · section" "back on Search after the Bench screen"
  bench="Bench sweep"
fi
keys q
expect "evtui exited with 0" "a clean exit" 60
echo "tui-smoke: ok (search, highlights, select, export screen, CLI beside the app, 80x24 layout, $bench, quit)"
