"""After Ctrl-C the DP's bound is not made: no solver starts, so the pass over the model that records it (0.2-0.8 s
on a 50,000-row OCT) would only delay the return."""
import numpy as np

from opttrees.data.prepared import prepare
from opttrees.dp import bound as bound_module
from opttrees.formulations import OCT
from opttrees.interrupt import STOP, stop_on_sigint


def test_no_bound_is_made_after_ctrl_c(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.random((40, 2)).round(1)
    y = (X[:, 0] > 0.5).astype(int)
    form = OCT(prepare(X, y), 1)
    made = []
    record = bound_module._record_model
    monkeypatch.setattr(bound_module, "_record_model", lambda m: made.append(1) or record(m))
    run = bound_module.dp_for_formulation(form)
    assert run.bound is not None and made == [1]
    with stop_on_sigint():       # a fit's outer block: the flag stays set until the fit returns
        STOP.set()
        run = bound_module.dp_for_formulation(form)
    assert run.bound is None and "Ctrl-C" in run.why_no_bound and made == [1]
    assert run.tree is not None        # the start is still returned
