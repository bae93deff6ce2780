"""IslandKit's reference, as scripts/docs.sh builds it from the built modules (and the Debian
package ships it): the catalog's articles and tutorial, and a page for each public symbol a
developer looks up — the alert, the dismissal policies, the interactions, the errors and their
payloads, and IslandKitTesting's TestIsland."""

import json
import os
import subprocess

from harness.paths import BIN_DIR, LIVENESS, REPO


def test_the_reference_has_the_articles_and_every_symbol_a_developer_looks_up(tmp_path):
    modules = os.path.join(BIN_DIR, "Modules")
    run = subprocess.run([os.path.join(REPO, "scripts", "docs.sh"), "--modules", modules, "--output", str(tmp_path)],
                         capture_output=True, text=True, timeout=LIVENESS * 4, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, run.stderr
    # No reference in the catalog that does not resolve.
    assert "warning:" not in run.stderr, run.stderr
    site = tmp_path / "IslandKit"
    assert run.stdout.splitlines()[0] == str(site / "documentation" / "islandkit" / "index.html")
    data = site / "data" / "documentation" / "islandkit"
    for page in ["gettingstarted", "portingfromactivitykit", "alertconfiguration", "alertconfiguration/alertsound",
                 "activityuidismissalpolicy", "activityinteraction", "activityauthorizationerror",
                 "activityauthorizationerror/attributestoolarge(limit:size:part:)", "activitystyle",
                 "contentdateencoding", "activity/checkedupdate(_:alertconfiguration:timestamp:)"]:
        assert (data / (page + ".json")).is_file(), page
    with open(data / "activityauthorizationerror" / "recoverysuggestion.json") as f:
        assert "What the user can do about it" in json.dumps(json.load(f))
    tutorials = site / "data" / "tutorials"
    assert any(name.lower().startswith("displayinglivedata") for name in os.listdir(tutorials / "islandkit"))

    testing = tmp_path / "IslandKitTesting" / "data" / "documentation" / "islandkittesting"
    assert (testing / "testisland.json").is_file()
    assert any(name.startswith("withisland") for name in os.listdir(testing / "testisland"))
