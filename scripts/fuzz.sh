#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of Fuzz/: coverage-guided fuzzing of what a peer's bytes
# and an extension's layouts go through, under AddressSanitizer.
#
# Usage: scripts/fuzz.sh [--build-only | --merge | --help] [TARGET|all] [SECONDS] [-- LIBFUZZER-ARGS…]
#
#   TARGET      fuzz-varlink-message, fuzz-layout, fuzz-presenter, fuzz-artwork, or all (the default: one after another)
#   SECONDS     how long each target runs (default 120); 0 only replays the corpus once
#   --build-only  only build the fuzz binaries
#   --merge     after the run, minimize the checked-in corpus plus what the run found into
#               Fuzz/Corpus/TARGET/ (libFuzzer -set_cover_merge=1 on edge coverage); without it
#               the repository is untouched
#   LIBFUZZER-ARGS are passed on, e.g. -- -seed=1 -only_ascii=1
#
# Builds with ISLAND_FUZZ=1 (which adds the fuzz products to Package.swift) in .build-fuzz/,
# release, --sanitize=fuzzer,address. Each run is one process on one core, on the corpus
# Fuzz/Corpus/TARGET/ (read only) plus .build-fuzz/corpus/TARGET/ (where new inputs go), with
# the dictionary Fuzz/Dictionaries/TARGET.dict. A crash, a sanitizer report, an input slower
# than 10 s or a broken invariant stops the run with exit status 1 and leaves the input in
# .build-fuzz/artifacts/TARGET/; replay it with
# `ASAN_OPTIONS=detect_leaks=0 .build-fuzz/release/TARGET FILE`. Every crash becomes a unit
# test (see Fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -e/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; }
targets_all=(fuzz-varlink-message fuzz-layout fuzz-presenter fuzz-artwork)
build_only=0 merge=0 target=all seconds=120 extra=()
positional=()
while (($#)); do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --build-only) build_only=1 ;;
    --merge) merge=1 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "unknown option $1" >&2; usage >&2; exit 2 ;;
    *) positional+=("$1") ;;
  esac
  shift
done
((${#positional[@]} <= 2)) || { usage >&2; exit 2; }
[ -n "${positional[0]:-}" ] && target="${positional[0]}"
[ -n "${positional[1]:-}" ] && seconds="${positional[1]}"
case "$target" in
  all) targets=("${targets_all[@]}") ;;
  fuzz-varlink-message|fuzz-layout|fuzz-presenter|fuzz-artwork) targets=("$target") ;;
  *) echo "unknown target '$target'; expected one of: ${targets_all[*]}, all" >&2; exit 2 ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "SECONDS must be a whole number, not '$seconds'" >&2; exit 2; }

scratch=.build-fuzz
# --sanitize fuzzer makes SwiftPM instrument C targets and leave main to libFuzzer. Swift gets
# one -sanitize= for both, after SwiftPM's own: the Swift driver keeps only the last of several,
# and two --sanitize options reach it in no fixed order (a module could lose its coverage).
build=(--scratch-path "$scratch" -c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address)
for t in "${targets[@]}"; do
  echo "==> building $t (release, --sanitize=fuzzer,address, in $scratch/)" >&2
  ISLAND_FUZZ=1 swift build "${build[@]}" --product "$t"
done
bin="$(ISLAND_FUZZ=1 swift build "${build[@]}" --show-bin-path)"
((build_only)) && exit 0

symbolizer="$(dirname "$(readlink -f "$(command -v swift)")")/llvm-symbolizer"
[ -x "$symbolizer" ] || symbolizer="$(command -v llvm-symbolizer || true)"
# No leak checking: Swift stores enum case tags in the spare bits of payload pointers (JSON,
# VarlinkType), so LeakSanitizer does not recognize those references and reports the values
# of every long-lived global as leaked. Memory errors are still reported by ASan.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=0:external_symbolizer_path=$symbolizer${ASAN_OPTIONS:+:$ASAN_OPTIONS}"

status=0
for t in "${targets[@]}"; do
  corpus="Fuzz/Corpus/$t" found="$scratch/corpus/$t" artifacts="$scratch/artifacts/$t"
  mkdir -p "$corpus" "$found" "$artifacts"
  what=$( ((seconds > 0)) && echo "for $seconds s" || echo "replaying the corpus" )
  echo "==> $t $what: $corpus/ ($(ls "$corpus" | wc -l) inputs) + $found/" >&2
  rc=0
  "$bin/$t" "$found" "$corpus" \
    -dict="Fuzz/Dictionaries/$t.dict" -max_len=8192 -timeout=10 -rss_limit_mb=2048 -detect_leaks=0 \
    $( ((seconds > 0)) && echo "-max_total_time=$seconds" || echo "-runs=0" ) -print_final_stats=1 -artifact_prefix="$artifacts/" \
    ${extra[@]+"${extra[@]}"} || rc=$?
  if ((rc != 0)); then
    echo "==> $t: FAILED (exit status $rc); the input is in $artifacts/:" >&2
    ls -t "$artifacts" | head -5 >&2
    status=1
    continue
  fi
  if ((merge)); then
    merged="$scratch/merged/$t"
    rm -rf "$merged" && mkdir -p "$merged"
    # A smallest set of inputs that still reaches every edge (hit counts are not kept).
    "$bin/$t" -set_cover_merge=1 -use_counters=0 -max_len=8192 -timeout=10 -detect_leaks=0 \
      "$merged" "$corpus" "$found" 2>&1 | grep -E '^MERGE-OUTER: [0-9]+ new' >&2 || true
    # Replace the checked-in corpus with the minimized one (files are named by their SHA-1).
    find "$corpus" -maxdepth 1 -type f -delete
    cp "$merged"/* "$corpus"/
    echo "==> $t: corpus minimized to $(ls "$corpus" | wc -l) inputs, $(du -sh "$corpus" | cut -f1)" >&2
  fi
done
exit "$status"
