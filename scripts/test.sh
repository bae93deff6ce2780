#!/usr/bin/env bash
# The test command: installs what the tests need, builds everything once (debug), and runs
# every suite — unit tests, and the end-to-end tests that start the real binaries and the
# reference Python varlink implementation. Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "==> building (debug, with tests)" >&2
swift build --build-tests

echo "==> running the test suites" >&2
swift test --skip-build
