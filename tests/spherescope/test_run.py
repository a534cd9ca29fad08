"""The SDK's Run against a real store, read back through db.queries."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import torch

import spherescope
from db import queries
from db.store import RunStore
from sphere_engine.catalogue import norm_histogram as hist
from sphere_engine.diagnostics import batch_statistics
from tests.spherescope.conftest import toy_problem


def _plain_loop(
    run: spherescope.Run,
    model: torch.nn.Module,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    steps: int = 6,
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(1, steps + 1):
        embeddings = model(inputs)
        run.log_embeddings(embeddings, labels, step=step)
        loss = -torch.nn.functional.normalize(embeddings, dim=1)[:, 0].mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        run.log({"loss/total": loss.item(), "lr": 0.1}, step=step)
    with torch.no_grad():
        run.evaluate(model(inputs), labels, step=steps)


def _series(store: RunStore, run_id: str) -> dict[str, list[tuple[int, float]]]:
    frame = queries.metric_series(store, run_id, queries.metric_names(store, run_id))
    return {
        name: list(zip(group["step"].tolist(), group["value"].tolist(), strict=True))
        for name, group in frame.groupby("name")
    }


def test_plain_loop_logs_engine_diagnostics_gradients_eval_and_snapshot(store: RunStore) -> None:
    model, inputs, labels = toy_problem()
    with spherescope.init(
        name="plain", config={"lr": 0.1}, tags=["sdk"], tracked=(inputs[:6], model)
    ) as run:
        _plain_loop(run, model, inputs, labels)
    record = queries.get_run(store, run.id)
    assert (record.kind, record.status, record.name, record.tags) == (
        "external",
        "finished",
        "plain",
        ["sdk"],
    )
    series = _series(store, run.id)
    for name in ("norm/var", "norm/p95", "cos/gap", "grad/norm_inv_corr", "grad/radial_cos",
                 "grad/rotation_ratio", "direction/angle_mean", "loss/total", "lr"):  # fmt: skip
        assert [step for step, _ in series[name]] == list(range(1, 7)), name
    # a loss on normalised embeddings: gradients are tangential (radial cosine ≈ 0)
    assert all(abs(value) < 1e-4 for _, value in series["grad/radial_cos"])
    assert math.isnan(series["direction/angle_mean"][0][1])
    assert series["direction/angle_mean"][1][1] > 0
    evals = queries.eval_series(store, run.id)
    assert {"recall@1", "nmi", "angle/inter_mean"} <= set(evals["name"])
    assert queries.snapshot_steps(store, run.id) == [6]
    assert len(queries.snapshot(store, run.id, 6)) == 60
    norms = queries.sample_norms(store, run.id)
    assert sorted(set(norms["sample"])) == list(range(6))


def test_logged_values_are_the_engines_own_statistics(store: RunStore) -> None:
    model, inputs, labels = toy_problem(3)
    with spherescope.init() as run:
        embeddings = model(inputs)
        run.log_embeddings(embeddings, labels, step=1)
        embeddings.square().sum().backward()
    packed = batch_statistics(embeddings, labels, 2 * embeddings.detach())
    logged = {name: values[0][1] for name, values in _series(store, run.id).items()}
    # the norm histogram is logged as the non-empty bins' fractions of the batch
    counts = {k: packed[k].item() for k in packed if k.startswith(hist.PREFIX)}
    fractions = {k: v for k, v in logged.items() if k.startswith(hist.PREFIX)}
    assert fractions == {k: pytest.approx(c / sum(counts.values())) for k, c in counts.items() if c}
    expected = {k: packed[k] for k in packed if not k.startswith(hist.PREFIX)}
    assert set(logged) - set(fractions) == set(expected)
    for name in expected:
        assert logged[name] == pytest.approx(expected[name].item(), rel=1e-5, abs=1e-6), name


def test_log_every_and_no_backward_means_no_gradient_statistics(store: RunStore) -> None:
    model, inputs, labels = toy_problem()
    with spherescope.init(log_every=2) as run, torch.no_grad():
        for step in range(1, 6):
            run.log_embeddings(model(inputs), labels, step=step)
    series = _series(store, run.id)
    assert [step for step, _ in series["norm/mean"]] == [2, 4]
    assert not any(name.startswith("grad/") for name in series)


def test_tracked_sample_ids_follow_the_samples_in_each_batch(store: RunStore) -> None:
    model, inputs, labels = toy_problem()
    ids = torch.arange(100, 160)
    with spherescope.init(tracked=[101, 103]) as run, torch.no_grad():
        run.log_embeddings(model(inputs), labels, step=1, sample_ids=ids)
        run.log_embeddings(model(inputs[::2]), labels[::2], step=2, sample_ids=ids[::2])
    norms = queries.sample_norms(store, run.id)
    assert sorted(zip(norms["step"], norms["sample"], strict=True)) == [(1, 101), (1, 103)]
    expected = model(inputs[1]).norm().item()
    assert norms[norms["sample"] == 101]["norm"].item() == pytest.approx(expected, rel=1e-5)


def test_crash_inside_with_ends_the_run_failed_and_reraises(store: RunStore) -> None:
    with pytest.raises(ZeroDivisionError), spherescope.init(name="crash") as run:
        run.log({"loss/total": 1.0}, step=1)
        _ = 1 / 0
    record = queries.get_run(store, run.id)
    assert record.status == "failed"
    assert "ZeroDivisionError" in record.status_message
    assert [s for s, _ in _series(store, run.id)["loss/total"]] == [1]


def test_bad_input_is_a_clear_value_error(store: RunStore) -> None:
    with spherescope.init() as run:
        with pytest.raises(ValueError, match="step"):
            run.log({"a": 1.0}, step=-1)
        with pytest.raises(ValueError, match="'a' must be a number"):
            run.log({"a": "x"}, step=1)
        with pytest.raises(ValueError, match="labels"):
            run.log_embeddings(torch.ones(4, 3), [0, 1], step=1)
    with pytest.raises(ValueError, match="log_every"):
        spherescope.init(log_every=0)
    with pytest.raises(ValueError, match="tracked"):
        spherescope.init(tracked=[[1, 2]])


def test_unwritable_store_does_not_stop_training_and_the_run_records_it(store: RunStore) -> None:
    model, inputs, labels = toy_problem()
    run = spherescope.init(name="blocked")
    tables = store.run_dir(run.id) / "tables"
    tables.mkdir(exist_ok=True)
    blocked = tables / "scalars"
    if blocked.exists():
        blocked.rmdir()
    blocked.write_text("not a folder")  # every scalar chunk write fails (also as root)
    run._writer.tracker.flush_interval = 0.0  # try to write on every call
    with pytest.warns(RuntimeWarning, match="writing to the store failed") as caught:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(1, 8):
            embeddings = model(inputs)
            run.log_embeddings(embeddings, labels, step=step)
            embeddings.norm(dim=1).mean().backward()
            optimizer.step()
            optimizer.zero_grad()
            run.log({"loss/total": 1.0}, step=step)
        run.finish()
    assert len([w for w in caught if "writing to the store failed" in str(w.message)]) == 1
    record = queries.get_run(store, run.id)
    assert record.status == "finished"
    assert record.extra["write_failures"] >= 7
    assert "scalars" in record.extra["write_problem"]


def test_strict_run_raises_on_a_failed_write(store: RunStore) -> None:
    run = spherescope.init(strict=True)
    tables = store.run_dir(run.id) / "tables"
    tables.mkdir(exist_ok=True)
    (tables / "scalars").write_text("not a folder")
    run._writer.tracker.flush_interval = 0.0
    with pytest.raises(RuntimeError, match="could not write"):
        run.log({"loss/total": 1.0}, step=1)
    np.testing.assert_equal(queries.get_run(store, run.id).status, "running")


def test_the_buffer_of_an_unwritable_store_stays_bounded(store: RunStore) -> None:
    run = spherescope.init(name="bounded")
    tables = store.run_dir(run.id) / "tables"
    tables.mkdir(exist_ok=True)
    (tables / "scalars").write_text("not a folder")
    run._writer.tracker.flush_interval = 0.0
    run._writer.max_buffer_rows = 50
    with pytest.warns(RuntimeWarning):
        for step in range(1, 101):
            run.log({"a": 1.0, "b": 2.0}, step=step)
            assert run._writer.tracker.buffered_rows() <= 52  # bound + one call's rows
        run.finish()
    extra = queries.get_run(store, run.id).extra
    assert extra["write_dropped_rows"] >= 100


def test_the_heartbeat_carries_the_latest_step(store: RunStore) -> None:
    with spherescope.init(name="progress") as run:
        run.log({"loss/total": 1.0}, step=5)
        deadline = time.monotonic() + 10
        while queries.get_run(store, run.id).progress_step != 5:
            assert time.monotonic() < deadline, "the heartbeat never reported step 5"
            time.sleep(0.05)


def test_store_writes_and_the_batched_finish_run_off_the_training_thread(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The flush (Parquet + fsync, compaction) and the NumPy finish of K steps must not
    land inside the user's step: they run on the SDK's writer thread."""
    import threading

    import sphere_engine.diagnostics.batched_finish as batched_finish
    from db.tracker import StoreTracker

    threads: dict[str, list[str]] = {"flush": [], "finish": []}
    flush, finish_steps = StoreTracker.flush, batched_finish.finish_steps

    def flush_noting_thread(self: StoreTracker) -> None:
        threads["flush"].append(threading.current_thread().name)
        flush(self)

    def finish_noting_thread(steps):  # type: ignore[no-untyped-def]
        threads["finish"].append(threading.current_thread().name)
        return finish_steps(steps)

    monkeypatch.setattr(StoreTracker, "flush", flush_noting_thread)
    monkeypatch.setattr(batched_finish, "finish_steps", finish_noting_thread)
    model, inputs, labels = toy_problem()
    run = spherescope.init(name="writer thread")
    run._writer.tracker.flush_interval = 0.0  # a flush with every write
    _plain_loop(run, model, inputs, labels, steps=40)
    run.finish()
    writer_thread = f"spherescope-writer-{run.id}"
    assert set(threads["finish"]) == {writer_thread}
    # every flush on the writer thread but the final one, after the thread has stopped
    # every flush on the writer thread, but those of the run's end (after it stopped)
    main = threading.current_thread().name
    first_at_end = threads["flush"].index(main)
    assert set(threads["flush"][:first_at_end]) == {writer_thread} and first_at_end > 40
    assert set(threads["flush"][first_at_end:]) == {main}
    series = _series(store, run.id)
    assert [step for step, _ in series["norm/var"]] == list(range(1, 41))
    assert [step for step, _ in series["loss/total"]] == list(range(1, 41))


