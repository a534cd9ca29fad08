"""app/views/explorer.py: per-query results of an evaluation step (``db.query_results``)."""

from __future__ import annotations

import numpy as np
import pytest
from app_fixtures import open_page, texts

from app.data import explorer
from db.query_results import query_results, write_query_results


def step_results(run_id: str, store, step: int) -> None:
    # 6 queries of classes 0, 0, 1, 1, 2, 2; k = 3 neighbours each
    neighbour_labels = [[0, 1, 0], [1, 1, 0], [1, 0, 1], [1, 1, 2], [1, 2, 2], [2, 2, 2]]
    write_query_results(
        store,
        run_id,
        step,
        {
            "query": np.arange(6),
            "label": [0, 0, 1, 1, 2, 2],
            "positives": [1, 1, 1, 1, 1, 1],
            "hit@1": [1, 0, 1, 1, 0, 1],
            "ap@r": [1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
            "neighbors": [[1, 2, 3], [2, 3, 0], [3, 0, 1], [2, 3, 4], [2, 5, 3], [4, 1, 0]],
            "neighbor_labels": neighbour_labels,
            "similarities": [[0.9, 0.5, 0.4]] * 6,
        },
        {
            "label": [0, 1, 2],
            "samples": [2, 2, 2],
            "queries": [2, 2, 2],
            "recall@1": [0.5, 1.0, 0.5],
            "map@r": [0.5, 1.0, 0.5],
            "class_name": ["cat", "dog", "owl"],
        },
    )


@pytest.fixture
def run_with_results(store) -> str:
    run_id = store.create_run({}, "explored", kind="analysis")
    step_results(run_id, store, 100)
    step_results(run_id, store, 200)
    return run_id


def test_worst_queries_confusions_and_strips(run_with_results, store) -> None:
    rows = query_results(store, run_with_results, 200)
    worst = explorer.worst_queries(rows, "R@1 (a miss first)", 2)
    assert list(worst["query"]) == [1, 4]
    names = {0: "cat", 1: "dog", 2: "owl"}
    strip = explorer.neighbour_strip(worst.iloc[0], names)
    assert list(strip["class"]) == ["dog", "dog", "cat"]
    assert list(strip["correct"]) == [False, False, True]
    pairs = explorer.confused_pairs(rows, names)
    assert pairs.to_dict("records") == [
        {"true": "cat", "retrieved": "dog", "queries": 1, "share": 0.5},
        {"true": "owl", "retrieved": "dog", "queries": 1, "share": 0.5},
    ]


def test_the_page_shows_the_worst_queries_and_the_class_tables(run_with_results) -> None:
    app = open_page("views/explorer.py", {"run_id": run_with_results})
    assert not app.exception and not app.error
    assert app.select_slider(key="explorer.step").value == 200
    shown = [m.value for m in app.markdown]
    assert any(m.startswith("**query 1** · class `cat` · R@1 miss") for m in shown), shown
    per_class = next(t.value for t in app.dataframe if "recall@1" in t.value.columns)
    assert list(per_class["class"]) == ["cat", "owl", "dog"]  # worst Recall@1 first


def test_a_step_without_an_evaluation_says_which_steps_have_one(run_with_results) -> None:
    app = open_page("views/explorer.py", {"run_id": run_with_results, "step": "150"})
    assert not app.exception
    assert any(
        "Step 150 has no per-query evaluation; steps with one: 100, 200" in w
        for w in texts(app.warning)
    )


def test_a_run_without_results_says_so(store) -> None:
    run_id = store.create_run({}, "plain", kind="analysis")
    app = open_page("views/explorer.py", {"run_id": run_id})
    assert not app.exception
    assert any("no per-query results" in i for i in texts(app.info))


def test_a_real_analysis_run_is_explored_with_its_class_names(store, tmp_path, capsys) -> None:
    from worker.cli import main

    rng = np.random.default_rng(0)
    names = np.array(["cat", "dog", "owl"])
    labels = np.repeat(np.arange(3), 30)
    embeddings = rng.normal(size=(90, 8)) + 1.0 * np.eye(8)[labels]  # overlapping: misses
    np.savez(tmp_path / "emb.npz", embeddings=embeddings, labels=names[labels])
    assert main(["analyze", str(tmp_path / "emb.npz")]) == 0
    run_id = store.list_runs()[0].run_id
    app = open_page("views/explorer.py", {"run_id": run_id})
    assert not app.exception and not app.error
    shown = [m.value for m in app.markdown]
    assert any(m.startswith("**query ") and "R@1 miss" in m for m in shown), shown
    strips = [t.value for t in app.dataframe if "neighbour" in t.value.columns]
    assert strips and set(strips[0]["class"]) <= {"cat", "dog", "owl"}
    assert "✗ other" in set(strips[0]["correct"])
    per_class = next(t.value for t in app.dataframe if "recall@1" in t.value.columns)
    assert sorted(per_class["class"]) == ["cat", "dog", "owl"]


def test_each_strip_shows_the_stored_images_and_ids_for_the_rest(run_with_results, store) -> None:
    from db.thumbnails import write_thumbnails

    # images of query 1 and of its first neighbour (2); neighbour 3 and 0 have none
    write_thumbnails(store, run_with_results, [1, 2], np.full((2, 8, 8), 128, np.uint8))
    app = open_page("views/explorer.py", {"run_id": run_with_results})
    assert not app.exception and not app.error
    strips = [h.proto.body for h in app.get("html") if "neighbour-strip" in h.proto.body]
    strips = [s for s in strips if 'title="query 1,' in s]
    assert len(strips) == 1, strips
    strip = strips[0]
    assert strip.count("<img") == 2 and strip.count("data:image/png;base64,") == 2
    assert '<figure class="wrong" title="#1: sample 2, class dog">' in strip
    assert "<code>3</code>" in strip and "<code>0</code>" in strip  # ids stand in
    assert strip.count('class="correct"') == 1 and strip.count('class="wrong"') == 2
    assert "sim 0.900" in strip and "‖f‖ –" in strip  # this step stored no norms
