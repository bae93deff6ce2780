"""[Push] PasswordFile= names a file in a folder the user's other programs may write to: only a
regular file is read, at most 64 KiB of it (readRegularFile), and the refusal says why. Read
whole as it once was, a 2 GiB file there was 4 GiB held (or 8 MiB of zeros the password), and
a FIFO was refused as "cannot be read", with no reason."""

import os

import pytest

from harness import junk


@pytest.mark.parametrize("make,reason", [
    (os.mkfifo, "not a regular file"),
    # 8 MiB stands for the 2 GiB a hostile program would leave: read whole, it is the password.
    (lambda path: junk.sparse_file(path, 8 << 20), "larger than"),
], ids=["fifo", "sparse"])
def test_a_password_file_that_is_no_small_regular_file_is_refused_with_its_reason(unstarted_daemon, make, reason):
    daemon = unstarted_daemon()
    password = os.path.join(daemon.root, "push-password")
    make(password)
    with open(daemon.config, "w") as f:
        f.write("[Push]\nBroker=mqtt://127.0.0.1:1\nPasswordFile=%s\n" % password)
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.returncode == 78, daemon.log()
    assert "PasswordFile=%s" % password in daemon.log() and reason in daemon.log(), daemon.log()
