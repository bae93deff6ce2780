"""What a hostile program of the same user can leave where a program expects a file it reads
(its configuration folder, its data directories, a password file): each of these would block,
never end, or be read whole by a plain open and read. Island's programs read such files only
through SmallFiles's readRegularFile, which refuses them by name; the tests put them there.

`cases(maker, ..., limit=N)` gives (name, maker, reason) triples for pytest's parametrize, the
reason being the words the program's refusal must contain."""

import os
import stat

NOT_REGULAR = "not a regular file"
LOOP = "Too many levels of symbolic links"


def make_fifo(path):
    os.mkfifo(path)


def link_to_zero(path):
    os.symlink("/dev/zero", path)


def copy_of_zero(path):
    """A character device like /dev/zero of the hostile program's own (mknod needs
    CAP_MKNOD: root here; elsewhere the link to /dev/zero stands for it)."""
    device = os.stat("/dev/zero").st_rdev
    try:
        os.mknod(path, 0o600 | stat.S_IFCHR, device)
    except PermissionError:
        os.symlink("/dev/zero", path)


def link_to_tty(path):
    """A device that may block (a daemon's /dev/stdin is /dev/null, which reads as empty)."""
    os.symlink("/dev/tty", path)


def link_loop(path):
    os.symlink(path, path)


def folder(path):
    os.mkdir(path)


def sparse_file(path, size):
    """A file of `size` bytes that takes no room."""
    with open(path, "wb") as f:
        f.truncate(size)


def sparse_2_gib(path):
    """A file larger than any limit, read whole by a program that has none."""
    sparse_file(path, 2 << 30)


def cases(*makers, limit=None):
    """(name, maker, reason) for each maker: the reason a refusal names (`limit`: the bytes a
    program reads at most, for sparse_2_gib)."""
    def reason(maker):
        if maker is link_loop:
            return LOOP
        if maker is sparse_2_gib:
            assert limit is not None, "sparse_2_gib needs the program's limit"
            return "larger than %d bytes" % limit
        return NOT_REGULAR
    return [(maker.__name__, maker, reason(maker)) for maker in makers]
