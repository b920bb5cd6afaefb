"""SPIN model of the allocator's free stacks (docs/models/free-stack.pml).

The model as written must verify: no object is handed out twice and the
stack holds exactly the free objects, with hosts dying at any step.  Its
two bug switches must each be caught, which shows the checks can fail:
a 2-bit tag (format 1's 20-bit tag, wrapping within a pop's window) and
a pop that reads the link before it has loaded both halves of the head.
"""

from helpers.spin import check_model

MODEL = "free-stack.pml"


def test_free_stack_verifies():
    ok, report = check_model(MODEL)
    assert ok, report


def test_free_stack_wrapping_tag_hands_out_an_object_twice():
    ok, report = check_model(MODEL, ["TAG_BITS=2"])
    assert not ok, report
    assert "assertion violated" in report, report


def test_free_stack_link_read_before_the_tag_is_caught():
    ok, report = check_model(MODEL, ["BUG_EARLY_NEXT"])
    assert not ok, report
    assert "assertion violated" in report, report