def test_a_failing_writer_task_is_recorded_and_training_goes_on(
    store: RunStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a store error (those are retried) but a bug on the writer thread: the user's
    training must not die of it, and the run must say what happened."""
    import sphere_engine.diagnostics.batched_finish as batched_finish

    def broken_finish(steps):  # type: ignore[no-untyped-def]
        raise ArithmeticError("finish exploded")

    monkeypatch.setattr(batched_finish, "finish_steps", broken_finish)
    model, inputs, labels = toy_problem()
    with (
        pytest.warns(RuntimeWarning, match="finish exploded"),
        spherescope.init(name="broken finish") as run,
    ):
        _plain_loop(run, model, inputs, labels, steps=3)
    record = queries.get_run(store, run.id)
    assert record.status == "finished"
    assert "finish exploded" in record.extra["write_problem"]
    assert [step for step, _ in _series(store, run.id)["loss/total"]] == [1, 2, 3]


@pytest.mark.parametrize("strict", [False, True])
def test_every_scalar_is_written_across_hand_overs(store: RunStore, strict: bool) -> None:
    """``log`` collects scalar rows between hand-overs to the writer (one write per
    batch): every call's values arrive, whatever type they came as, in either mode."""
    values = [0.5, 2, np.float32(1.25), torch.tensor(3.0), float("nan")]
    with spherescope.init(name="many", home=str(store.home), strict=strict) as run:
        for step in range(150):  # over two hand-overs of 64 calls
            run.log({"a": values[step % len(values)], "b": float(step)}, step=np.int64(step))
    series = _series(store, run.id)
    assert [s for s, _ in series["b"]] == list(range(150))
    assert [v for _, v in series["b"]] == [float(s) for s in range(150)]
    expected = [float(values[s % len(values)]) for s in range(150)]
    got = [v for _, v in series["a"]]
    assert all(
        (math.isnan(a) and math.isnan(b)) or a == b for a, b in zip(got, expected, strict=True)
    )
