"""The Debian packages: packaging/build-deb.sh builds `island`, `island-overlay` and
`island-bridge`, lintian finds no error in any, and they install into a clean root (dpkg --root,
maintainer scripts run chrootless) with every file where the units, the man pages and the daemon
expect it. The core package needs no GTK: a headless machine installs only it.

Run alone, this file builds the packages as they ship (build-deb.sh: the release build, the
slow part; it keeps SwiftPM's build in .build-package/, so only the first run compiles
everything). Set ISLAND_DEB=path/to/island_*.deb (and ISLAND_OVERLAY_DEB=path/to/island-overlay_*.deb,
ISLAND_BRIDGE_DEB=path/to/island-bridge_*.deb) to test packages built beforehand instead, and
ISLAND_PACKAGE_BUILD=DIR to the release build's scratch path if they are release packages.
scripts/test.sh tests packages made from the debug build its other stages ran (build-deb.sh
--from-build), beside the end-to-end suite; `scripts/test.sh --release-packages` tests the
release packages that ship.

Each package is described once (`Package`); what holds for every package (lintian, binaries
that need no Swift runtime, man pages that render and name every option, a purge that leaves
nothing) is one test run for each, and what is one package's own has a test of its own.
"""

import fcntl
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass

import pytest

from harness import host_accounts
from harness.paths import LIVENESS, REPO
from harness.processes import accepting, wait_for

BUILD_DEB = os.path.join(REPO, "packaging", "build-deb.sh")
BUILD_DIR = os.path.join(REPO, ".build-package")
# What drawing on screen links; none of it may reach the core package's Depends.
GRAPHICAL_LIBRARIES = ["libgtk", "libgdk", "libcairo", "libpango", "libatk", "libwayland", "libx11",
                       "libgtk-layer-shell", "libglib"]
UNITS = [
    "usr/lib/systemd/system/islandd.socket",
    "usr/lib/systemd/system/islandd.service",
    "usr/lib/systemd/user/islandd.socket",
    "usr/lib/systemd/user/islandd.service",
]


@dataclass(frozen=True)
class Package:
    """What one of the three packages must be."""
    name: str
    binaries: tuple                    # in /usr/bin
    man_pages: frozenset               # every man page it installs
    help_mentions: tuple = ()          # what each binary's --help must say ({binary} is its name)
    needs: tuple = ()                  # installed first (the core package)
    libraries: tuple = ()              # Depends from dpkg-shlibdeps, with versions
    links: tuple = ()                  # libraries its binaries must link
    draws: bool = False                # may it depend on and link a graphical stack?
    files: frozenset = None            # exactly these files, where listed
    user_unit: str = None              # its user unit, verified by systemd-analyze
    exit_status: str = None            # the exit status its man page must document
    keys: tuple = ()                   # configuration keys its man page must document


CORE = Package(
    "island", ("islandd", "island", "island-presenter"),
    frozenset({"usr/share/man/man8/islandd.8.gz", "usr/share/man/man5/islandd.conf.5.gz",
               "usr/share/man/man1/island.1.gz", "usr/share/man/man1/island-presenter.1.gz"}),
    help_mentions=("USAGE: {binary}",),
    libraries=("libc6", "libsystemd0", "libsqlite3-0", "libjemalloc2"))
# The GNOME Shell extension's files, as GNOMEShellExtension/assemble.sh puts them together.
GNOME_EXTENSION_FILES = ("metadata.json", "extension.js", "prefs.js", "island.js", "hosting.js", "preferences.js",
                         "schemas/org.gnome.shell.extensions.island.gschema.xml")
OVERLAY = Package(
    "island-overlay", ("island-overlay",), frozenset({"usr/share/man/man1/island-overlay.1.gz"}),
    help_mentions=("island-overlay", "--toggle-list"), needs=("island",),
    libraries=("libc6", "libgtk-3-0", "libgtk-layer-shell0", "libcairo2", "libpango-1.0-0", "libglib2.0-0"),
    links=("libgtk-3", "libgtk-layer-shell", "libcairo.so", "libpango"), draws=True,
    files=frozenset({
        "usr/bin/island-overlay",
        "usr/lib/systemd/user/island-overlay.service",
        "etc/xdg/autostart/island-overlay.desktop",
        "usr/share/applications/org.island.overlay.desktop",
        "usr/share/man/man1/island-overlay.1.gz",
        "usr/share/doc/island-overlay/copyright",
        "usr/share/doc/island-overlay/changelog.Debian.gz",
        "usr/share/lintian/overrides/island-overlay",
    } | {"usr/share/gnome-shell/extensions/island@island.org/" + name
         for name in GNOME_EXTENSION_FILES + ("schemas/gschemas.compiled",)}),
    user_unit="usr/lib/systemd/user/island-overlay.service", exit_status="69",
    keys=("Output", "Layer", "MarginTop", "Opener"))
