#!/usr/bin/env python3
"""Fails when a client of islandd, or islandd itself, or its rules, spell a name of an Island interface by hand.

The interfaces are data (Protocol/*.varlink) and their names are generated as Swift constants
(Protocol/WireNames.varlinkmap: AdminNames.SetFocus.method, AdminNames.Focus.on, ...), so that
renaming a member in a .varlink file stops every use of it from compiling. A string literal in a
client bypasses that: this check finds, in the clients' Swift,

  - a qualified method or error name of an Island interface ("org.island.Admin.SetFocus"), or an
    interface's name ("org.island.Connection");
  - a member name of an Island interface read or written as a JSON key: `reply["limit"]`, or
    `"app": value` in the parameters of a call (a line that names a method);
  - an error's name alone (`case .denied: "Denied"`), as a mapping to the qualified name would
    spell it; and
  - a value of an enum of an Island interface compared or matched as a string
    (`kind == "snapshot"`, `case "stale":`), or written in a call's parameters: the names have
    them as constants too (PresenterNames.Update.Kind.snapshot).

IslandCore, the rules, makes org.island's errors (IslandError, a push's PushRefusal) with names
of its own (Sources/IslandCore/Activities/ErrorNames.varlinkmap): it is checked for qualified and
error names only, since the documents it reads and writes (layouts, APNs payloads,
configuration) are not the wire.

The daemon's Swift is checked too, where it makes its replies and errors as JSON objects: there,
besides the above, any key that is a member name and whose value is made as JSON
(`"on": .bool(on)`: `.string(`, `.bool(`, `.int(`, `.double(`, `.array(`, `.object(`, `.null`,
`true`, `false`, a nested literal or a `Wire.` value). Its JSONText writers
(`text.member("id", string: ...)`, on the update path) take StaticString keys, which no generated
name can be; they are left to the tests that read what they write, and a literal that is one
says so on its line: `// StaticString key: <why>`.

A key that is a member name by coincidence (a JSON document of the client's own, a D-Bus
property) is let through by OTHER_DOCUMENTS below, which says whose it is, or by a comment on its
line: `// not Island's wire: <whose>`.

Usage: scripts/check-wire-names.py [--daemon] [FILE...]
  (default: every client's, the daemon's and IslandCore's Swift; --daemon checks the FILEs as the
  daemon's)
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Every module that calls islandd or reads what it sends, as opposed to the daemon itself.
CLIENTS = [
    "Sources/island", "Sources/IslandKit", "Sources/IslandKitTesting",
    "Sources/island-presenter", "Sources/IslandPresenter",
    "Sources/island-overlay", "Sources/IslandOverlay",
    "Sources/island-bridge", "Sources/IslandBridge",
    "Examples/swift/Sources",
]
# The daemon, which makes what the clients read.
DAEMON = ["Sources/IslandDaemon"]
# The rules, whose refusals are org.island's errors: checked for qualified and error names only.
RULES = ["Sources/IslandCore"]
WAIVER = "not Island's wire:"
STATIC_KEY = "StaticString key:"
# Keys that are a member name of an Island interface by coincidence, by file: whose they are.
OTHER_DOCUMENTS = {
    "Sources/island/PushCommand.swift": (
        {"timestamp", "activity", "pushToken", "deliverAt", "reason", "error", "parameters",
         "alertSuppressed", "alertSuppressedReason", "alert", "attributes", "expiration"},
        "the APNs-shaped push and the feedback a device publishes over MQTT (IslandCore's PushRequest "
        "and PushFeedback), no Varlink call"),
    "Sources/island/ChannelCommand.swift": (
        {"created", "channel", "latest", "alert", "timestamp", "activity", "deliverAt", "feedback", "reason", "error", "expiration"},
        "a channel's record and messages at the broker, and the feedback a device publishes over MQTT (IslandCore's "
        "PushChannel and PushFeedback), no Varlink call"),
    "Sources/island/Preview/PreviewCommand.swift": ({"url"}, "the preview's own JSON output"),
    "Sources/IslandDaemon/Push/MQTTPushLink.swift": ({"app", "channel", "kind"}, "the log's metadata"),
    "Sources/IslandKit/LayoutView.swift": ({"url", "expanded"}, "the layout document (docs/layouts.md)"),
    "Sources/IslandPresenter/BarClick.swift": ({"button"}, "a status bar's click event (i3bar, waybar)"),
    "Sources/IslandPresenter/ClickTargets.swift": ({"id"}, "the presenter's own click-target file"),
    "Sources/IslandOverlay/OverlayMotion.swift": ({"island"}, "a spring's shape id"),
    "Sources/island-bridge/Bridge.swift": ({"source"}, "the attributes of the bridge's own activities"),
    "Sources/IslandBridge/Book/BridgedActivity.swift": ({"source"}, "the attributes of the bridge's own activities"),
    "Sources/IslandBridge/Identity/SourceApp.swift": ({"app"}, "the attributes of the bridge's own activities"),
    "Sources/IslandBridge/ActivitySources/Notifications/ProgressNotifications.swift": (
        {"body"}, "the content state of the bridge's own activities"),
    "Sources/IslandDaemon/Subscriptions/ScreenSharing.swift": (
        {"name", "lockScreen", "expanded"}, "the daemon's own layout for hidden activities (docs/layouts.md)"),
    "Sources/IslandDaemon/Subscriptions/SessionLock.swift": (
        {"name", "lockScreen", "expanded"}, "the daemon's own layout for private activities (docs/layouts.md)"),
}


def interfaces():
    """(qualified names, member names, error names, enum values) of every Island interface."""
    qualified, members, errors, values = set(), set(), set(), set()
    for path in sorted((ROOT / "Protocol").glob("org.island*.varlink")):
        text = re.sub(r"#[^\n]*", "", path.read_text())
        interface = re.search(r"^\s*interface\s+(\S+)", text, re.M).group(1)
        qualified.add(interface)
        for kind, name in re.findall(r"^\s*(method|error)\s+([A-Za-z0-9]+)", text, re.M):
            qualified.add(f"{interface}.{name}")
            if kind == "error":
                errors.add(name)
        # Every `name:` inside a parenthesised list is a member: of a type, a method's
        # parameters or reply, or an error.
        members.update(re.findall(r"[(,]\s*([a-z][A-Za-z0-9_]*)\s*:", text))
        # A parenthesised list of names without types is an enum's values.
        for body in re.findall(r"\(([^():]*)\)", text):
            values.update(value.strip() for value in body.split(",") if value.strip())
    return qualified, members, errors, values


def code_of(line):
    """The line without a trailing // comment (outside string literals)."""
    in_string = False
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and in_string:
            i += 2
            continue
        if c == '"':
            in_string = not in_string
        elif not in_string and line.startswith("//", i):
            return line[:i]
        i += 1
    return line


