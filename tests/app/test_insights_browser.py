"""Findings, the projector and the explorer's strips in headless Chromium, on runs
trained by `spherescope train` against the real stack (``shared_stack``, conftest.py)."""

from __future__ import annotations

import json

import pytest
from test_dashboard_e2e import _settle

from worker.cli import main

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BASE = """
[data]
name = "digits"
batch_size = 20
samples_per_class = 4
[model]
name = "mlp"
embedding_dim = 16
[objective]
kind = "loss"
name = "triplet"
[training]
steps = 20
[diagnostics]
eval_every = 1000
eval_max_samples = 200
tracked_samples = 4
"""


def _train(tmp_path, capsys, name: str, extra: str) -> str:
    path = tmp_path / f"{name}.toml"
    path.write_text(BASE + extra)
    assert main(["train", str(path), "--json", "--name", name]) == 0
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run_id"]


def test_a_diverging_run_shows_a_finding_a_healthy_one_none_and_the_projector_switches(
    shared_stack,
    stack_home,
    tmp_path,
    capsys,
    monkeypatch,
    browser,
):
    monkeypatch.setenv("SPHERESCOPE_HOME", str(stack_home))  # the stack's store
    diverging = _train(tmp_path, capsys, "diverging", '[optimizer]\nname = "sgd"\nlr = 1e9\n')
    healthy = _train(tmp_path, capsys, "healthy", '[regularizer]\nname = "sec"\nweight = 0.5\n')
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{shared_stack}/run?run_id={diverging}")
    alert = page.locator('[data-testid="stAlert"]').filter(has_text="Training diverged")
    alert.first.wait_for(timeout=90_000)
    assert "mean norm grew" in alert.first.inner_text()
    page.get_by_text("Why, and what to try: Training diverged").click()
    page.get_by_text("Lower the learning rate").first.wait_for(timeout=30_000)

    page.goto(f"{shared_stack}/run?run_id={healthy}")
    page.get_by_text("Findings: none for this run").wait_for(timeout=90_000)
    assert page.get_by_text("Training diverged").count() == 0

    page.goto(f"{shared_stack}/geometry?run_id={healthy}")
    page.get_by_text("PCA of the raw embeddings").first.wait_for(timeout=90_000)
    page.evaluate("() => { window.__same_page = true; }")  # gone if the page reloads
    page.get_by_text("t-SNE", exact=True).first.click()
    _settle(page)
    page.get_by_text("t-SNE of the raw embeddings").first.wait_for(timeout=120_000)
    page.get_by_text("unit sphere (f / ‖f‖)", exact=True).first.click()
    _settle(page)
    page.get_by_text("t-SNE of the unit sphere").first.wait_for(timeout=120_000)
    assert page.evaluate("() => window.__same_page === true")

    # the explorer: each worst query's strip shows the digits the evaluation drew
    page.goto(f"{shared_stack}/explorer?run_id={healthy}")
    strip = page.locator(".neighbour-strip").first
    strip.wait_for(timeout=90_000)
    images = page.locator(".neighbour-strip img")
    # all ten strips drawn (the page streams them in), each image decoded
    page.wait_for_function(
        "() => [...document.querySelectorAll('.neighbour-strip img')]"
        ".filter(i => i.complete && i.naturalWidth).length >= 110",
        timeout=60_000,
    )
    decoded = images.evaluate_all(
        "imgs => imgs.map(i => [i.complete && i.naturalWidth, i.naturalHeight])"
    )
    assert len(decoded) >= 10 * 11 and all(size == [8, 8] for size in decoded), decoded[:3]
    assert strip.locator("figure.query img").count() == 1
    assert strip.locator("figure.correct img, figure.wrong img").count() == 10
    assert "sim " in strip.inner_text() and "‖f‖" in strip.inner_text()
    page.goto(f"{shared_stack}/explorer?run_id={healthy}&step=7")
    page.get_by_text("Step 7 has no per-query evaluation; steps with one: 20").wait_for(
        timeout=90_000
    )