BRIDGE = Package(
    "island-bridge", ("island-bridge",), frozenset({"usr/share/man/man1/island-bridge.1.gz"}),
    help_mentions=("island-bridge", "--bus"), needs=("island",), libraries=("libsystemd0",),
    links=("libsystemd.so.0",),
    files=frozenset({
        "usr/bin/island-bridge",
        "usr/lib/systemd/user/island-bridge.service",
        "usr/share/applications/org.island.bridge.desktop",
        "usr/share/island/layouts/org.island.bridge/NowPlaying.json",
        "usr/share/island/layouts/org.island.bridge/Progress.json",
        "usr/share/island/layouts/org.island.bridge/PrivateProgress.json",
        "usr/share/island/layouts/org.island.bridge/Transfer.json",
        "usr/share/man/man1/island-bridge.1.gz",
        "usr/share/doc/island-bridge/copyright",
        "usr/share/doc/island-bridge/changelog.Debian.gz",
        "usr/share/lintian/overrides/island-bridge",
    }),
    user_unit="usr/lib/systemd/user/island-bridge.service", exit_status="78",
    keys=("MaxActivities", "KeepEnded", "Enabled", "StaleAfterPause", "MaxJobs", "MaxJobsPerSender"))
PACKAGES = [CORE, OVERLAY, BRIDGE]
EVERY_PACKAGE = pytest.mark.parametrize("package", PACKAGES, ids=lambda p: p.name)
WITH_A_USER_UNIT = pytest.mark.parametrize("package", [p for p in PACKAGES if p.user_unit], ids=lambda p: p.name)

pytestmark = [
    pytest.mark.skipif(shutil.which("dpkg-deb") is None, reason="not a Debian system"),
    # The package holds release binaries built without sanitizers, so a sanitizer run
    # (scripts/sanitize.sh sets ISLAND_SANITIZER) would only spend many minutes rebuilding them.
    pytest.mark.skipif(bool(os.environ.get("ISLAND_SANITIZER")),
                       reason="ISLAND_SANITIZER is set: the package's release binaries are not sanitized"),
]


def run(args, **kwargs):
    kwargs.setdefault("capture_output", True)
    kwargs.setdefault("text", True)
    kwargs.setdefault("timeout", 120)
    return subprocess.run(args, **kwargs)


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """{package: path} of the packages build-deb.sh built (or ISLAND_DEB, ISLAND_OVERLAY_DEB,
    ISLAND_BRIDGE_DEB)."""
    prebuilt = os.environ.get("ISLAND_DEB")
    if prebuilt:
        found = {"island": os.path.abspath(prebuilt)}
        for package, variable in (("island-overlay", "ISLAND_OVERLAY_DEB"), ("island-bridge", "ISLAND_BRIDGE_DEB")):
            if os.environ.get(variable):
                found[package] = os.path.abspath(os.environ[variable])
        return found
    output = tmp_path_factory.mktemp("deb")
    started = time.monotonic()
    # gzip rather than the default xz: xz takes minutes on the ~250 MB of binaries, and the
    # compressor changes nothing that is tested here.
    result = run([BUILD_DEB, "--output", str(output), "--compression", "gzip"], timeout=3600)
    assert result.returncode == 0, "build-deb.sh failed:\n" + result.stderr[-4000:]
    print("build-deb.sh took %.0fs" % (time.monotonic() - started))
    paths = result.stdout.strip().splitlines()
    assert len(paths) == 3, result.stdout
    found = {}
    for path, package in zip(paths, [p.name for p in PACKAGES]):
        assert os.path.dirname(path) == str(output)
        assert re.fullmatch(r"%s_[0-9][^_]*-[0-9]+_[a-z0-9]+\.deb" % package, os.path.basename(path)), path
        assert os.path.isfile(path)
        found[package] = path
    return found


def deb_of(debs, package):
    if package.name not in debs:
        pytest.skip("ISLAND_DEB is set without the %s package's variable" % package.name)
    return debs[package.name]


def new_root(parent):
    """An empty system for dpkg --root: just a dpkg database and the directories dpkg and
    the maintainer scripts' tools write to."""
    root = os.path.join(parent, "root")
    for directory in ["var/lib/dpkg/info", "var/lib/dpkg/updates", "var/lib/dpkg/triggers",
                      "var/log", "etc", "run", "tmp"]:
        os.makedirs(os.path.join(root, directory))
    open(os.path.join(root, "var/lib/dpkg/status"), "w").close()
    return root


def dpkg(root, *args):
    # --force-script-chrootless runs the maintainer scripts on the host with DPKG_ROOT set,
    # which is what they must honour; --force-depends because the root has no libc6 &c.
    return run(["dpkg", "--root=" + root, "--log=/dev/null", "--force-script-chrootless",
                "--force-not-root", "--force-depends", "--no-triggers", *args])


