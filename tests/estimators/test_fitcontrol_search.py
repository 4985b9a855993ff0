"""FitControl.search: the one way a search that polls the deadline itself is run by a method hook."""
from opttrees.estimators.fitcontrol import FitControl
from opttrees.interrupt import Budget


def test_search_times_its_stage_hands_down_the_budget_and_marks_only_a_stopped_search():
    ctl = FitControl(100.0)
    got = {}

    def fn(a, b, time_limit, flag=False):
        got.update(a=a, b=b, time_limit=time_limit, flag=flag)
        return "done"
    assert ctl.search("dp", fn, 1, 2, flag=True, stopped=lambda out: False) == "done"
    assert got["a"] == 1 and got["b"] == 2 and got["flag"] is True
    assert got["time_limit"] is ctl.budget            # the whole time left: the fit's own clock
    assert "dp" in ctl.timings and not ctl.cut_short
    ctl.search("local_search", fn, 1, 2, share=0.5, stopped=lambda out: out == "done", mark="local search")
    assert isinstance(got["time_limit"], Budget) and got["time_limit"] is not ctl.budget
    assert ctl.cut_short and ctl.aborted == "local search"


def test_by_default_a_search_is_cut_short_when_the_fit_is_stopping():
    ctl = FitControl(0.0)     # no time at all: the fit is stopping
    ctl.search("greedy", lambda time_limit: None)
    assert ctl.cut_short and ctl.aborted == "greedy"
    fresh = FitControl(None)
    fresh.search("greedy", lambda time_limit: None)
    assert not fresh.cut_short
