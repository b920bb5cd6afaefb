"""SPIN model of the change counter that says a change is in flight
(docs/models/change-flight.pml, docs/kernel.md "Changes in flight").

The model as written must verify: writers that die at any step, a
recoverer that raises around its roll and heals what the dead left, and a
reader that trusts a name while the word it was taken under (with nothing
in flight) stands.  Also with zombies (a host declared dead between its
fence check and its raise makes the raise later, at any moment) and an
online healer (daxfs_change_seen) that heals at any moment, racing live
writers.  Each bug switch must make pan find a stale name trusted:
format 12's counter (moved only after the publish), a raise made before
the intent names the directory, and a heal that does not scan the
intents, the recoverer's or the online one's.
"""

import pytest

from helpers.spin import assert_verifies, assert_violates

MODEL = "change-flight.pml"


@pytest.mark.parametrize("defines", [
    (),
    ("MAXCRASH=2",),
    # a healer racing live writers (2 ops each): 13 million states
    ("ONLINE", "MAXCRASH=0"),
    # a zombie's late raise, the recoverer and the healer: 7.7 million
    ("ZOMBIE", "ONLINE", "OPS=1", "R=1"),
], ids=["one-death", "two-deaths", "online-heal", "zombie-online-heal"])
def test_change_flight_model_verifies(defines):
    assert_verifies(MODEL, defines)


@pytest.mark.parametrize("bug", ["BUG_NO_RAISE", "BUG_RAISE_FIRST",
                                 "BUG_HEAL_NO_SCAN"])
def test_change_flight_model_catches(bug):
    assert_violates(MODEL, (bug,))


def test_change_flight_model_catches_online_heal_without_scan():
    """No deaths at all: only the online healer can be wrong."""
    assert_violates(MODEL, ("ONLINE", "MAXCRASH=0", "BUG_HEAL_NO_SCAN"))
