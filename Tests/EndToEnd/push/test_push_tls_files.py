"""[Push] CAFile=, CertificateFile= and KeyFile= are read by libmosquitto in the link process at
each connection attempt. Named wrong, the daemon once started anyway and logged only "TLS files:
Invalid function arguments provided" at every retry, naming neither the key nor the file; a key
without its certificate, "A TLS error occurred". Now the start stops (status 78) and says which
key, which file and why, as it does for PasswordFile=."""

import os

import pytest

from harness.processes import wait_for


def refused(unstarted_daemon, lines):
    daemon = unstarted_daemon()
    with open(daemon.config, "w") as f:
        f.write("[Push]\nBroker=mqtts://127.0.0.1:1\n" + "".join(line % {"root": daemon.root} + "\n" for line in lines))
    with pytest.raises(RuntimeError):
        daemon.start()
    assert daemon.process.returncode == 78, daemon.log()
    return daemon.log()


@pytest.mark.parametrize("key", ["CAFile", "CertificateFile", "KeyFile"])
def test_a_tls_file_that_cannot_be_read_stops_the_start_naming_the_key_and_the_file(unstarted_daemon, key):
    pem = "%(root)s/present.pem"
    lines = {"CAFile": ["CAFile=%(root)s/missing.pem"],
             "CertificateFile": ["CertificateFile=%(root)s/missing.pem", "KeyFile=" + pem],
             "KeyFile": ["CertificateFile=" + pem, "KeyFile=%(root)s/missing.pem"]}[key]
    daemon_log = refused(_with_present_pem(unstarted_daemon), lines)
    assert "%s=" % key in daemon_log and "missing.pem cannot be read" in daemon_log, daemon_log
    assert "No such file or directory" in daemon_log, daemon_log


def test_a_tls_file_that_is_a_fifo_is_refused_without_blocking(unstarted_daemon):
    def make(daemon):
        os.mkfifo(os.path.join(daemon.root, "ca.pem"))
    daemon_log = refused(_with(unstarted_daemon, make), ["CAFile=%(root)s/ca.pem"])
    assert "CAFile=" in daemon_log and "not a regular file" in daemon_log, daemon_log


@pytest.mark.parametrize("given", ["CertificateFile", "KeyFile"])
def test_a_client_certificate_and_its_key_go_together(unstarted_daemon, given):
    daemon_log = refused(_with_present_pem(unstarted_daemon), ["%s=%%(root)s/present.pem" % given])
    assert "CertificateFile= and KeyFile= go together" in daemon_log, daemon_log


def _with(unstarted_daemon, make):
    """`unstarted_daemon`, with `make(daemon)` run on its root before the configuration is written."""
    def made():
        daemon = unstarted_daemon()
        make(daemon)
        return daemon
    return made


def _with_present_pem(unstarted_daemon):
    def make(daemon):
        with open(os.path.join(daemon.root, "present.pem"), "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    return _with(unstarted_daemon, make)


def test_tls_files_beside_a_plain_broker_are_warned_of(unstarted_daemon):
    """TLS files with an mqtt:// broker are not used, and the connection is not encrypted: most
    likely a mistyped mqtts://. The daemon starts (plain brokers are allowed) and says so; it
    once said nothing and sent the credentials in clear."""
    daemon = _with_present_pem(unstarted_daemon)()
    with open(daemon.config, "w") as f:
        f.write("[Push]\nBroker=mqtt://127.0.0.1:1\nCAFile=%s/present.pem\n" % daemon.root)
    daemon.start()
    wait_for(lambda: "not encrypted" in daemon.log(), message="the warning (%s)" % daemon.log())
    assert "CAFile=" in daemon.log(), daemon.log()