def host_state():
    """What a chrootless maintainer script could wrongly change on the host."""
    paths = ["/etc/passwd", "/etc/group", "/etc/systemd/system/sockets.target.wants/islandd.socket",
             "/etc/systemd/user/sockets.target.wants/islandd.socket", "/var/lib/island"]
    state = {}
    for path in paths:
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path) as f:
                state[path] = f.read()
        else:
            state[path] = os.path.lexists(path)
    return state


def install(debs, package, parent):
    """A new root with `package` installed (after what it needs); the host left untouched."""
    root = new_root(parent)
    with host_accounts.unchanged():
        before = host_state()
        for name in package.needs + (package.name,):
            result = dpkg(root, "-i", deb_of(debs, next(p for p in PACKAGES if p.name == name)))
            assert result.returncode == 0, result.stdout + result.stderr
        assert host_state() == before, "installing into --root changed the host"
    return root


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """A folder every pytest-xdist worker of this run sees (their own base folders are in it;
    scripts/test.sh runs this file with several workers, which share out its tests one by one)."""
    base = tmp_path_factory.getbasetemp()
    return str(base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base)


def made_once(parent, name, make):
    """`parent/name`, filled by `make(folder)` once for the whole run: the first worker to ask
    makes it while the others wait for it, and a failed attempt is made again by the next one.
    For what the tests only read, and which costs CPU to make (an installed root: dpkg unpacks
    the ~250 MB of a package each time; lintian's run)."""
    folder = os.path.join(parent, name)
    with open(folder + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(folder + ".done"):
            shutil.rmtree(folder, ignore_errors=True)
            os.makedirs(folder)
            make(folder)
            open(folder + ".done", "w").close()
    return folder


@pytest.fixture(scope="module")
def roots(debs, shared):
    """`roots(package)`: a root with the package installed, made once per run; the tests only
    read it (the purge test installs into a root of its own)."""
    def root_of(package):
        return os.path.join(made_once(shared, "install-" + package.name, lambda folder: install(debs, package, folder)),
                            "root")
    return root_of


@pytest.fixture(scope="module")
def installed(roots):
    """A root with the core package installed."""
    return roots(CORE)


def contents(deb):
    """The regular files a package holds, as paths relative to the root."""
    listed = run(["dpkg-deb", "-c", deb]).stdout
    return {line.split()[-1].lstrip("./") for line in listed.splitlines() if not line.startswith("d")}


def man_text(path):
    with gzip.open(path, "rt") as f:
        return f.read().replace("\\-", "-")


# MARK: what holds for every package


@EVERY_PACKAGE
def test_control_fields(debs, package):
    deb = deb_of(debs, package)
    fields = run(["dpkg-deb", "-f", deb, "Package", "Source", "Version", "Architecture", "Depends",
                  "Section", "Priority", "Maintainer", "Description"]).stdout
    assert "Package: %s\n" % package.name in fields
    version = re.search(r"^Version: (\S+)$", fields, re.M).group(1)
    depends = re.search(r"^Depends: (.*)$", fields, re.M).group(1)
    # From dpkg-shlibdeps: what the binaries link, with versions.
    for library in package.libraries:
        assert re.search(r"\b%s \(>= [^)]+\)" % re.escape(library), depends), depends
    assert "swift" not in depends
    if package.needs:
        assert "Source: island\n" in fields
        assert version == run(["dpkg-deb", "-f", deb_of(debs, CORE), "Version"]).stdout.strip()
        assert "island (= %s)" % version in depends, depends
    if not package.draws:
        # A headless machine installs the daemon (and the bridge) without a graphical stack.
        for library in GRAPHICAL_LIBRARIES:
            assert library not in depends, "%s draws nothing: %s" % (package.name, depends)


@pytest.fixture(scope="module")
def lintian(debs, shared):
    """lintian's report on every package, from one run over all of them: most of what a run
    costs is lintian's own start (~2.5 CPU s: its checks and profiles loaded), the same for
    each package."""
    if shutil.which("lintian") is None:
        pytest.fail("lintian is not installed (scripts/install-deps.sh installs it)")

    def make(folder):
        # Not lintian's search for misspelt words among a binary's strings (binaries/spelling):
        # it can only say `spelling-error-in-binary`, of severity info, which fails nothing
        # here, and it was a third of lintian's CPU on the packages of the debug build (8 of
        # 26 s for island).
        result = run(["lintian", "--fail-on", "error", "--tag-display-limit", "0", "-X", "binaries/spelling",
                      *[debs[p.name] for p in PACKAGES if p.name in debs]], timeout=900)
        with open(os.path.join(folder, "report.json"), "w") as f:
            json.dump({"status": result.returncode, "stdout": result.stdout, "stderr": result.stderr}, f)
    with open(os.path.join(made_once(shared, "lintian", make), "report.json")) as f:
        return json.load(f)


def lintian_lines_of(package):
    """What a line of lintian's report about `package` starts with: `E: island: tag …`."""
    return re.compile(r"^[A-Z]: %s(?: \([a-z]+\))?: " % re.escape(package.name))


@EVERY_PACKAGE
def test_lintian_reports_no_errors(debs, lintian, package):
    deb_of(debs, package)
    output = lintian["stdout"] + lintian["stderr"]
    lines = lintian["stdout"].splitlines()
    print("\n".join(line for line in lines if lintian_lines_of(package).match(line)))
    errors = [line for line in lines if line.startswith("E: ")]
    assert not [line for line in errors if lintian_lines_of(package).match(line)], output
    # Every error names a package, and a failed run has one; else every package's test fails.
    assert all(any(lintian_lines_of(p).match(line) for p in PACKAGES) for line in errors), output
    assert lintian["status"] == 0 or errors, output


@EVERY_PACKAGE
def test_binaries_run_and_need_no_swift_runtime(roots, package):
    root = roots(package)
    for binary in package.binaries:
        path = os.path.join(root, "usr/bin", binary)
        assert os.access(path, os.X_OK), binary
        result = run([path, "--help"])
        assert result.returncode == 0, result.stderr
        for mention in package.help_mentions:
            assert mention.format(binary=binary) in result.stdout, (binary, mention)
        libraries = run(["ldd", path]).stdout
        assert "libswift" not in libraries and "/opt/swift" not in libraries, libraries
        assert "not found" not in libraries, libraries
        for library in package.links:
            assert library in libraries, (binary, library, libraries)
        if not package.draws:
            for library in GRAPHICAL_LIBRARIES:
                assert library + "." not in libraries and library + "-" not in libraries, (binary, libraries)


def test_svg_is_drawn_by_the_installed_overlay_without_a_display(roots, tmp_path):
    """`island preview --svg` from the core package finds island-overlay beside it in /usr/bin
    and has it draw the SVG off-screen (--draw-svg): no second binary for SVG in the overlay
    package, and no display needed (the overlay links GTK, but this mode opens none)."""
    root = roots(OVERLAY)
    layout = os.path.join(root, "usr/share/doc/island/examples/layouts/org.island.example.Coffee/CoffeeOrder.json")
    svg = tmp_path / "compact.svg"
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "GDK_BACKEND")}
    # PATH holds no other island-overlay: the one found is the package's, beside `island`.
    environment["PATH"] = "/nonexistent"
    result = run([os.path.join(root, "usr/bin/island"), "preview", layout, "--mode", "compact",
                  "--state", '{"stage": "brewing", "etaMinutes": 4}', "--svg", str(svg)], env=environment)
    assert result.returncode == 0, result.stderr
    text = svg.read_text()
    assert text.startswith("<?xml") and "<title>Island: compact</title>" in text, text[:400]
    assert "4 min" in text.split("<desc>")[1].split("</desc>")[0], text[:1000]


