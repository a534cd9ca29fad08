"""``Run.log_mining``: the SDK logs the mining diagnostics the engine's losses log, and
a run whose miner finds nothing ends with the dead-loss finding."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import spherescope
from db import queries
from db.findings import stored_findings
from db.store import RunStore


def test_a_miner_that_finds_nothing_gives_a_dead_loss(store: RunStore) -> None:
    with spherescope.init(name="dead miner") as run:
        for step in range(1, 13):
            active = torch.zeros(40, dtype=torch.bool) if step > 2 else torch.ones(40).bool()
            run.log_mining(active, 40, step, hardest_neg_sim=torch.tensor(-0.2))
            run.log({"loss/total": 0.0 if step > 2 else 0.1}, step)
    series = queries.metric_series(store, run.id, ["mining/active_fraction"])
    assert list(series["value"]) == [1.0, 1.0] + [0.0] * 10
    hardest = queries.metric_series(store, run.id, ["mining/hardest_neg_sim"])
    assert np.allclose(hardest["value"], -0.2)
    found = stored_findings(queries.get_run(store, run.id).run_info)
    assert [d.name for d in found] == ["dead_loss"]
    assert found[0].step_start == 3 and found[0].step_end == 12


def test_counts_out_of_range_are_a_clear_error(store: RunStore) -> None:
    with spherescope.init(name="bad counts") as run:
        with pytest.raises(ValueError, match=r"active \(5\) must be between 0 and candidates"):
            run.log_mining(5, 4, step=1)
        run.log_mining(np.array([True, False, True, False]), 4, step=1)
    series = queries.metric_series(store, run.id, ["mining/active_fraction"])
    assert list(series["value"]) == [0.5]


def test_similarity_distributions_are_logged_as_the_engine_bins_them(store: RunStore) -> None:
    with spherescope.init(name="sims") as run:
        run.log_mining(3, 4, step=1, positive_sims=torch.tensor([0.99, 0.99, 0.01]))
        run.log_mining(3, 4, step=2, negative_sims=np.array([[-1.0, -0.28], [-0.28, 1.2]]))
        with pytest.raises(ValueError, match="negative_sims must be numbers"):
            run.log_mining(3, 4, step=3, negative_sims=np.array(["high"]))
    names = [n for n in queries.metric_names(store, run.id) if "_sim_hist/" in n]
    hist = queries.metric_series(store, run.id, names)
    got = {(int(r.step), r.name): r.value for r in hist.itertuples()}
    # bins of 0.05 over [-1, 1]; 1.2 (beyond 1) counts in the last bin
    assert got == pytest.approx(
        {
            (1, "mining/pos_sim_hist/39"): 2 / 3,
            (1, "mining/pos_sim_hist/20"): 1 / 3,
            (2, "mining/neg_sim_hist/00"): 0.25,
            (2, "mining/neg_sim_hist/14"): 0.5,
            (2, "mining/neg_sim_hist/39"): 0.25,
        }
    )
