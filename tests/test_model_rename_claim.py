"""SPIN model of the cluster-wide rename claim
(docs/models/rename-claim.pml, docs/namespace.md "Model of the claim").

The model as written must verify in each configuration: hosts that crash
at any step, and hosts declared dead while they run on (ZOMBIE).  Its bug
switch (a host declared dead acting without checking its fence) must make
pan find two renames interleaved, so the model can fail.
"""

import pytest

from helpers.spin import assert_verifies, assert_violates

MODEL = "rename-claim.pml"


@pytest.mark.parametrize("defines", [
    ("N=2",),
    ("N=3", "ZOMBIE"),
    ("N=2", "R=2", "MAXCRASH=2", "ZOMBIE"),
], ids=["crash", "zombie3", "zombie-two-renames"])
def test_rename_claim_model_verifies(defines):
    assert_verifies(MODEL, defines)


def test_rename_claim_model_catches_no_fence():
    assert_violates(MODEL, ("N=2", "ZOMBIE", "BUG_NO_FENCE"))