@EVERY_PACKAGE
def test_man_pages_are_gzipped_render_and_name_every_option(roots, package):
    root = roots(package)
    others = set().union(*(p.man_pages for p in PACKAGES if p.name in package.needs))
    found = set()
    for directory, _, files in os.walk(os.path.join(root, "usr/share/man")):
        for name in files:
            found.add(os.path.relpath(os.path.join(directory, name), root))
    assert found - others == package.man_pages
    environment = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
    for page in sorted(package.man_pages):
        path = os.path.join(root, page)
        with open(path, "rb") as f:
            assert f.read(2) == b"\x1f\x8b", page
        result = run(["man", "--warnings", "-l", path], env=environment)
        assert result.returncode == 0 and result.stderr == "", page + ":\n" + result.stderr
        assert "SEE ALSO" in result.stdout, page
    if len(package.binaries) != 1:
        return  # the core's pages are checked by subcommand and key below
    text = man_text(os.path.join(root, next(iter(package.man_pages))))
    usage = run([os.path.join(root, "usr/bin", package.binaries[0]), "--help"]).stdout
    options = set(re.findall(r"(--[a-z][a-z-]+)", usage))
    assert {"--socket"} <= options, usage
    for option in options:
        assert option in text, "%s is not in %s's man page" % (option, package.name)
    for key in set(package.keys) | set(re.findall(r"^\s+([A-Z][A-Za-z]+)=", usage, re.M)):
        assert re.search(r"\b%s=" % key, text), "%s= is not in %s's man page" % (key, package.name)
    assert re.search(r"^\.B %s$" % package.exit_status, text, re.M), \
        "exit status %s is not in %s's man page" % (package.exit_status, package.name)


