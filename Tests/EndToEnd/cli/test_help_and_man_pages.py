"""Every executable's --help agrees with its man page in packaging/man, and reads as written.

Docs stay true in the same commit (CONTRIBUTING.md): what --help offers, the page describes.
The package tests check the installed pages of the single-program packages and island's
subcommand names (packaging/test_package.py); this checks every program and every subcommand
of the build, without a package:
- each option any (sub)command's --help lists is in the program's page;
- the exit statuses --help's "Exit status" lists are the page's EXIT STATUS (a page's 130 and
  143 are --help's 128+N);
- --help is not garbled by its 80-column wrap: no default said twice, and no example or table
  row whose end the wrap put at the start of the next line, where a reader copying the
  example's first line runs half a command.
"""

import os
import re
import subprocess

import pytest

from harness.paths import BIN_DIR, REPO

PAGES = {
    "islandd": "islandd.8",
    "island": "island.1",
    "island-presenter": "island-presenter.1",
    "island-overlay": "island-overlay.1",
    "island-bridge": "island-bridge.1",
}
# ArgumentParser wraps at the terminal's width, and at 80 columns without one, as here.
ENVIRONMENT = dict(os.environ, COLUMNS="80")


def help_text(command):
    result = subprocess.run([os.path.join(BIN_DIR, command[0]), *command[1:], "--help"],
                            capture_output=True, text=True, timeout=60, env=ENVIRONMENT)
    assert result.returncode == 0, "%s --help: %s" % (" ".join(command), result.stderr)
    return result.stdout


def commands(command):
    """The command and every subcommand under it, each with its --help."""
    text = help_text(command)
    found = [(command, text)]
    if "SUBCOMMANDS:" in text:
        for name in re.findall(r"^  ([a-z][a-z0-9-]+) {2,}", text.split("SUBCOMMANDS:")[1], re.M):
            found += commands(command + (name,))
    return found


def page_source(binary):
    with open(os.path.join(REPO, "packaging/man", PAGES[binary])) as f:
        return f.read().replace("\\-", "-")


@pytest.fixture(scope="module", params=sorted(PAGES))
def program(request):
    return request.param, commands((request.param,)), page_source(request.param)


def test_every_option_and_subcommand_is_in_the_man_page(program):
    binary, helps, page = program
    assert len(helps) >= 1
    missing = []
    for command, text in helps:
        if len(command) > 1 and not re.search(r"\b%s\b" % re.escape(command[-1]), page):
            missing.append(" ".join(command))
        for option in sorted(set(re.findall(r"(--[a-z][a-z0-9-]+)", text.split("USAGE:")[1]))):
            if option not in ("--help", "--version") and option not in page:
                missing.append("%s %s" % (" ".join(command), option))
    assert not missing, "in --help but not in %s: %s" % (PAGES[binary], ", ".join(missing))


def exit_statuses_of_the_page(page):
    section = re.search(r"^\.SH \"?EXIT STATUS\"?\n(.*?)^\.SH ", page, re.M | re.S)
    assert section, "no EXIT STATUS section"
    statuses = set()
    for item in re.findall(r"^\.TP\n\.BR? (.*)$", section.group(1), re.M):
        statuses |= {int(n) for n in re.findall(r"\b\d+\b", item)}
    return statuses


def exit_statuses_of_the_help(text):
    paragraph = re.search(r"^Exit status:?(.*?)(?:\n\n|\nUSAGE:)", text, re.M | re.S)
    assert paragraph, "no Exit status paragraph in --help"
    said = paragraph.group(1)
    by_signal = "128+N" in said
    return {int(n) for n in re.findall(r"\b\d+\b", said.replace("128+N", ""))}, by_signal


def test_exit_statuses_agree(program):
    binary, helps, page = program
    in_help, by_signal = exit_statuses_of_the_help(helps[0][1])
    in_page = exit_statuses_of_the_page(page)
    if by_signal:
        in_page = {status for status in in_page if status < 128 or status in in_help}
    assert in_help == in_page, "%s --help says %s, %s says %s" % (binary, sorted(in_help), PAGES[binary], sorted(in_page))


def test_help_is_not_broken_by_its_wrap(program):
    binary, helps, _ = program
    broken = []
    for command, text in helps:
        name = " ".join(command)
        flat = re.sub(r"\s+", " ", text)
        for twice in re.findall(r"\(default: ([^)]*)\)\.? \(default: \1\)", flat):
            broken.append("%s: the default %s said twice" % (name, twice))
        lines = text.split("\n")
        for before, line in zip(lines, lines[1:]):
            # An indented line (an example, a table row) followed by one at the margin that
            # starts no sentence or heading: the rest of the indented one, wrapped.
            if before.startswith(" ") and before.strip() and line and not line[0].isspace() and not line[0].isupper():
                broken.append("%s: %r after %r" % (name, line, before.strip()))
    assert not broken, "\n".join(broken)


def test_a_usage_error_exits_with_a_status_both_list(program):
    binary, helps, page = program
    result = subprocess.run([os.path.join(BIN_DIR, binary), "--no-such-option"],
                            capture_output=True, text=True, timeout=60, env=ENVIRONMENT)
    assert "--no-such-option" in result.stderr
    in_help, _ = exit_statuses_of_the_help(helps[0][1])
    assert result.returncode in in_help and result.returncode in exit_statuses_of_the_page(page), \
        "%s exits %d on a usage error; --help lists %s" % (binary, result.returncode, sorted(in_help))


@pytest.mark.parametrize("binary", ["islandd", "island-bridge"])
def test_an_unknown_log_level_is_told_the_levels(binary):
    result = subprocess.run([os.path.join(BIN_DIR, binary), "--log-level", "loud"],
                            capture_output=True, text=True, timeout=60, env=ENVIRONMENT)
    assert result.returncode == 64
    assert "'loud'" in result.stderr and "trace, debug, info, notice, warning, error or critical" in result.stderr


def test_the_waybar_classes_are_the_same_in_the_page_and_both_helps():
    """`island-presenter waybar --help` said alt was the island's mode (it is the chip) and named
    two of the four classes the page and the module name, the program's own help three."""
    page = page_source("island-presenter")
    item = re.search(r"^\.B class\n(.*?)^\.TP", page, re.M | re.S).group(1)
    classes = set(re.findall(r"^\.BR? (stale|alert|focus|sharing)\b", item, re.M))
    assert classes == {"stale", "alert", "focus", "sharing"}, item
    for command in (("island-presenter",), ("island-presenter", "waybar")):
        text = re.sub(r"\s+", " ", help_text(command))
        missing = sorted(name for name in classes if '"%s"' % name not in text)
        assert not missing, "%s --help does not name the classes %s" % (" ".join(command), missing)
    assert "alt is the chip" in re.sub(r"\s+", " ", help_text(("island-presenter", "waybar")))
