#!/usr/bin/env python3
"""The end of scripts/test.sh: one line per stage, the failed tests by name, where their logs
are, and the last line `N passed, M failed, K skipped`. Exits 1 if anything failed.

Usage: test-summary.py STAGES RESULTS SECONDS
  STAGES   lines of `name<TAB>status<TAB>seconds<TAB>junit-file<TAB>note` written by test.sh
  RESULTS  the run's folder (kept logs of failed tests are under RESULTS/kept)
  SECONDS  the whole run's duration
"""

import os
import sys
import xml.etree.ElementTree as ET


def duration(seconds):
    seconds = int(seconds)
    return "%d min %02d s" % divmod(seconds, 60) if seconds >= 60 else "%d s" % seconds


def counts(path):
    """(passed, failed, skipped, [failed test names]) from a JUnit XML file."""
    passed = failed = skipped = 0
    names = []
    root = ET.parse(path).getroot()
    for case in root.iter("testcase"):
        name = "%s::%s" % (case.get("classname", ""), case.get("name", ""))
        if case.find("failure") is not None or case.find("error") is not None:
            # pytest reports a test that failed and whose teardown errored twice.
            if name not in names:
                failed += 1
                names.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, names


def main(stages_path, results, seconds):
    total_passed = total_failed = total_skipped = 0
    lines, failures = [], []
    with open(stages_path) as f:
        stages = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    for name, status, took, junit, note in stages:
        text = "%-12s %s" % (name + ":", status)
        if junit and os.path.exists(junit):
            passed, failed, skipped, names = counts(junit)
            total_passed, total_failed, total_skipped = total_passed + passed, total_failed + failed, total_skipped + skipped
            text = "%-12s %d passed, %d failed" % (name + ":", passed, failed) + (", %d skipped" % skipped if skipped else "")
            failures += ["%s: %s" % (name, n) for n in names]
            if status == "failed" and not failed:
                # The runner failed without a failed test (a crash, a collection error): count it.
                total_failed += 1
                text += " (the runner itself failed: see its output above)"
                failures.append("%s: the runner exited non-zero" % name)
        elif status == "failed":
            total_failed += 1
            failures.append("%s: the stage failed" % name)
        if took and took != "0":
            text += " (%s%s)" % (duration(took), "; " + note if note else "")
        lines.append(text)
    print()
    print("==> summary (%s, results in %s)" % (duration(seconds), results))
    for line in lines:
        print("  " + line)
    if failures:
        print("failed:")
        for failure in failures:
            print("  " + failure)
        kept = os.path.join(results, "kept")
        if os.path.isdir(kept) and os.listdir(kept):
            print("logs and screenshots of the failed end-to-end tests: %s" % kept)
    print("%d passed, %d failed" % (total_passed, total_failed) + (", %d skipped" % total_skipped if total_skipped else ""))
    return 1 if total_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3]))