@WITH_A_USER_UNIT
def test_user_unit_verifies_cleanly(roots, package, tmp_path):
    """systemd checks the user unit (an unknown key or a missing binary or man page shows up on
    stderr), as systemd/test_systemd_units.py does for islandd's: a copy whose ExecStart= is the
    installed binary, with the root's man pages."""
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    root = roots(package)
    with open(os.path.join(root, package.user_unit)) as f:
        text = f.read()
    name = os.path.basename(package.user_unit)
    binary = "/usr/bin/" + package.binaries[0]
    (tmp_path / name).write_text(text.replace(binary, os.path.join(root, binary.lstrip("/"))))
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    environment = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), MANPATH=os.path.join(root, "usr/share/man"))
    result = run(["systemd-analyze", "verify", "--user", "./" + name], cwd=str(tmp_path), env=environment)
    assert (result.returncode, result.stderr) == (0, ""), result.stderr


@EVERY_PACKAGE
def test_purge_removes_everything(debs, package, tmp_path):
    root = install(debs, package, str(tmp_path))
    shipped = contents(deb_of(debs, package))
    with host_accounts.unchanged():
        before = host_state()
        result = dpkg(root, "--purge", package.name)
        assert result.returncode == 0, result.stdout + result.stderr
        assert host_state() == before
    for path in shipped:
        assert not os.path.lexists(os.path.join(root, path)), path
    if package.needs:
        # What it needs stays, whole.
        assert os.path.isfile(os.path.join(root, "usr/bin/islandd"))
        return
    leftovers = [os.path.join(d, f) for d, _, files in os.walk(os.path.join(root, "usr")) for f in files]
    assert leftovers == []
    assert not os.path.exists(os.path.join(root, "var/lib/island"))
    for scope in ["system", "user"]:
        assert not os.path.lexists(os.path.join(root, "etc/systemd", scope, "sockets.target.wants/islandd.socket"))


@pytest.mark.parametrize("package", [p for p in PACKAGES if p.files], ids=lambda p: p.name)
def test_files_are_exactly_the_listed_ones(debs, roots, package):
    assert contents(deb_of(debs, package)) == package.files
    root = roots(package)
    for path in package.files:
        assert os.path.isfile(os.path.join(root, path)), path


# MARK: the core package


def test_core_version_and_contents(debs, installed):
    deb = deb_of(debs, CORE)
    fields = run(["dpkg-deb", "-f", deb, "Version", "Depends"]).stdout
    assert re.search(r"^Version: 0\.1\.0-\d+$", fields, re.M)
    assert "systemd-sysusers" in re.search(r"^Depends: (.*)$", fields, re.M).group(1)
    assert "island-overlay" not in run(["dpkg-deb", "-c", deb]).stdout
    version = run([os.path.join(installed, "usr/bin/islandd"), "--version"]).stdout.strip()
    assert version == "0.1.0"


def test_files_are_where_the_units_expect_them(installed):
    for unit in UNITS:
        path = os.path.join(installed, unit)
        assert os.path.isfile(path), unit
        with open(path) as f:
            text = f.read()
        for line in text.splitlines():
            match = re.match(r"^Exec(Start|StartPre|StartPost|Reload|Stop)=[-@:+!]*(\S+)", line)
            if match:
                executable = match.group(2)
                assert executable.startswith("/"), line
                if executable == "/bin/kill":
                    continue  # from procps/util-linux, not this package
                assert os.access(os.path.join(installed, executable.lstrip("/")), os.X_OK), \
                    "%s: %s is not installed" % (unit, executable)
            match = re.match(r"^Service=(\S+)$", line)
            if match:
                assert os.path.isfile(os.path.join(os.path.dirname(path), match.group(1))), line
            match = re.match(r"^Documentation=man:([\w.-]+)\((\d)\)$", line)
            if match:
                page = "usr/share/man/man%s/%s.%s.gz" % (match.group(2), match.group(1), match.group(2))
                assert os.path.isfile(os.path.join(installed, page)), line
    for path in ["usr/lib/sysusers.d/island.conf", "usr/lib/tmpfiles.d/island.conf"]:
        assert os.path.isfile(os.path.join(installed, path)), path


def test_binaries_allocate_with_jemalloc(installed):
    """build-release.sh links jemalloc ahead of libc, so its malloc is the one every part of
    the program binds to, not merely a library that is loaded: asked to, it reports at exit."""
    for product in CORE.binaries:
        path = os.path.join(installed, "usr/bin", product)
        result = run([path, "--help"], env=dict(os.environ, MALLOC_CONF="stats_print:true"))
        assert result.returncode == 0, result.stderr
        assert "Begin jemalloc statistics" in result.stderr, product


