"""The Report page in headless Chromium: a run launched untagged with
a preset's config counts and is named as such, a claim with one seed a side reads
"inconclusive" with its n, and the paper's values on another dataset get their own
panel."""

from __future__ import annotations

import re

import pytest
from dashboard_server import ARTIFACTS, dashboard

from db.store import RunStore
from sphere_engine.config import RunConfig
from sphere_engine.experiments import EXPERIMENT_TAG, VARIANT_TAG, get_experiment

pytestmark = pytest.mark.e2e


def _run(store: RunStore, name: str, variant: str, values: dict, tagged: bool) -> str:
    experiment = get_experiment(name)
    config = RunConfig.from_dict(
        experiment.config(experiment.variant(variant), 0, experiment.steps, "/data")
    ).to_dict()
    tags = [EXPERIMENT_TAG + name, VARIANT_TAG + variant] if tagged else []
    run_id = store.create_run(config, f"{variant} from the form", tags=tags, status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in (1, 2, 3, 4):
            tracker.track_many({"norm/var": values.pop("norm/var", 1.0)}, step)
        tracker.track_eval(values, 4)
    store.set_status(run_id, "finished")
    return run_id


def _choose(page, label: str, option: str, shown: str) -> None:
    """Pick ``option`` and wait until the rerun it starts has replaced every element:
    until then the previous experiment's claims are still on the page (stale), under
    the new one's title."""
    page.get_by_label(label).first.click()
    page.get_by_role("option", name=re.compile(option)).click()
    page.wait_for_function(
        "text => !document.querySelector('[data-stale=\"true\"]')"
        " && [...document.querySelectorAll('[data-testid=\"stElementContainer\"]')]"
        ".some(e => e.innerText.includes(text))",
        arg=shown,
        timeout=60_000,
    )


def test_report_counts_untagged_runs_and_says_inconclusive_with_one_seed(tmp_path, browser) -> None:
    home = tmp_path / "home"
    store = RunStore(home)
    _run(store, "isotropic", "softmax", {"classifier_accuracy": 0.90, "nmi": 0.60}, True)
    untagged = _run(
        store, "isotropic", "softmax + isotropic", {"classifier_accuracy": 0.95, "nmi": 0.7}, False
    )
    _run(store, "sec-ablation", "none", {"recall@1": 0.5, "nmi": 0.4}, True)
    with dashboard("main.py", {"SPHERESCOPE_HOME": str(home)}) as base:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{base}/report")
        page.get_by_role("heading", name="Reproduction report").wait_for(timeout=60_000)
        _choose(page, "Experiment", "^isotropic", "The isotropic regulariser costs no")
        main = page.locator('[data-testid="stMain"]')
        # the untagged run counts, and the page says how it was found
        used = page.get_by_text(re.compile(r"The 2 runs used: 1 tagged for it, 1 whose config"))
        used.click()
        page.get_by_text("config matches").first.wait_for(timeout=30_000)
        assert untagged in main.inner_text()
        # one seed a side: no "agrees", the n and the reason said
        text = main.inner_text()
        assert "inconclusive" in text and "agrees" not in text
        assert "(n = 1)" in text and "one seed a side" in text
        # digits measured, the paper on Cars196: its own panel, said in the caption
        _choose(page, "Experiment", "^sec-ablation", "at every η (NMI)")
        page.get_by_text("the paper's values, on cars196 (not a dataset measured here)").wait_for(
            timeout=30_000
        )
        # Issue 39: each panel inside the page, on one scale whose axis says what it is
        charts = main.locator('[data-testid="stVegaLiteChart"]')
        charts.first.wait_for(timeout=30_000)
        page.wait_for_timeout(1000)
        right = main.bounding_box()["x"] + main.bounding_box()["width"]
        panels = [charts.nth(i) for i in range(charts.count())]
        assert len(panels) >= 2
        for panel in panels:
            box = panel.bounding_box()
            assert box["x"] + box["width"] <= right + 1, (box, right)
        panels[-1].scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "report-panels.png"))
        labels = [p.get_attribute("aria-label") or p.inner_text() for p in panels]
        text = " ".join(labels)
        assert ", low" not in text, text
        page.close()
