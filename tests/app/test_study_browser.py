"""The Study page in headless Chromium while a study runs: its trials, budget and
charts come from the study's journal as the coordinator writes it, and the page follows
new trials without a reload."""

from __future__ import annotations

import copy
import re

import optuna
import pytest
from dashboard_server import dashboard

from worker.study import storage
from worker.study.coordinator import coordinator_lock, open_arm_studies
from worker.study.pruning import curve_step
from worker.study.spec import parse_spec

pytestmark = pytest.mark.e2e

STUDY = {
    "name": "page",
    "folds": 2,
    "trials": 4,
    "reproductions": 2,
    "base": {
        "data": {"name": "synthetic", "batch_size": 4, "samples_per_class": 2,
                 "options": {"num_classes": 16, "dim": 8}},
        "model": {"name": "mlp", "embedding_dim": 8},
    },
    "arms": {
        "triplet": {"set": {"objective.name": "triplet"},
                    "space": {"optimizer.lr": {"type": "log_float", "low": 1e-4, "high": 1e-1},
                              "objective.options.margin": {"type": "float", "low": 0.05,
                                                           "high": 0.5}}},
        "ms": {"set": {"objective.name": "multi_similarity"},
               "space": {"optimizer.lr": {"type": "log_float", "low": 1e-4, "high": 1e-1}}},
    },
}  # fmt: skip


def _complete(study: optuna.Study, value: float) -> None:
    trial = study.ask()
    trial.suggest_float("optimizer.lr", 1e-4, 1e-1, log=True)
    if "triplet" in study.study_name:
        trial.suggest_float("objective.options.margin", 0.05, 0.5)
    trial.set_user_attr("fold_values", {"0": value - 0.01, "1": value + 0.01})
    study.tell(trial, value)


def test_study_page_follows_a_running_study(tmp_path, browser) -> None:
    home = tmp_path / "home"
    spec = parse_spec(copy.deepcopy(STUDY))
    study_id = storage.create_study_folder(home, spec)
    with coordinator_lock(home, study_id):  # the page sees a live coordinator
        studies = open_arm_studies(home, study_id, spec)
        triplet, ms = studies["triplet"], studies["ms"]
        for value in (0.20, 0.25, 0.22):
            _complete(triplet, value)
        pruned = ms.ask()
        pruned.suggest_float("optimizer.lr", 1e-4, 1e-1, log=True)
        pruned.report(0.01, curve_step(0, 10))
        pruned.set_user_attr("pruned_reason", "Training diverged: loss/total became non-finite")
        ms.tell(pruned, state=optuna.trial.TrialState.PRUNED)
        with dashboard("main.py", {"SPHERESCOPE_HOME": str(home)}) as base:
            page = browser.new_page(viewport={"width": 1400, "height": 1400})
            page.goto(f"{base}/study?study_id={study_id}")
            page.get_by_role("heading", name="Study").first.wait_for(timeout=60_000)
            page.get_by_text("3 / 4").wait_for(timeout=60_000)  # triplet's budget used
            page.get_by_text("1 / 4").wait_for(timeout=30_000)
            # history, fANOVA importances and parallel coordinates of triplet's trials
            page.get_by_role("tab", name="triplet").click()
            charts = page.locator('[data-testid="stVegaLiteChart"]')
            charts.locator("visible=true").nth(2).wait_for(timeout=60_000)
            assert "Parameter importances need" not in page.inner_text("body")
            page.get_by_text("No reproduction has finished yet").wait_for(timeout=30_000)
            page.get_by_role("tab", name="ms").click()
            why = page.locator("td", has_text=re.compile("Training diverged"))
            why.first.wait_for(state="attached", timeout=30_000)  # the grid draws on a canvas
            # the coordinator goes on: the page follows without a reload
            _complete(triplet, 0.30)
            page.get_by_text("4 / 4").wait_for(timeout=30_000)
            page.close()