def test_islandd_links_its_start_up_code_together(debs):
    """build-release.sh links the functions listed in packaging/islandd.order first and in
    that order: idle RSS depends on it (~6 MiB). The package's copy is stripped, so this reads
    the release build the package was made from. The list names the optimised build's
    functions (its specialisations, what it did not inline) and needs its -function-sections,
    so packages made from a debug build (scripts/test.sh) cannot be checked here:
    `scripts/test.sh --release-packages` checks the release packages."""
    scratch = os.environ.get("ISLAND_PACKAGE_BUILD") or (None if os.environ.get("ISLAND_DEB") else BUILD_DIR)
    binary = os.path.join(scratch or BUILD_DIR, "release", "islandd")
    if scratch is None or not os.path.isfile(binary):
        pytest.skip("not release packages, or their release build is not known here (set ISLAND_PACKAGE_BUILD; "
                    "scripts/test.sh --release-packages checks the release packages)")
    with open(os.path.join(REPO, "packaging", "islandd.order")) as f:
        names = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    addresses = {}
    for line in run(["nm", "--defined-only", binary], timeout=300).stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            addresses.setdefault(fields[2], int(fields[0], 16))
    found = [addresses[name] for name in names if name in addresses]
    # A list that has fallen far behind the code keeps little together.
    assert len(found) >= 0.8 * len(names), \
        "only %d of the %d functions listed are in islandd: run scripts/make-order-file.py" % (len(found), len(names))
    # Together: the middle 90% of them lie within a third of the code (a little over a
    # third of its 20 MB when this was written), where unordered they spread over two thirds.
    text = re.search(r"\s\.text\s+PROGBITS\s+\S+\s+\S+\s+([0-9a-f]+)", run(["readelf", "-SW", binary]).stdout)
    found.sort()
    spread = found[int(len(found) * 0.95)] - found[int(len(found) * 0.05)]
    assert spread < 0.5 * int(text.group(1), 16), "the listed functions spread over %d of %s bytes" % (spread, text.group(1))


def test_man_pages_cover_every_configuration_key_and_subcommand(installed):
    keys_source = os.path.join(REPO, "Sources/IslandCore/Configuration/ConfigurationKeys.swift")
    with open(keys_source) as f:
        keys = re.findall(r'case \w+ = "(\w+)"', f.read())
    assert "MaxActivities" in keys and "IdleExitSec" in keys
    text = {}
    for page in CORE.man_pages:
        with gzip.open(os.path.join(installed, page), "rt") as f:
            text[page] = f.read().replace("\\-", "-")
    for key in keys:
        for page in ["usr/share/man/man8/islandd.8.gz", "usr/share/man/man5/islandd.conf.5.gz"]:
            assert re.search(r"\b%s=" % key, text[page]), "%s= is not in %s" % (key, page)
    island = os.path.join(installed, "usr/bin/island")
    page = text["usr/share/man/man1/island.1.gz"]

    def subcommands(*group):
        help_text = run([island, *group, "--help"]).stdout
        return re.findall(r"^  ([a-z][a-z-]+) {2,}", help_text.split("SUBCOMMANDS:")[1], re.M)

    top = subcommands()
    assert "preview" in top and "admin" in top
    for subcommand in top:
        # Each has a synopsis line: .SY island / .B <subcommand>
        assert re.search(r"^\.B %s\b" % subcommand, page, re.M), "island %s is not in island(1)" % subcommand
    for group in ["extension", "admin"]:
        for subcommand in subcommands(group):
            assert re.search(r"\b%s %s\b" % (group, subcommand), page), \
                "island %s %s is not in island(1)" % (group, subcommand)
    presenter = text["usr/share/man/man1/island-presenter.1.gz"]
    for mode in ["tui", "waybar", "i3blocks", "eww", "polybar", "snapshot"]:
        assert mode in presenter, mode


def files_under(top, skip=None):
    """The files under `top`, as paths relative to it, without `skip` folders."""
    found = set()
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = [name for name in subfolders if name != skip]
        found.update(os.path.relpath(os.path.join(folder, name), top) for name in files)
    return found


