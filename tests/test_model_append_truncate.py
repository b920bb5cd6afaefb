"""SPIN model of append versus truncate (and pwrite), with crashes
(docs/models/append-truncate.pml, docs/files.md "Append versus
truncate")."""

from helpers.spin import check_model


def test_model_append_truncate():
    ok, report = check_model("append-truncate.pml")
    assert ok, "the protocol violates its invariants:\n" + report[-4000:]
    ok, report = check_model("append-truncate.pml", ["OLD_APPEND"])
    assert not ok, "the model does not find defect 2 in the old append:\n" + report[-4000:]
