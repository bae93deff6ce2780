#!/usr/bin/env python3
"""The public API of every library product, as a list checked into api/<Module>.txt.

Each product's modules are read from the build (swift-symbolgraph-extract over the debug build's
.swiftmodule files): every public symbol, with its declaration, and every public conformance,
one per line, sorted. The check fails when that list differs from the checked-in one, so a change
to what the package promises (docs/public-api.md) is made on purpose and shows in review: after a
deliberate change, `scripts/check-api.py --update` rewrites the files.

Usage: scripts/check-api.py [--update] [--bin-dir DIR]   (DIR: `swift build --show-bin-path`)
"""
import argparse
import difflib
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
API = ROOT / "api"
# Modules whose public API is part of a product's although no product lists them, and why.
# Conformances every type has unless it says otherwise: noise, and they vary with the compiler.
IMPLICIT = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype"}
REEXPORTED = {
    "VarlinkIDL": "VarlinkCore re-exports it (@_exported public import VarlinkIDL)",
}


def products():
    manifest = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                                         capture_output=True, text=True).stdout)
    modules = {t for p in manifest["products"] if "library" in p["type"] for t in p["targets"]}
    return sorted(modules | set(REEXPORTED))


def fragments(declaration):
    return "".join(f["spelling"] for f in declaration or []).replace("\n", " ")


def surface(module, bin_dir, scratch):
    """The module's public symbols and conformances, one line each, sorted."""
    out = scratch / module
    out.mkdir()
    # The C modules the Swift ones import (theirs and their dependencies') are found by their
    # module maps: those of the sources, and those the build wrote for C targets.
    bin_dir = bin_dir.resolve()
    checkouts = bin_dir.parent.parent / "checkouts"
    includes = [f"-I{bin_dir / 'Modules'}"]
    includes += [f"-I{path.parent}" for path in sorted((ROOT / "Libraries/Sources").glob("C*/module.modulemap"))]
    includes += [f"-I{path.parent}" for path in sorted(checkouts.glob("*/Sources/**/module.modulemap"))]
    for path in sorted(bin_dir.glob("*.build/module.modulemap")):
        includes += ["-Xcc", f"-fmodule-map-file={path}"]
    run = subprocess.run(["swift-symbolgraph-extract", "-module-name", module, "-target", target(),
                          "-minimum-access-level", "public", "-skip-synthesized-members",
                          "-output-dir", str(out)] + includes, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"swift-symbolgraph-extract could not read {module} from {bin_dir}:\n{run.stderr}")
    lines = set()
    for graph_file in out.glob("*.symbols.json"):
        graph = json.loads(graph_file.read_text())
        # Symbols of this module, and its extensions of other modules' types (Module@Other).
        extended = graph_file.name.split(".symbols.json")[0].partition("@")[2]
        names = {}
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            path = ".".join(symbol["pathComponents"])
            names[symbol["identifier"]["precise"]] = path
            where = f"[{extended}] " if extended else ""
            lines.add(f"{where}{symbol['kind']['identifier'].removeprefix('swift.')} {path}: "
                      f"{fragments(symbol.get('declarationFragments'))}")
        for relation in graph["relationships"]:
            if relation["kind"] != "conformsTo" or relation["source"] not in names:
                continue
            target_name = relation.get("targetFallback") or names.get(relation["target"], relation["target"])
            if target_name in IMPLICIT:
                continue
            lines.add(f"conformance {names[relation['source']]}: {target_name}")
    return sorted(lines)


def target():
    machine = subprocess.run(["uname", "-m"], capture_output=True, text=True, check=True).stdout.strip()
    return f"{machine}-unknown-linux-gnu"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true", help="rewrite api/<Module>.txt")
    parser.add_argument("--bin-dir", help="the debug build's bin path")
    arguments = parser.parse_args(argv)
    bin_dir = pathlib.Path(arguments.bin_dir or subprocess.run(
        ["swift", "build", "--show-bin-path"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip())
    API.mkdir(exist_ok=True)
    changed = []
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="island-api-"))
    try:
        for module in products():
            text = "".join(line + "\n" for line in surface(module, bin_dir, scratch))
            file = API / f"{module}.txt"
            old = file.read_text() if file.exists() else ""
            if text == old:
                continue
            changed.append(module)
            if arguments.update:
                file.write_text(text)
            else:
                sys.stdout.writelines(difflib.unified_diff(
                    old.splitlines(keepends=True), text.splitlines(keepends=True),
                    f"api/{module}.txt (checked in)", f"{module} (built)"))
    finally:
        shutil.rmtree(scratch)
    if changed and not arguments.update:
        print(f"\nthe public API of {', '.join(changed)} changed: if on purpose, say so in docs/public-api.md "
              "where it matters and run scripts/check-api.py --update")
        return 1
    if changed:
        print(f"rewrote api/ for {', '.join(changed)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
