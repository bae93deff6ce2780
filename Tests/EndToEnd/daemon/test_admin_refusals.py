"""Admin switches refuse apps they cannot apply to, instead of answering nothing."""

from harness.varlink import error_of


def test_switching_an_unknown_app_is_refused(daemon):
    with daemon.connect("org.island.Admin") as admin:
        name, params = error_of(admin.SetEnabled, app="org.example.Nobody", enabled=False)
        assert name == "org.island.Unentitled" and params["app"] == "org.example.Nobody"


def test_frequent_updates_need_the_manifest_key(daemon):
    with daemon.connect("org.island.Admin") as admin:
        name, params = error_of(admin.SetFrequentUpdates, app="org.example.Coffee", enabled=True)
        assert name == "org.island.Unentitled" and "X-Island-FrequentUpdates" in params["reason"]
        admin.SetFrequentUpdates(app="org.example.Flights", enabled=False)


def test_streams_are_told_the_daemon_stops(daemon):
    from harness.varlink import subscribe_presenter
    stream, _ = subscribe_presenter(daemon)
    daemon.stop()
    last = stream.read_until(lambda m: "error" in m)
    assert last["error"] == "org.island.Connection.ShuttingDown"
    stream.close()
