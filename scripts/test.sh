#!/usr/bin/env bash
# The test command. Installs what the tests need (scripts/install-deps.sh), builds every
# module once in debug (the programs, then the test suites beside the stages that need only
# the programs), and runs every stage even when an earlier one failed:
#   format      the Swift is formatted as .swift-format says (scripts/format.sh --check),
#               beside the build
#   build-tests the Swift test suites, compiled beside the end-to-end suite and the packages
#   contract    no client spells a name of an Island interface by hand
#               (scripts/check-wire-names.py), nothing is public in a module that is no product
#               (scripts/package-access.py --check), and every library product's public API
#               is the one checked into api/ (scripts/check-api.py)
#   swift       the Swift suites: unit tests, and integration tests that start the real
#               binaries and the reference Python varlink implementation; after the contract,
#               in one job beside the end-to-end suite
#   end-to-end  Tests/EndToEnd, in parallel by file: the real islandd, CLI, presenters, overlay
#               and bridge against real peers (bars, sway, Xvfb, mpv, dunst, mosquitto, systemd)
#   packages    the Debian packages, made from that debug build (its five packaged programs
#               linked again with the Swift runtime in: packaging/build-deb.sh --from-build)
#               and tested, in the background from the end of the build, beside the stages above
# and ends with one line per stage and `N passed, M failed, K skipped`. A failed test's logs
# and screenshots are kept in the folder printed at the end. Exits non-zero if anything failed.
# The release build, the optimised one the packages ship, is not part of it: --release-packages
# builds those packages and runs the same package tests on them (docs/testing.md, "What runs").
#
# Usage: scripts/test.sh [--quick] [--workers N] [-- PYTEST-ARGS...]
#        scripts/test.sh --release-packages
#   --quick      the inner loop's subset: the Swift suites and the end-to-end tests marked
#                `quick` (they start the real daemon) but not `slow` (they wait out one of the
#                product's bounds in real time); no packages. What it takes, and where the
#                time goes: docs/testing.md, "Running them"
#   --workers N  end-to-end tests run N files at a time (default 5; ISLAND_TEST_WORKERS)
#   PYTEST-ARGS  passed to pytest, e.g. `-- -k push` or `-- Tests/EndToEnd/daemon`
#   --release-packages
#                only the packages as they ship: the release build (packaging/build-deb.sh,
#                xz as released), then the package tests on those .debs; run it before a release
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
# SwiftPM runs in the environment this script was started in, not the one it sets up for the
# tests below, and without the shell's bookkeeping (the directory before the last `cd`, the
# nesting level, the last command): a build whose environment differs from the last one's, by
# any variable, relinks the wire-name plugin's tool and runs it again (~7 s of one CPU;
# docs/testing.md, "Where --quick's time goes"), so each run of this script would.
mapfile -d '' caller_environment < <(env -0 -u OLDPWD -u SHLVL -u _)
swiftpm() { env -i "${caller_environment[@]}" swift "$@"; }

quick=0
release_packages=0
workers=${ISLAND_TEST_WORKERS:-5}
pytest_args=()
while (($#)); do
  case "$1" in
    --quick) quick=1; shift ;;
    --release-packages) release_packages=1; shift ;;
    --workers) workers="$2"; shift 2 ;;
    --workers=*) workers="${1#*=}"; shift ;;
    --) shift; pytest_args=("$@"); break ;;
    -h|--help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

results="$repo/.build/test-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$results"
export ISLAND_TEST_LOGS="$results/kept"
# Python's bytecode, and pytest's test modules with their asserts rewritten, kept in .build
# from one run to the next: each pytest process (every end-to-end worker) otherwise rewrites
# every test module as it collects them, 3-4 CPU s each, wherever PYTHONDONTWRITEBYTECODE is
# set; with the cache 1.6 (docs/testing.md, "Running them").
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$repo/.build/pycache"
stages="$results/stages"
: >"$stages"
started=$SECONDS

# One line per stage for the summary: name, status (ok, failed, skipped), seconds, JUnit file,
# and a note.
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" "${5:-}" >>"$stages"; }