def test_desktop_entry_and_examples(installed):
    applications = os.listdir(os.path.join(installed, "usr/share/applications"))
    assert applications == ["org.island.cli.desktop"], "examples must not be active"
    with open(os.path.join(installed, "usr/share/applications/org.island.cli.desktop")) as f:
        entry = f.read()
    assert "X-Island-LiveActivities=true" in entry
    assert not os.path.exists(os.path.join(installed, "usr/share/island/layouts"))
    examples = os.path.join(installed, "usr/share/doc/island/examples")
    # The bridge's manifest and layouts are its own package's, and active there.
    shipped = sorted(app for app in os.listdir(os.path.join(REPO, "packaging/layouts")) if app != "org.island.bridge")
    assert sorted(os.listdir(os.path.join(examples, "layouts"))) == shipped
    assert len(os.listdir(os.path.join(examples, "applications"))) == len(shipped)
    assert sorted(os.listdir(os.path.join(examples, "waybar"))) == sorted(os.listdir(os.path.join(REPO, "packaging/waybar")))
    # A producer in each language, as in the source tree, but for its .gitignore (a
    # version-control file, which lintian says has no place in a package).
    for language in os.listdir(os.path.join(REPO, "Examples")):
        source = os.path.join(REPO, "Examples", language)
        if os.path.isdir(source):
            in_source = {path for path in files_under(source, skip=".build") if os.path.basename(path) != ".gitignore"}
            assert files_under(os.path.join(examples, language)) == in_source
    doc = os.path.join(installed, "usr/share/doc/island")
    # The README's guides, beside it.
    assert sorted(os.listdir(os.path.join(doc, "docs"))) == sorted(name + ".gz" for name in os.listdir(os.path.join(REPO, "docs")) if name.endswith(".md"))
    assert os.path.isfile(os.path.join(doc, "copyright"))
    assert os.path.isfile(os.path.join(doc, "changelog.Debian.gz"))
    # IslandKit's reference (scripts/docs.sh): the articles and a page for each symbol.
    reference = os.path.join(doc, "IslandKit")
    assert os.path.isfile(os.path.join(reference, "index.html"))
    for page in ["gettingstarted", "portingfromactivitykit", "alertconfiguration", "activityauthorizationerror"]:
        assert os.path.isfile(os.path.join(reference, "data/documentation/islandkit", page + ".json")), page
    with open(os.path.join(doc, "copyright")) as f:
        assert f.readline().startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")


def test_maintainer_scripts_configured_the_root(installed):
    with open(os.path.join(installed, "etc/passwd")) as f:
        users = {line.split(":")[0]: line.split(":") for line in f if line.strip()}
    assert "island" in users, "systemd-sysusers --root did not create the island user"
    state = os.stat(os.path.join(installed, "var/lib/island"))
    assert oct(state.st_mode & 0o7777) == "0o700"
    assert state.st_uid == int(users["island"][2])
    for scope in ["system", "user"]:
        link = os.path.join(installed, "etc/systemd", scope, "sockets.target.wants/islandd.socket")
        assert os.readlink(link) == "/usr/lib/systemd/%s/islandd.socket" % scope


