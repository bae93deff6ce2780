#!/usr/bin/env bash
# The test command: installs what the tests need, builds everything once (debug), then runs
# the Swift suites (unit tests, and integration tests that start the real binaries and the
# reference Python varlink implementation) and the end-to-end suite, which drives the real
# islandd with the reference Python client. Exits non-zero when any test fails.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh

echo "==> building (debug, with tests)" >&2
swift build --build-tests

echo "==> Swift test suites" >&2
swift test --skip-build

echo "==> end-to-end suite (islandd + reference Python varlink client)" >&2
ISLAND_BIN_DIR="$(swift build --show-bin-path)" python3 -m pytest -q -p no:cacheprovider Tests/EndToEnd
