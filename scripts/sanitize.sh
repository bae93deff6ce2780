#!/usr/bin/env bash
# Runs the test suite under a sanitizer: builds everything (debug, with tests) with
# AddressSanitizer (+ LeakSanitizer) or ThreadSanitizer in a build directory of its own, runs
# the Swift suites, then the end-to-end suite against the sanitized binaries. Any report, from
# any of our processes (test runner, islandd, island, island-presenter, varlink-certification),
# fails the run.
#
# Usage: scripts/sanitize.sh address|thread [PYTEST-ARGS…]
#
#   address   ASan and LSan; builds in .build-asan/
#   thread    TSan; builds in .build-tsan/
#   PYTEST-ARGS are passed to the end-to-end pytest run (e.g. -k presenter, -x). With paths
#   among them (Tests/EndToEnd/push, Tests/EndToEnd/cli/test_cli.py), only those run;
#   without, the whole of Tests/EndToEnd.
#
# Every instrumented process writes its reports to a file of its own (the options' log_path,
# in a fresh /tmp/island-asan-*/ or /tmp/island-tsan-*/ directory, printed at the start); the
# end-to-end harness (Tests/EndToEnd/harness/paths.py, ISLAND_SANITIZER/ISLAND_SANITIZER_LOGS) fails
# the test during which a report appeared. Suppressions, each justified, are in
# scripts/sanitizers/. Options already in ASAN_OPTIONS/LSAN_OPTIONS/TSAN_OPTIONS are appended
# to ours and win. Environment: SANITIZE_SKIP_SWIFT=1 or SANITIZE_SKIP_E2E=1 skip a half;
# SANITIZE_LEAKS=1 turns LeakSanitizer on (see below: expect false positives).
#
# LeakSanitizer is off by default (detect_leaks=0). It finds pointers by scanning memory, and
# Swift keeps tag bits in pointers it stores (multi-payload enums such as JSON and LayoutView,
# String's storage, the refcount word's pointer to a weak-reference side table), so every
# object still alive at exit that is reachable only through such a pointer (a static cache,
# the daemon's state, a parsed interface) is reported as leaked: thousands of reports per run,
# and every one traced was a live object, not a leak (llvm/llvm-project#56751,
# swift-corelibs-xctest#342). Suppressing them would mean suppressing our own code wholesale.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"

usage() { sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; }
case "${1:-}" in
  address) short=asan ;;
  thread) short=tsan ;;
  -h|--help) usage; exit 0 ;;
  *) usage >&2; exit 2 ;;
esac
kind="$1"
shift

bash scripts/install-deps.sh

scratch=".build-$short"
build=(--sanitize="$kind" --scratch-path "$scratch")
echo "==> building (debug, with tests, --sanitize=$kind, in $scratch/)" >&2
swift build --build-tests "${build[@]}"
bin="$(swift build --show-bin-path "${build[@]}")"

logs="$(mktemp -d "/tmp/island-$short-XXXXXX")"
mkdir "$logs/swift" "$logs/e2e"
# The end-to-end suite also runs our binaries as throwaway users (the system scope's tests):
# their reports must land here too, so the directory takes anyone's files, like /tmp.
chmod 0755 "$logs" && chmod 1777 "$logs/e2e"
echo "==> sanitizer reports go to $logs/" >&2

# The toolchain's symbolizer, so reports have file:line (demangled when printed).
symbolizer="$(dirname "$(readlink -f "$(command -v swift)")")/llvm-symbolizer"
[ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"
supp="$repo/scripts/sanitizers"
# Swift's own crash handler would take the fatal signals (and, reading other threads' stacks,
# trip ASan itself): the sanitizer reports crashes instead, traps (fatalError, overflow) and
# aborts included, with its stack.
export SWIFT_BACKTRACE=enable=no
signals="handle_segv=1:handle_sigbus=1:handle_sigill=1:handle_sigfpe=1:handle_abort=1"
# log_path is set per half below; these are the common options.
if [ "$kind" = address ]; then
  # halt_on_error=1 is ASan's only mode in Swift (no recovery); stated for clarity.
  leaks=0; [ "${SANITIZE_LEAKS:-}" = 1 ] && leaks=1
  asan_common="halt_on_error=1:detect_leaks=$leaks:$signals:external_symbolizer_path=$symbolizer"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
else
  tsan_common="halt_on_error=1:second_deadlock_stack=1:$signals:external_symbolizer_path=$symbolizer:suppressions=$supp/tsan.supp:print_suppressions=0"
fi
user_asan="${ASAN_OPTIONS:-}" user_tsan="${TSAN_OPTIONS:-}"
point_logs_at() {
  if [ "$kind" = address ]; then
    export ASAN_OPTIONS="$asan_common:log_path=$1/asan${user_asan:+:$user_asan}"
  else
    export TSAN_OPTIONS="$tsan_common:log_path=$1/tsan${user_tsan:+:$user_tsan}"
  fi
}

# Prints the reports in a directory (demangled); true when there were none.
no_reports() {
  local files=("$1"/*)
  [ -e "${files[0]}" ] || return 0
  echo "==> ${#files[@]} $kind sanitizer report(s) in $1:" >&2
  for f in "${files[@]}"; do echo "--- $f"; cat "$f"; done | swift demangle --simplified >&2
  return 1
}

failed=()
started=$SECONDS
if [ "${SANITIZE_SKIP_SWIFT:-}" != 1 ]; then
  echo "==> Swift test suites under --sanitize=$kind" >&2
  point_logs_at "$logs/swift"
  ISLAND_SANITIZER="$kind" swift test --skip-build "${build[@]}" || failed+=("Swift suites")
  no_reports "$logs/swift" || failed+=("reports from the Swift suites")
  echo "==> Swift suites took $((SECONDS - started)) s" >&2
fi

if [ "${SANITIZE_SKIP_E2E:-}" != 1 ]; then
  echo "==> end-to-end suite against $bin" >&2
  point_logs_at "$logs/e2e"
  e2e_started=$SECONDS
  # Paths given choose what runs: beside Tests/EndToEnd they would narrow nothing (pytest
  # collects the whole directory, and each file once).
  targets=(Tests/EndToEnd)
  for arg in "$@"; do [[ "$arg" == Tests/* ]] && targets=() && break; done
  ISLAND_BIN_DIR="$bin" ISLAND_SANITIZER="$kind" ISLAND_SANITIZER_LOGS="$logs/e2e" \
    python3 -m pytest -q -p no:cacheprovider ${targets[@]+"${targets[@]}"} "$@" || failed+=("end-to-end suite")
  no_reports "$logs/e2e" || failed+=("reports from the end-to-end suite")
  echo "==> end-to-end suite took $((SECONDS - e2e_started)) s" >&2
fi

if ((${#failed[@]})); then
  printf '==> %s: FAILED: %s\n' "$kind" "$(IFS=,; echo "${failed[*]}")" >&2
  exit 1
fi
echo "==> $kind: no failures, no sanitizer reports ($((SECONDS - started)) s of tests)" >&2
rm -rf "$logs"
