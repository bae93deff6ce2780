#!/usr/bin/env bash
# The test command. Installs what the tests need (scripts/install-deps.sh), builds everything
# once in debug, then runs every stage even when an earlier one failed:
#   format      the Swift is formatted as .swift-format says (scripts/format.sh --check)
#   contract    no client spells a name of an Island interface by hand
#               (scripts/check-wire-names.py), nothing is public in a module that is no product
#               (scripts/package-access.py --check), and every library product's public API
#               is the one checked into api/ (scripts/check-api.py)
#   swift       the Swift suites: unit tests, and integration tests that start the real
#               binaries and the reference Python varlink implementation
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
#   --quick      the inner loop's subset, in about two minutes after a build: the Swift
#                suites and the end-to-end tests marked `quick` (they start the real daemon);
#                no packages
#   --workers N  end-to-end tests run N files at a time (default 5; ISLAND_TEST_WORKERS)
#   PYTEST-ARGS  passed to pytest, e.g. `-- -k push` or `-- Tests/EndToEnd/daemon`
#   --release-packages
#                only the packages as they ship: the release build (packaging/build-deb.sh,
#                xz as released), then the package tests on those .debs; run it before a release
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

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
    -h|--help) sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown option $1 (try --help)" >&2; exit 2 ;;
  esac
done

results="$repo/.build/test-results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$results"
export ISLAND_TEST_LOGS="$results/kept"
stages="$results/stages"
: >"$stages"
started=$SECONDS

# One line per stage for the summary: name, status (ok, failed, skipped), seconds, JUnit file,
# and a note.
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "${4:-}" "${5:-}" >>"$stages"; }

echo "==> installing what the tests need" >&2
t=$SECONDS
if bash scripts/install-deps.sh; then record install ok $((SECONDS - t)); else record install failed $((SECONDS - t)); fi

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

echo "==> formatting" >&2
t=$SECONDS
if scripts/format.sh --check >"$results/format.log" 2>&1; then
  record format ok $((SECONDS - t))
else
  record format failed $((SECONDS - t)) "" "$(grep -c 'error:' "$results/format.log") findings in $results/format.log; scripts/format.sh fixes them"
fi

echo "==> building (debug, with tests)" >&2
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
if swift build --build-tests --explicit-target-dependency-import-check error "${build_flags[@]}" 2>&1 | tee "$results/build.log"; then
  record build ok $((SECONDS - t))
  built=1
else
  record build failed $((SECONDS - t)) ; built=0
fi
bin_dir=$(swift build --show-bin-path "${build_flags[@]}")

# The packages, from this build: its packaged programs linked again with the Swift runtime in,
# the .debs put together, then their tests, all in the background beside the stages below
# (the end-to-end suite mostly waits on its peers). The package tests compare the host's
# accounts before and after an install while end-to-end tests add users: they take turns
# (Tests/EndToEnd/harness/host_accounts.py). The stage's line is written to a file of its
# own and joins the summary in its place at the end.
packages_pid=""
if ((built && !quick)); then
  echo "==> the Debian packages from this build, in the background (log: $results/packages.log)" >&2
  (
    stages="$results/packages.stage"
    t=$SECONDS
    if packaging/build-deb.sh --from-build "$bin_dir" --output "$results/debs" --compression gzip \
        >"$results/debs/paths" 2>"$results/packages-build.log"; then
      took=$((SECONDS - t))
      test_packages "$results/debs/paths" "made from the debug build in $((took / 60)) min $((took % 60)) s; both beside the other stages"
    else
      echo "packaging/build-deb.sh failed; its log:"
      tail -n 40 "$results/packages-build.log"
      record packages failed $((SECONDS - t))
    fi
  ) >"$results/packages.log" 2>&1 &
  packages_pid=$!
  # Interrupted, the run takes its background job down with it (by pid).
  stop_tree() { local child; for child in $(pgrep -P "$1"); do stop_tree "$child"; done; kill "$1" 2>/dev/null; }
  trap 'stop_tree "$packages_pid"; exit 130' INT TERM
fi

if ((built)); then
  echo "==> the wire contract and the public API" >&2
  t=$SECONDS
  contract=ok
  python3 scripts/check-wire-names.py || contract=failed
  python3 scripts/package-access.py --check || contract=failed
  python3 scripts/check-api.py --bin-dir "$bin_dir" || contract=failed
  record contract $contract $((SECONDS - t))

  echo "==> Swift test suites" >&2
  t=$SECONDS
  if swift test --skip-build "${build_flags[@]}" --xunit-output "$results/swift.xml" 2>&1 | tee "$results/swift.log"; then
    record swift ok $((SECONDS - t)) "$results/swift-swift-testing.xml"
  else
    record swift failed $((SECONDS - t)) "$results/swift-swift-testing.xml"
  fi

  echo "==> end-to-end suite ($workers files at a time)" >&2
  t=$SECONDS
  # Whole files, in the order collected: conftest.py puts the longest first.
  e2e=(python3 -m pytest -q -n "$workers" --dist loadfile --no-loadscope-reorder --junitxml "$results/end-to-end.xml" -o junit_family=xunit1)
  if ((${#pytest_args[@]})); then
    e2e+=("${pytest_args[@]}")  # what the caller chose, quick or not
  elif ((quick)); then
    e2e+=(-m quick Tests/EndToEnd)
  else
    e2e+=(Tests/EndToEnd --ignore Tests/EndToEnd/packaging/test_package.py)
  fi
  # ISLAND_SWIFT_BUILD_FLAGS: the copied Swift example builds with the flags this build had.
  if ISLAND_BIN_DIR="$bin_dir" ISLAND_SWIFT_BUILD_FLAGS="${build_flags[*]}" "${e2e[@]}"; then
    record end-to-end ok $((SECONDS - t)) "$results/end-to-end.xml"
  else
    status=$?
    # pytest's 5 is "no tests collected": a filter that matched nothing here is not a failure.
    if ((status == 5)); then record end-to-end ok $((SECONDS - t)) "$results/end-to-end.xml"
    else record end-to-end failed $((SECONDS - t)) "$results/end-to-end.xml"; fi
  fi
else
  record contract skipped 0
  record swift skipped 0
  record end-to-end skipped 0
fi

if [ -n "$packages_pid" ]; then
  echo "==> Debian packages (made from the debug build and tested beside the stages above)" >&2
  t=$SECONDS
  wait "$packages_pid"
  cat "$results/packages.log" >&2
  if [ -s "$results/packages.stage" ]; then
    cat "$results/packages.stage" >>"$stages"
  else
    record packages failed $((SECONDS - t)) "" "the background job ended without a result: $results/packages.log"
  fi
elif ((quick)); then
  record packages skipped 0
elif ((!built)); then
  record packages skipped 0
fi

python3 scripts/test-summary.py "$stages" "$results" $((SECONDS - started))
