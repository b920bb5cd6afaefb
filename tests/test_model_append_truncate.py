"""SPIN model of appends, pwrites and truncates with the write gate, a
crash of any host at any step and its recovery by a survivor
(docs/models/append-truncate.pml, docs/files.md "Append versus
truncate"): every run ends in a state that a serial order gives."""

from helpers.spin import check_model


def test_model_append_truncate():
    ok, report = check_model("append-truncate.pml")
    assert ok, "the protocol violates its invariants:\n" + report[-4000:]


def test_model_finds_old_append():
    """Defect 2: the append with no gate and a CAS-to-maximum."""
    ok, report = check_model("append-truncate.pml", ["OLD_APPEND"])
    assert not ok, "the model does not find defect 2 in the old append:\n" \
        + report[-4000:]


def test_model_finds_recovery_zeroing():
    """Recovery that zeroes a dead write's bytes beyond EOF (before format
    version 4) races a live append over them."""
    ok, report = check_model("append-truncate.pml", ["ZERO_RECOVERY"])
    assert not ok, "the model does not find the zeroing race:\n" \
        + report[-4000:]
