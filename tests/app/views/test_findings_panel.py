"""Findings on the Run page (panel with evidence chart) and the Runs table (badges),
for runs recorded through the real lifecycle, which stores their findings at the end."""

from __future__ import annotations

import math

import pytest
from app_fixtures import charts_of, open_page, texts

from db.lifecycle import RunLifecycle
from db.store import RunStore


def record(store: RunStore, name: str, norm_at) -> str:
    run_id = store.create_run({"model": {"embedding_dim": 8}}, name, kind="train")
    with RunLifecycle(store, run_id, heartbeat_s=60) as run:
        for step in range(1, 41):
            run.tracker.track_many(
                {"loss/total": 0.1, "loss/metric": 0.1, "norm/mean": norm_at(step)}, step
            )
    return run_id


@pytest.fixture
def two_runs(store) -> tuple[str, str]:
    exploding = record(store, "exploding", lambda step: 0.3 * 10 ** (step * 0.8))
    healthy = record(store, "healthy", lambda step: 1.0 + math.log(step))
    return exploding, healthy


def test_a_diverged_run_shows_its_finding_with_the_evidence_chart(two_runs) -> None:
    exploding, _ = two_runs
    app = open_page("views/run.py", {"run_id": exploding})
    assert not app.exception
    errors = texts(app.error)
    assert any("Training diverged" in e and "mean norm grew" in e for e in errors), errors
    assert any("Untrusted result" in m and "Training diverged" in m for m in texts(app.markdown))
    assert any("Why, and what to try" in e.label for e in app.expander)
    evidence = [s for s in charts_of(app) if "Evidence" in str(s.get("title"))]
    assert len(evidence) == 1
    layers = evidence[0]["layer"]
    span = next(layer for layer in layers if layer["mark"]["type"] == "rect")
    (band,) = evidence[0]["datasets"][span["data"]["name"]]
    assert 1 < band["start"] < band["end"] == 40  # from where the norms exploded to the end


def test_a_healthy_run_has_no_finding_box(two_runs) -> None:
    _, healthy = two_runs
    app = open_page("views/run.py", {"run_id": healthy})
    assert not app.exception and not app.error
    assert any("Findings: none" in c for c in texts(app.caption))


def test_the_runs_table_shows_the_badges(two_runs) -> None:
    exploding, healthy = two_runs
    app = open_page("views/runs.py")
    assert not app.exception
    table = app.dataframe[0].value.set_index("run_id")
    assert table.loc[exploding, "findings"] == "⛔ Training diverged"
    assert table.loc[healthy, "findings"] == ""


def test_mining_diagnostics_have_their_own_tab(store) -> None:
    from app_fixtures import RUN_SECTION

    run_id = store.create_run({}, "mined", kind="train")
    with RunLifecycle(store, run_id, heartbeat_s=60) as run:
        for step in range(1, 21):
            values = {"loss/total": 0.1, "cos/pos": 0.6, "cos/neg": 0.1}
            values |= {"mining/active_fraction": 1 / step, "mining/hardest_neg_sim": 0.4}
            # positives moving up from cos 0.5 to 0.95 (bins 30 → 39); negatives at 0
            values |= {f"mining/pos_sim_hist/{30 + (step - 1) // 2:02d}": 1.0}
            values |= {"mining/neg_sim_hist/20": 0.75, "mining/neg_sim_hist/19": 0.25}
            run.tracker.track_many(values, step)
    app = open_page("views/run.py", {"run_id": run_id})
    assert "Mining" in [tab.label for tab in app.tabs]
    app.session_state[RUN_SECTION] = "Mining"
    app.run()
    assert not app.exception
    titles = [str(spec.get("title", {}).get("text")) for spec in charts_of(app)]
    assert any("Active pairs / triplets" in t for t in titles), titles
    assert any("Hardest-negative cosine" in t for t in titles), titles
    specs = {str(spec.get("title", {}).get("text")): spec for spec in charts_of(app)}
    positive = next(s for t, s in specs.items() if "Positive-pair cosine" in t)
    negative = next(s for t, s in specs.items() if "Negative-pair cosine" in t)
    cells = positive["datasets"]["rows"]
    lowers = sorted({round(c["lower"], 6) for c in cells})
    assert lowers == pytest.approx([0.5 + 0.05 * i for i in range(10)])
    assert all(c["fraction"] == 1.0 for c in cells)
    first = min(cells, key=lambda c: c["x0"])
    assert first["x0"] == 1 and first["lower"] == pytest.approx(0.5)
    last = max(cells, key=lambda c: c["x0"])
    assert last["lower"] == pytest.approx(0.95) and last["upper"] == pytest.approx(1.0)
    shares = {round(c["lower"], 2): c["fraction"] for c in negative["datasets"]["rows"]}
    assert shares == {0.0: 0.75, -0.05: 0.25}


def test_an_untrusted_run_is_flagged_and_left_out_of_rankings_unless_asked(store) -> None:
    import pandas as pd

    from app.panels.runs_columns import MetricFilter

    def with_recall(name: str, norm_at, recall: float) -> str:
        run_id = record(store, name, norm_at)
        with store.tracker(run_id, flush_interval=0) as tracker:
            tracker.track_eval({"recall@1": recall}, 40)
        return run_id

    # the diverged run has the highest Recall@1: it must not be the best
    exploding = with_recall("exploding", lambda step: 0.3 * 10 ** (step * 0.8), 0.9)
    healthy = with_recall("healthy", lambda step: 1.0 + math.log(step), 0.8)
    app = open_page("views/runs.py")
    table = app.dataframe[0].value.set_index("run_id")
    assert bool(table.loc[exploding, "untrusted"]) and not bool(table.loc[healthy, "untrusted"])

    frame = pd.DataFrame(
        {"run_id": [exploding, healthy], "eval: recall@1": [0.9, 0.8], "untrusted": [True, False]}
    )
    assert MetricFilter("eval: recall@1", None).apply(frame)["run_id"].tolist() == [
        healthy, exploding,
    ]  # fmt: skip
    ranked_all = MetricFilter("eval: recall@1", None, rank_untrusted=True).apply(frame)
    assert ranked_all["run_id"].tolist() == [exploding, healthy]

    compare = open_page("views/compare.py", {"runs": f"{exploding},{healthy}"})
    assert not compare.exception
    assert any("Not ranked" in c and "exploding" in c for c in texts(compare.caption))
    compare.toggle(key="compare.rank_untrusted").set_value(True).run()
    assert not any("Not ranked" in c for c in texts(compare.caption))
