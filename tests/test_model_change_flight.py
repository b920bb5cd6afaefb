"""SPIN model of the change counter that says a change is in flight
(docs/models/change-flight.pml, docs/kernel.md "Changes in flight").

The model as written must verify: writers that die at any step, a
recoverer that raises around its roll and heals what the dead left, and a
reader that trusts a name while the word it was taken under (with nothing
in flight) stands.  Each bug switch must make pan find a stale name
trusted: format 12's counter (moved only after the publish), a raise made
before the intent names the directory, and a heal that does not scan the
intents.
"""

import pytest

from helpers.spin import assert_verifies, assert_violates

MODEL = "change-flight.pml"


@pytest.mark.parametrize("defines", [
    (),
    ("MAXCRASH=2",),
], ids=["one-death", "two-deaths"])
def test_change_flight_model_verifies(defines):
    assert_verifies(MODEL, defines)


@pytest.mark.parametrize("bug", ["BUG_NO_RAISE", "BUG_RAISE_FIRST",
                                 "BUG_HEAL_NO_SCAN"])
def test_change_flight_model_catches(bug):
    assert_violates(MODEL, (bug,))
