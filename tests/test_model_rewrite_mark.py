"""SPIN model of a rewrite's mark in the change counter
(docs/models/rewrite-mark.pml, docs/files.md "The change counter of a
rewrite", format 14).

The model as written must verify: writers whose stores of the bytes wait
in a store buffer (x86-TSO) until their fence, a folder that folds the
mark at any moment, and a front end that trusts its copy of the bytes
while the unmarked word it read them under stands.  Each bug switch must
make pan find a stale copy trusted: the look at the word before the
bytes, no fence before it, and a mark stored without a CAS (which can
undo a fold and bring the count back).
"""

import pytest

from helpers.spin import assert_verifies, assert_violates

MODEL = "rewrite-mark.pml"


@pytest.mark.parametrize("defines", [
    (),
    # three rounds of the front end against one fold: 3.1 million states
    ("R=3", "FOLDS=1"),
], ids=["two-writers", "three-rounds"])
def test_rewrite_mark_model_verifies(defines):
    assert_verifies(MODEL, defines)


@pytest.mark.parametrize("bug", ["BUG_MARK_FIRST", "BUG_NO_FENCE",
                                 "BUG_PLAIN_MARK"])
def test_rewrite_mark_model_catches(bug):
    assert_violates(MODEL, (bug,))