# Stages that run beside one another: each is a job of its own whose output goes to
# RESULTS/NAME.log and whose line goes to RESULTS/NAME.stage; once it ended, join_stage shows
# what it said if it failed and puts its line into the summary, in the order they are joined.
declare -A beside_pids=()
beside() {  # beside NAME FUNCTION...
  local name="$1"
  shift
  ( stages="$results/$name.stage"; "$@" ) >"$results/$name.log" 2>&1 &
  beside_pids[$name]=$!
}
# Usage: wait_beside NAME: waits for the job.
wait_beside() { wait "${beside_pids[$1]}"; unset "beside_pids[$1]"; }
# Usage: join_stage NAME [FILTER...], once its job ended: FILTER picks what of a failed
# stage's log is shown (all of it without one).
join_stage() {
  local name="$1" t=$SECONDS
  shift
  if [ ! -s "$results/$name.stage" ]; then
    record "$name" failed $((SECONDS - t)) "" "its job ended without a result: $results/$name.log"
  else
    cat "$results/$name.stage" >>"$stages"
  fi
  if grep -q $'^[^\t]*\tfailed' "$results/$name.stage" 2>/dev/null || [ ! -s "$results/$name.stage" ]; then
    echo "==> $name failed; from its log, $results/$name.log:" >&2
    if (($#)); then "$@" "$results/$name.log" >&2; else cat "$results/$name.log" >&2; fi
  fi
}
# Interrupted, the run takes the jobs beside it down with it (by pid), and what they started.
stop_tree() { local child; for child in $(pgrep -P "$1"); do stop_tree "$child"; done; kill "$1" 2>/dev/null; }
trap 'for pid in "${beside_pids[@]}"; do stop_tree "$pid"; done; exit 130' INT TERM

# What the build needs is installed first; the rest (the tests' peers: GNOME Shell, KWin, sway,
# brokers, players; the packaging tools; the Python packages), most of a fresh machine's wait,
# beside the build, and joined before any stage that needs it. --release-packages installs
# everything first.
install_for_tests() {
  local t=$SECONDS
  if bash scripts/install-deps.sh --tests; then record test-deps ok $((SECONDS - t)); else record test-deps failed $((SECONDS - t)); fi
}
# Where python3 is externally managed (PEP 668), install-deps.sh puts the Python packages into
# the checkout's own environment: its python3 then runs pytest and the tests' Python peers.
use_checkout_python() {
  if [ -x "$repo/.build/python/bin/python3" ]; then export PATH="$repo/.build/python/bin:$PATH"; fi
}
t=$SECONDS
if ((release_packages)); then
  echo "==> installing what the build and the tests need" >&2
  if bash scripts/install-deps.sh; then record install ok $((SECONDS - t)); else record install failed $((SECONDS - t)); fi
  use_checkout_python
else
  echo "==> installing what the build needs; the rest beside the build (log: $results/test-deps.log)" >&2
  if bash scripts/install-deps.sh --build; then record install ok $((SECONDS - t)); else record install failed $((SECONDS - t)); fi
  beside test-deps install_for_tests
fi

# The package tests, on the .debs listed in PATHS (island's first), with the stage's line
# recorded. Usage: test_packages PATHS NOTE [ENVIRONMENT...]
test_packages() {
  local paths="$1" note="$2" t=$SECONDS debs
  shift 2
  mapfile -t debs <"$paths"
  if env "$@" ISLAND_BIN_DIR="$bin_dir" \
      ISLAND_DEB="${debs[0]}" ISLAND_OVERLAY_DEB="${debs[1]}" ISLAND_BRIDGE_DEB="${debs[2]}" \
      python3 -m pytest -q -n "$workers" --junitxml "$results/packages.xml" -o junit_family=xunit1 \
        Tests/EndToEnd/packaging/test_package.py; then
    record packages ok $((SECONDS - t)) "$results/packages.xml" "$note"
  else
    record packages failed $((SECONDS - t)) "$results/packages.xml" "$note"
  fi
}

mkdir -p "$results/debs"
if ((release_packages)); then
  ((!quick && ${#pytest_args[@]} == 0)) || { echo "test.sh: --release-packages runs alone" >&2; exit 2; }
  echo "==> the release packages: their build (log: $results/packages-build.log), then their tests" >&2
  bin_dir=""
  t=$SECONDS
  if packaging/build-deb.sh --output "$results/debs" >"$results/debs/paths" 2>"$results/packages-build.log"; then
    took=$((SECONDS - t))
    test_packages "$results/debs/paths" "their release build took $((took / 60)) min $((took % 60)) s; the .debs: $results/debs" \
      ISLAND_PACKAGE_BUILD="$repo/.build-package"
  else
    echo "packaging/build-deb.sh failed; its log:" >&2
    tail -n 40 "$results/packages-build.log" >&2
    record packages failed $((SECONDS - t))
  fi
  python3 scripts/test-summary.py "$stages" "$results" $((SECONDS - started))
  exit
fi


# swift-format reads the sources only: it runs beside the build.
format() {
  if scripts/format.sh --check; then
    record format ok $((SECONDS - t))
  else
    record format failed $((SECONDS - t)) "" "$(grep -c 'error:' "$results/format.log") findings in $results/format.log; scripts/format.sh fixes them"
  fi
}
echo "==> formatting, beside the build (log: $results/format.log)" >&2
t=$SECONDS
beside format format

echo "==> building the programs (debug)" >&2
t=$SECONDS
# In CI (CI=true; .ci/run sets it) the build is the clone's only one and nobody debugs it, so
# it leaves out what serves a debugger or checks the compiler, not the code: DWARF (-gnone,
# ~10 % of a module's CPU) and LLVM's verifier of the IR the compiler made (another ~10 % at
# -Onone; it changes no byte of the output). The index store stays: SwiftPM's test discovery
# on Linux reads it, and `--build-tests` fails without it. Elsewhere the build is the
# developer's own .build, built as `swift build --build-tests` builds it: with other flags,
# each would recompile everything the other built.
# Measured in docs/testing.md ("Where the builds' CPU goes").
build_flags=()
if [ "${CI:-}" = true ]; then build_flags=(-Xswiftc -gnone -Xswiftc -Xfrontend -Xswiftc -disable-llvm-verify); fi
# The layers hold because the build refuses an import a target does not declare: nothing under
# Libraries/ declares an Island module, so none can use one (Package.swift).
import_check=(--explicit-target-dependency-import-check error)
# The programs first, the test suites after: the end-to-end suite and the packages need only
# the programs, and start as soon as they are built, while the suites compile beside them (the
# end-to-end suite spends most of its time waiting on its peers; docs/testing.md, "One build,
# in two steps"). Both steps compile every module once: the suites' build reuses the programs'
# modules, compiled with the same flags.
if swiftpm build "${import_check[@]}" "${build_flags[@]}" 2>&1 | tee "$results/build.log"; then
  built=1
else
  built=0
fi
took=$((SECONDS - t))
wait_beside format
join_stage format head -n 40
wait_beside test-deps
join_stage test-deps tail -n 40
use_checkout_python
if ((built)); then record build ok $took "" "the programs; the test suites compile beside the end-to-end suite"; else record build failed $took; fi
bin_dir=$(swiftpm build --show-bin-path "${build_flags[@]}")

# The packages, from this build: its packaged programs linked again with the Swift runtime in,
# the .debs put together, then their tests, all beside the stages below (the end-to-end suite
# mostly waits on its peers). The package tests compare the host's accounts before and after an
# install while end-to-end tests add users: they take turns (Tests/EndToEnd/harness/host_accounts.py).
packages() {
  local t=$SECONDS
  # gzip at its fastest level: these packages are installed here and thrown away (lintian
  # refuses uncompressed ones, so they are compressed, cheaply).
  if packaging/build-deb.sh --from-build "$bin_dir" --output "$results/debs" --compression gzip --compression-level 1 \
      >"$results/debs/paths" 2>"$results/packages-build.log"; then
    local took=$((SECONDS - t))
    test_packages "$results/debs/paths" "made from the debug build in $((took / 60)) min $((took % 60)) s; both beside the other stages"
  else
    echo "packaging/build-deb.sh failed; its log:"
    tail -n 40 "$results/packages-build.log"
    record packages failed $((SECONDS - t))
  fi
}
if ((built && !quick)); then
  echo "==> the Debian packages from this build, beside the stages below (log: $results/packages.log)" >&2
  beside packages packages
fi

contract() {
  local t=$SECONDS status=ok
  python3 scripts/check-wire-names.py || status=failed
  env -i "${caller_environment[@]}" python3 scripts/package-access.py --check || status=failed
  env -i "${caller_environment[@]}" python3 scripts/check-api.py --bin-dir "$bin_dir" || status=failed
  record contract $status $((SECONDS - t))
}

# The test suites' build, then the contract and the Swift suites, in one job: SwiftPM holds a
# lock on .build while it builds, and the contract's check-api.py asks `swift package` for the
# products.
contract_and_swift_suites() {
  local t=$SECONDS status=ok
  swiftpm build --build-tests "${import_check[@]}" "${build_flags[@]}" >"$results/build-tests.log" 2>&1 || status=failed
  ( stages="$results/build-tests.stage"; record build-tests $status $((SECONDS - t)) )
  if [ $status = failed ]; then
    ( stages="$results/contract.stage"; record contract skipped 0 )
    record swift skipped 0
    return
  fi
  # The contract beside the suites: they run from their binary, without SwiftPM's lock, which
  # the contract's `swift package` takes.
  ( stages="$results/contract.stage"; contract ) >"$results/contract.log" 2>&1 &
  local contract_pid=$!
  t=$SECONDS
  # The suites' binary itself, as `swift test` runs it for Swift Testing: `swift test`, even
  # with --skip-build and no test to run, leaves SwiftPM's build state stale, and the next
  # `swift build` runs the wire-name plugin again.
  if "$bin_dir/IslandPackageTests.xctest" --testing-library swift-testing --xunit-output "$results/swift-swift-testing.xml"; then
    record swift ok $((SECONDS - t)) "$results/swift-swift-testing.xml"
  else
    record swift failed $((SECONDS - t)) "$results/swift-swift-testing.xml"
  fi
  wait "$contract_pid"
}

# A failed Swift stage's failures, and how its run ended (a crash shows there).
swift_failures() { grep -a -e '✘' -e 'error:' "$1"; echo "…"; tail -n 15 "$1"; }

# The suites' build, the contract and the Swift suites run beside the end-to-end suite: the
# end-to-end tests spend much of their time waiting on their peers (daemons starting, brokers,
# compositors), which the compiler and the Swift suites, mostly computing, fill (docs/testing.md, "Where --quick's time
# goes"). Each keeps its log and its line in the summary.
if ((built)); then
  echo "==> the Swift test suites' build, the wire contract and the public API, then the Swift test suites, beside the end-to-end suite (logs: $results/build-tests.log, $results/contract.log, $results/swift.log)" >&2
  beside swift contract_and_swift_suites

  echo "==> end-to-end suite ($workers files at a time)" >&2
  t=$SECONDS
  # Whole files, in the order collected: conftest.py puts the longest first.
  e2e=(python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder --junitxml "$results/end-to-end.xml" -o junit_family=xunit1)
  if ((${#pytest_args[@]})); then
    e2e+=("${pytest_args[@]}")  # what the caller chose, quick or not
  elif ((quick)); then
    # Not the tests that wait out a product's bound in real time (marked slow; pytest.ini).
    e2e+=(-m "quick and not slow" Tests/EndToEnd)
  else
    e2e+=(Tests/EndToEnd --ignore Tests/EndToEnd/packaging/test_package.py)
  fi
  # ISLAND_SWIFT_BUILD_FLAGS: the copied Swift example builds with the flags this build had.
  if ISLAND_BIN_DIR="$bin_dir" ISLAND_SWIFT_BUILD_FLAGS="${build_flags[*]}" "${e2e[@]}"; then
    e2e_status=ok
  else
    # pytest's 5 is "no tests collected": a filter that matched nothing here is not a failure.
    if (($? == 5)); then e2e_status=ok; else e2e_status=failed; fi
  fi
  e2e_took=$((SECONDS - t))
  wait_beside swift
  join_stage build-tests grep -a -e 'error:' -e 'warning:'
  join_stage contract
  join_stage swift swift_failures
  record end-to-end $e2e_status $e2e_took "$results/end-to-end.xml"
else
  record contract skipped 0
  record swift skipped 0
  record end-to-end skipped 0
fi

if ((built && !quick)); then
  echo "==> Debian packages (made from the debug build and tested beside the stages above)" >&2
  wait_beside packages
  join_stage packages
else
  record packages skipped 0
fi

python3 scripts/test-summary.py "$stages" "$results" $((SECONDS - started))