def main(argv):
    qualified, members, errors, values = interfaces()
    as_daemon = "--daemon" in argv
    argv = [a for a in argv if a != "--daemon"]
    files = [pathlib.Path(a) for a in argv] or [
        p for module in CLIENTS + DAEMON + RULES for p in sorted((ROOT / module).rglob("*.swift"))]
    literal = re.compile(r'"((?:[^"\\]|\\.)*)"')
    subscript = re.compile(r'\[\s*"([A-Za-z][A-Za-z0-9_]*)"\s*\]')
    dictionary_key = re.compile(r'"([A-Za-z][A-Za-z0-9_]*)"\s*:(?!:)')
    json_key = re.compile(
        r'"([A-Za-z][A-Za-z0-9_]*)"\s*:\s*(?:\.(?:string|bool|int|double|array|object)\(|\.null\b|true\b|false\b|\[|Wire\.)')
    call = re.compile(r'Names\.[A-Za-z]+\.method\b|"org\.island\.[A-Za-z]+\.[A-Z]')
    # A string compared (`== "stale"`, `"stale" !=`) or matched (`case "stale", "ended":`).
    compared = re.compile(r'[=!]=\s*"([a-z][A-Za-z0-9]*)"|"([a-z][A-Za-z0-9]*)"\s*[=!]=')
    matched = re.compile(r'\bcase\s+((?:"[a-z][A-Za-z0-9]*"\??\s*,\s*)*"[a-z][A-Za-z0-9]*"\??)\s*:')
    found = []
    for path in files:
        try:
            relative = str(path.resolve().relative_to(ROOT))
        except ValueError:
            relative = str(path)
        others = OTHER_DOCUMENTS.get(relative, (set(), ""))[0]
        daemon = as_daemon or any(relative.startswith(module + "/") for module in DAEMON)
        rules = any(relative.startswith(module + "/") for module in RULES)
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if line.lstrip().startswith("//") or WAIVER in line or STATIC_KEY in line:
                continue
            code = code_of(line)
            for match in literal.finditer(code):
                text = match.group(1)
                if text in qualified or text.rstrip(".") in qualified and text.endswith("."):
                    found.append((path, number, f'"{text}" is a generated name'))
                elif text in errors:
                    found.append((path, number, f'"{text}" is an error of an Island interface'))
            if rules:
                continue
            compared_values = [a or b for a, b in compared.findall(code)]
            compared_values += [v for case in matched.findall(code) for v in re.findall(r'"([a-z][A-Za-z0-9]*)"', case)]
            if call.search(code):
                compared_values += [text for text in literal.findall(code) if text in values and text not in members]
            for value in dict.fromkeys(compared_values):
                if value in values:
                    found.append((path, number, f'"{value}" is a value of an enum of an Island interface'))
            keys = subscript.findall(code) + (
                dictionary_key.findall(code) if call.search(code) else json_key.findall(code) if daemon else [])
            for name in keys:
                if name in members and name not in others:
                    found.append((path, number, f'"{name}" is a member of an Island interface'))
    for path, number, what in found:
        try:
            shown = path.resolve().relative_to(ROOT)
        except ValueError:
            shown = path
        print(f"{shown}:{number}: {what}: use the constant from Protocol/WireNames.varlinkmap "
              f"(IslandCore: Activities/ErrorNames.varlinkmap) (or say `// {WAIVER} <whose>` if it is not one)")
    if found:
        print(f"{len(found)} hand-spelled names of Island interfaces in the clients, the daemon and the rules")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
