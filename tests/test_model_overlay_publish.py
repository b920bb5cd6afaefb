"""SPIN model of the overlay bucket publication
(docs/models/overlay-publish.pml, docs/overlay.md "Model").

The model as written must verify in both of its configurations: three
inserters of one key in a two-bucket window with a crash at any step, and
two inserters in a three-bucket window where a live host may also be
declared dead and run on (ZOMBIE), two such declarations.  Each bug switch
(the public code's publication, and ours before the claim token) must make
pan find a wrong value, so the model can fail.
"""

import pytest

from helpers.spin import assert_verifies, assert_violates

MODEL = "overlay-publish.pml"
CRASH = ("N=3", "W=2")
ZOMBIE = ("N=2", "W=3", "ZOMBIE")
WRONG_VALUE = "assertion violated (V[i]==pub[i])"


@pytest.mark.parametrize("defines", [CRASH, ZOMBIE + ("MAXCRASH=2",)],
                         ids=["crash", "zombie"])
def test_overlay_publish_model_verifies(defines):
    assert_verifies(MODEL, defines)


@pytest.mark.parametrize("defines", [
    ("N=2", "W=2", "BUG_PITFALL1"),
    CRASH + ("BUG_PLAIN_VALUE",),
    ZOMBIE + ("BUG_PLAIN_VALUE",),
], ids=["pitfall1", "plain-value-crash", "plain-value-zombie"])
def test_overlay_publish_model_catches_bug(defines):
    assert_violates(MODEL, defines, WRONG_VALUE)
