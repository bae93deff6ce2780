#!/usr/bin/env python3
"""`package`, not `public`, in the modules that are no product.

A module that no library product of Package.swift contains is Island's own: what crosses from it
into another module of the package is `package`, so nothing outside the package can import it
and no one mistakes it for supported API (docs/public-api.md). This script rewrites every `public`
declaration modifier (and `public import`) of those modules to `package`; the compiler then checks
that no product's public declaration leans on one, and warns of a `package import` that no package
declaration needs, which then becomes a plain `import`.

Usage: scripts/package-access.py           rewrite
       scripts/package-access.py --check   list what is still `public`; exit 1 if anything is
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# Modules that are no product but must stay public, and why.
KEEP_PUBLIC = {
    # VarlinkCore re-exports it (`@_exported public import VarlinkIDL`): its types are part of
    # VarlinkCore's public API.
    "VarlinkIDL",
}
DECLARATION = (r"import|func|var|let|struct|enum|class|final|actor|protocol|extension|init|deinit|static|"
               r"typealias|subscript|associatedtype|nonisolated|mutating|nonmutating|convenience|required|"
               r"override|indirect|lazy|dynamic|weak|unowned|consuming|borrowing|macro|operator|"
               r"precedencegroup|private\(set\)|internal\(set\)|fileprivate\(set\)|@")
MODIFIER = re.compile(r"(?<![\w`.\"])public(?=\s+(?:" + DECLARATION + r"))")


def modules():
    """(name, folder) of every Swift module that is no library product."""
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
    in_products = {t for p in manifest["products"] if "library" in p["type"] for t in p["targets"]}
    for target in manifest["targets"]:
        name = target["name"]
        if target["type"] != "regular" or name in in_products or name in KEEP_PUBLIC:
            continue
        if target.get("path"):
            folder = ROOT / target["path"]
        else:
            folder = next((ROOT / base / name for base in ("Libraries/Sources", "Sources")
                           if (ROOT / base / name).is_dir()), None)
        if folder and any(folder.rglob("*.swift")):
            yield name, folder


def code_lines(text):
    """Line numbers and lines that are code, not comments (a /* */ block or a // line)."""
    in_block = False
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        stripped = line.strip()
        if in_block:
            if "*/" in stripped:
                in_block = False
            continue
        if stripped.startswith("/*") and "*/" not in stripped:
            in_block = True
            continue
        if stripped.startswith("//"):
            continue
        yield number, line


def main(argv):
    check = "--check" in argv
    remaining = []
    rewritten = 0
    for name, folder in modules():
        for path in sorted(folder.rglob("*.swift")):
            text = path.read_text()
            lines = text.splitlines(keepends=True)
            changed = False
            for number, line in code_lines(text):
                # Only the code before a trailing comment.
                code, sep, comment = line.partition("//")
                if not MODIFIER.search(code):
                    continue
                if check:
                    remaining.append(f"{path.relative_to(ROOT)}:{number}: public in {name}, which is no product")
                    continue
                count = len(MODIFIER.findall(code))
                lines[number - 1] = MODIFIER.sub("package", code) + sep + comment
                rewritten += count
                changed = True
            if changed:
                path.write_text("".join(lines))
    if check:
        for line in remaining:
            print(line)
        if remaining:
            print(f"{len(remaining)} public declarations in modules that are no product: "
                  "make them package (scripts/package-access.py)")
            return 1
        return 0
    print(f"{rewritten} public modifiers made package", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
