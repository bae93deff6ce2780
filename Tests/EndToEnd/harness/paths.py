"""Where the repository and the binaries under test are."""

import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BIN_DIR = os.path.abspath(os.environ.get("ISLAND_BIN_DIR") or os.path.join(REPO, ".build", "debug"))
ISLANDD = os.path.join(BIN_DIR, "islandd")
ISLAND = os.path.join(BIN_DIR, "island")
PRESENTER = os.path.join(BIN_DIR, "island-presenter")
CLI_MANIFEST = os.path.join(REPO, "packaging", "applications", "org.island.cli.desktop")

# Under scripts/sanitize.sh the binaries are built with AddressSanitizer or ThreadSanitizer and
# every instrumented process (the daemon, the CLI, the presenter) writes its reports to a file of
# its own in ISLAND_SANITIZER_LOGS (the options' log_path): a report there fails the test during
# which it appeared. SANITIZER_ENV is what a test must pass on when it starts one of our
# binaries with an environment of its own (systemd-socket-activate -E, a tmux pane).
SANITIZER = os.environ.get("ISLAND_SANITIZER")
# Sanitized builds run several times slower: deadlines stretch by this much, assertions do not.
SLOWDOWN = 5 if SANITIZER else 1
SANITIZER_LOGS = os.environ.get("ISLAND_SANITIZER_LOGS")
SANITIZER_ENV = {k: v for k, v in os.environ.items()
                 if k in ("ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "SWIFT_BACKTRACE")}

# How long a test waits for something that must happen at all (a daemon listening, an update
# arriving). Waits return as soon as it happens, so the bound is generous: a busy machine (CI
# runs beside other work) is slow, not broken. A verdict never depends on a shorter gap.
LIVENESS = 30.0 * SLOWDOWN
