from __future__ import annotations

import numpy as np
import pytest

from db.query_results import (
    evaluation_steps,
    per_class_results,
    query_results,
    write_query_results,
)


def _queries(count: int, k: int) -> dict:
    rng = np.random.default_rng(0)
    return {
        "query": np.arange(count),
        "label": np.arange(count) % 3,
        "positives": np.full(count, 4),
        "hit@1": np.arange(count) % 2 == 0,
        "ap@r": rng.random(count),
        "neighbors": rng.integers(0, 100, (count, k)),
        "neighbor_labels": rng.integers(0, 3, (count, k)),
        "similarities": np.sort(rng.random((count, k)).astype(np.float32), axis=1)[:, ::-1],
    }


def _classes() -> dict:
    return {
        "label": [0, 1, 2],
        "samples": [5, 5, 1],
        "queries": [5, 5, 0],
        "recall@1": [1.0, 0.5, np.nan],
        "map@r": [0.9, 0.4, np.nan],
        "class_name": ["cat", "dog", "eel"],
    }


def test_round_trip_per_step(store, config):
    run = store.create_run(config, "r")
    queries = _queries(6, 4)
    write_query_results(store, run, 100, queries, _classes())
    write_query_results(store, run, 50, _queries(2, 4), _classes())

    assert evaluation_steps(store, run) == [50, 100]
    rows = query_results(store, run, 100)
    assert list(rows["query"]) == list(range(6))
    assert [list(n) for n in rows["neighbors"]] == queries["neighbors"].tolist()
    np.testing.assert_allclose(np.stack(rows["similarities"]), queries["similarities"])
    assert rows["hit@1"].tolist() == queries["hit@1"].tolist()
    classes = per_class_results(store, run, 100)
    assert classes["class_name"].tolist() == ["cat", "dog", "eel"]
    assert np.isnan(classes["recall@1"].iloc[2])


def test_rewriting_a_step_replaces_it(store, config):
    run = store.create_run(config, "r")
    write_query_results(store, run, 7, _queries(6, 4), _classes())
    write_query_results(store, run, 7, _queries(3, 2), _classes())
    rows = query_results(store, run, 7)
    assert len(rows) == 3 and len(rows["neighbors"].iloc[0]) == 2


def test_missing_step_names_the_steps_there(store, config):
    run = store.create_run(config, "r")
    assert evaluation_steps(store, run) == []
    write_query_results(store, run, 10, _queries(2, 1), _classes())
    with pytest.raises(ValueError, match=r"no per-query results at step 11.*\[10\]"):
        per_class_results(store, run, 11)


def test_bad_input_is_refused_naming_the_column(store, config):
    run = store.create_run(config, "r")
    bad = _queries(4, 3)
    del bad["ap@r"]
    with pytest.raises(ValueError, match="ap@r"):
        write_query_results(store, run, 1, bad, _classes())
    ragged = _queries(4, 3)
    ragged["neighbors"] = ragged["neighbors"][:, :2][:3]
    with pytest.raises(ValueError, match="neighbors"):
        write_query_results(store, run, 1, ragged, _classes())
    with pytest.raises(ValueError, match="does not exist"):
        write_query_results(store, "nope", 1, _queries(1, 1), _classes())
    assert evaluation_steps(store, run) == []


def test_the_run_tracker_stores_an_evaluation_s_results(store, config):
    from sphere_engine.metrics.per_query import QueryResults

    run = store.create_run(config, "r")
    tracker = store.tracker(run)
    tracker.track_query_results(QueryResults(_queries(5, 3), _classes()), 40)
    assert evaluation_steps(store, run) == [40]
    assert len(query_results(store, run, 40)) == 5


def test_norms_are_kept_when_given_and_absent_otherwise(store, config):
    run = store.create_run(config, "r")
    queries = _queries(3, 2)
    queries["norm"] = np.array([1.0, 2.0, 3.0])
    queries["neighbor_norms"] = np.array([[0.5, 0.25], [4.0, 8.0], [1.5, 2.5]])
    write_query_results(store, run, 1, queries, _classes())
    rows = query_results(store, run, 1)
    assert rows["norm"].tolist() == [1.0, 2.0, 3.0]
    assert [list(n) for n in rows["neighbor_norms"]] == queries["neighbor_norms"].tolist()
    write_query_results(store, run, 2, _queries(3, 2), _classes())
    assert "neighbor_norms" not in query_results(store, run, 2)
    queries["neighbor_norms"] = np.zeros((3, 5))
    with pytest.raises(ValueError, match="neighbor_norms must be a"):
        write_query_results(store, run, 3, queries, _classes())
