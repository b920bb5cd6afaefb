"""SPIN model of the page free stack's extents (docs/models/page-extents.pml).

The model as written must verify: no page is handed out twice, the
extents on the stack are disjoint and hold exactly the free pages, with
hosts taking tails and whole extents, pushing ranges that join the top
extent from above or below, and dying at any step.  Its two bug switches
must each be caught, which shows the checks can fail: a take of the top
extent's front (its link stored into a page a racing take of the tail
may hold) and a head compared without its tag.
"""

from helpers.spin import check_model

MODEL = "page-extents.pml"


def test_page_extents_verify():
    ok, report = check_model(MODEL)
    assert ok, report


def test_page_extents_front_take_is_caught():
    ok, report = check_model(MODEL, ["BUG_FRONT_TAKE"])
    assert not ok, report
    assert "assertion violated" in report, report


def test_page_extents_untagged_head_is_caught():
    ok, report = check_model(MODEL, ["BUG_NO_TAG"])
    assert not ok, report
    assert "assertion violated" in report, report
