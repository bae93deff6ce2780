"""[Push] PasswordFile= names a file in a folder the user's other programs may write to. It is
read with Foundation's String(contentsOfFile:), which reads a regular file whole (a 2 GiB
file: 4 GiB held) and refuses a FIFO or a device as EACCES, and the daemon then says only
"cannot be read" (or starts, with 8 MiB of zeros as the password). The fix, in Sources/IslandDaemon/Push/MQTTPushLink.swift (another helper's
file this round): read it with Systemd's readRegularFile(file, limit: 64 << 10,
followingLinks: true) and put the error's description in the refusal, as the configuration
files are read (ConfigurationLoader.read)."""

import os

import pytest


def sparse_file(path, size):
    with open(path, "wb") as f:
        f.truncate(size)


@pytest.mark.xfail(strict=True, reason="MQTTPushLink reads PasswordFile with String(contentsOfFile:): no reason named, "
                                       "no bound (the fix is in Sources/IslandDaemon/Push, not this helper's to change)")
@pytest.mark.parametrize("make,reason", [
    (os.mkfifo, "not a regular file"),
    # 8 MiB stands for the 2 GiB a hostile program would leave: read whole, it is the password.
    (lambda path: sparse_file(path, 8 << 20), "larger than"),
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