def test_installed_daemon_serves_the_installed_cli(installed, tmp_path):
    """The installed islandd, reading manifests from the root's /usr/share, accepts the
    installed island CLI as the app org.island.cli."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    socket = str(runtime / "island" / "islandd.sock")
    environment = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), XDG_STATE_HOME=str(tmp_path / "state"),
                       XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
                       XDG_DATA_DIRS=os.path.join(installed, "usr/share"))
    for name in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "ISLAND_SOCKET"]:
        environment.pop(name, None)
    daemon = subprocess.Popen([os.path.join(installed, "usr/bin/islandd")], env=environment,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        # Ready once the socket takes a connection: its file exists from bind(), before
        # listen(), and a client connecting in between is refused.
        wait_for(lambda: accepting(socket) or daemon.poll() is not None, timeout=LIVENESS,
                 message="islandd accepting on its socket")
        assert daemon.poll() is None, daemon.stderr.read()
        island = os.path.join(installed, "usr/bin/island")
        started = run([island, "start", "Package", "--state", '{"step":1}'], env=environment)
        assert started.returncode == 0, started.stderr
        listed = run([island, "list", "--json"], env=environment)
        assert listed.returncode == 0 and started.stdout.strip() in listed.stdout, listed.stdout + listed.stderr
    finally:
        daemon.send_signal(signal.SIGTERM)
        assert daemon.wait(timeout=LIVENESS) == 0


# MARK: the overlay's and the bridge's own


def test_overlay_autostart_entry_is_a_conffile(debs):
    # The autostart entry lives in /etc: a conffile, kept across upgrades if the admin edits it.
    conffiles = run(["dpkg-deb", "-I", deb_of(debs, OVERLAY), "conffiles"]).stdout.split()
    assert conffiles == ["/etc/xdg/autostart/island-overlay.desktop"]


def test_overlay_unit_and_autostart_entry(roots):
    overlay_installed = roots(OVERLAY)
    unit = os.path.join(overlay_installed, "usr/lib/systemd/user/island-overlay.service")
    with open(unit) as f:
        text = f.read()
    keys = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            keys.setdefault(key, []).append(value)
    # Bound to the graphical session: started after it, stopped with it.
    assert "graphical-session.target" in keys["PartOf"][0]
    assert "graphical-session.target" in keys["After"][0].split()
    assert keys["WantedBy"] == ["graphical-session.target"]
    executable = keys["ExecStart"][0].split()[0]
    assert os.access(os.path.join(overlay_installed, executable.lstrip("/")), os.X_OK), executable
    # 69: no way to place the island (GNOME on Wayland); restarting would not help.
    assert keys["RestartPreventExitStatus"] == ["69"]
    match = re.match(r"man:([\w.-]+)\((\d)\)$", keys["Documentation"][0])
    assert match and os.path.isfile(os.path.join(
        overlay_installed, "usr/share/man/man%s/%s.%s.gz" % (match.group(2), match.group(1), match.group(2))))
    with open(os.path.join(overlay_installed, "etc/xdg/autostart/island-overlay.desktop")) as f:
        entry = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line)
    assert entry["Type"] == "Application" and entry["Exec"] == "island-overlay"
    assert entry["TryExec"] == "island-overlay" and entry["NoDisplay"] == "true"
    # KWin offers kde_lockscreen_overlay_v1 only to the binary an application entry names.
    with open(os.path.join(overlay_installed, "usr/share/applications/org.island.overlay.desktop")) as f:
        entry = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line and not line.startswith("#"))
    assert entry["Exec"] == "/usr/bin/island-overlay"
    assert os.access(os.path.join(overlay_installed, entry["Exec"].lstrip("/")), os.X_OK)
    assert entry["X-KDE-Wayland-Interfaces"] == "kde_lockscreen_overlay_v1"


def test_overlay_ships_the_gnome_shell_extension_with_its_schema_compiled(roots, tmp_path):
    """On GNOME the Shell hosts island-overlay through the extension, installed where the Shell
    finds system extensions, as assemble.sh puts it together for the gnome-shell here (the package's
    build chose the same), with the compiled schema its getSettings() reads from its own
    directory."""
    extension = os.path.join(roots(OVERLAY), "usr/share/gnome-shell/extensions/island@island.org")
    assembled = run(["bash", os.path.join(REPO, "GNOMEShellExtension", "assemble.sh"), "--shell", "auto", str(tmp_path)])
    assert assembled.returncode == 0, assembled.stderr
    for name in GNOME_EXTENSION_FILES:
        with open(os.path.join(extension, name)) as installed_file, \
                open(os.path.join(assembled.stdout.strip(), name)) as shipped:
            assert installed_file.read() == shipped.read(), name
    if shutil.which("gsettings") is None:
        pytest.skip("gsettings is not installed (libglib2.0-bin)")
    keys = run(["gsettings", "--schemadir", os.path.join(extension, "schemas"), "list-keys",
                "org.gnome.shell.extensions.island"], env=dict(os.environ, GSETTINGS_BACKEND="memory"))
    assert keys.returncode == 0, keys.stderr
    assert set(keys.stdout.split()) == {"monitor", "size", "gap-below-panel", "show-over-fullscreen"}


def test_bridge_manifest_and_layouts_are_the_shipped_ones(roots):
    bridge_installed = roots(BRIDGE)
    # Active, where islandd reads manifests and installed layouts: the same files as packaging/.
    for path, source in [("usr/share/applications/org.island.bridge.desktop", "packaging/applications/org.island.bridge.desktop")] + [
            ("usr/share/island/layouts/org.island.bridge/" + name, "packaging/layouts/org.island.bridge/" + name)
            for name in ("NowPlaying.json", "Progress.json", "PrivateProgress.json", "Transfer.json")]:
        with open(os.path.join(bridge_installed, path)) as installed_file, open(os.path.join(REPO, source)) as shipped:
            assert installed_file.read() == shipped.read(), path
    with open(os.path.join(bridge_installed, "usr/share/applications/org.island.bridge.desktop")) as f:
        entry = dict(line.split("=", 1) for line in f.read().splitlines() if "=" in line and not line.startswith("#"))
    assert entry["X-Island-LiveActivities"] == "true" and entry["Exec"] == "/usr/bin/island-bridge"


def test_bridge_unit(roots):
    bridge_installed = roots(BRIDGE)
    unit = os.path.join(bridge_installed, "usr/lib/systemd/user/island-bridge.service")
    with open(unit) as f:
        text = f.read()
    keys = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith("#"):
            key, _, value = line.partition("=")
            keys.setdefault(key, []).append(value)
    assert keys["PartOf"] == ["graphical-session.target"]
    assert "graphical-session.target" in keys["After"][0].split()
    assert keys["WantedBy"] == ["graphical-session.target"]
    assert keys["RestartPreventExitStatus"] == ["78"], "a bad bridge.conf is not retried"
    executable = keys["ExecStart"][0].split()[0]
    assert os.access(os.path.join(bridge_installed, executable.lstrip("/")), os.X_OK), executable
