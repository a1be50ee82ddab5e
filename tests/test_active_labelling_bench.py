"""The active-labelling benchmark (benchmarks/active_labelling.py): one tiny unit end to end."""


import numpy as np
import pytest


@pytest.fixture(scope="module")
def al(load_benchmark):
    return load_benchmark("active_labelling")


def test_one_unit_gives_sane_records(al):
    # a large batch and few draws: each arm finishes in a couple of fits
    settings = al.Settings(batch=40, chains=1, draws=200, tune=200)
    d = al.make_draw("mtbench", 0, settings)
    assert d.n == 200 and d.p_true == pytest.approx(0.8)
    assert sorted(d.order.tolist()) == list(range(d.n))
    # the same flags give the same draw
    d2 = al.make_draw("mtbench", 0, settings)
    assert (d.order == d2.order).all() and d.seeds == d2.seeds
    ppi = al.ppi_width(d, settings)
    assert ppi["n_labels"] == 60 and 0 < ppi["width"] < 1
    rec = al.run_unit(d, ppi["width"], settings)
    assert rec["n_30"] == 60 and rec["cap"] == 100 and rec["batch"] == 40
    assert 0 < rec["regression_30"]["width"] < 1
    for arm in al.ARMS:
        a = rec[arm]
        assert a["error"] is None
        assert 1 <= a["fits"] <= 3
        counts = [s["n_labels"] for s in a["steps"]]
        assert counts[0] == 4 and all(4 <= c <= rec["cap"] <= d.n for c in counts)
        assert counts == sorted(counts) and len(set(a["labelled"])) == a["n_stop"] == counts[-1]
        assert a["reached"] == (a["width_stop"] <= rec["target_width"])
        if a["reached"]:
            assert 4 <= a["labels_needed"] <= rec["cap"]
        else:
            assert a["labels_needed"] is None and a["n_stop"] == rec["cap"]
        assert 0 <= a["abs_err"] <= 1 and isinstance(a["covers"], bool)
        assert a["low"] <= a["p_mean"] <= a["high"]
    # both arms start from the same 4 labels and fit step 0 with the same seed
    assert rec["active"]["labelled"][:4] == rec["random"]["labelled"][:4]
    assert rec["active"]["steps"][0]["width"] == rec["random"]["steps"][0]["width"]
    assert np.isfinite(al._count(rec, "active")) and al.tables([rec]).count("| mtbench |") == 2
