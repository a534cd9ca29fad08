"""The batched host finish (K logged steps at once) equals the previous one-step finish
(``reference_finish``) to float64 rounding, on random and edge-case rows; a small CPU
batch reduced on the host gives the values of the same batch reduced by torch."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import reference_finish as ref
import torch

from sphere_engine.diagnostics import (
    DirectionTracker,
    StepStatistics,
    batch_statistics,
    reduces_on_host,
)
from sphere_engine.diagnostics.batched_finish import PendingStatistics, finish_steps


def _reference(raw: np.ndarray, count: int, gradient: bool) -> dict[str, float]:
    raw = raw.astype(np.float64)  # the host keeps the device's float32; finished in float64
    norms, labels, rest = raw[:count], raw[count : 2 * count], raw[2 * count :]
    order = np.argsort(norms, kind="stable")
    result = ref.finish_norms(norms, order)
    result.update(ref.histogram_fractions(norms))
    result.update(ref.finish_pairs(labels, rest[0], rest[1]))
    if gradient:
        result.update(ref.finish_gradient(norms, order, rest[2 : 2 + count], rest[2 + count :]))
    return result


def _same(batched: dict[str, float], expected: dict[str, float]) -> None:
    assert batched.keys() == expected.keys()
    for name, value in expected.items():
        got = batched[name]
        if math.isnan(value):
            assert math.isnan(got), name
        else:
            assert got == pytest.approx(value, rel=1e-12, abs=1e-15), name


def _steps(count: int, rows: int, gradient: bool, edit=None, host: bool = False) -> list:
    generator = torch.Generator().manual_seed(count * 7 + rows)
    hosts = []
    for row in range(rows):
        embeddings = torch.randn(count, 5, generator=generator) * (1 + row)
        labels = torch.randint(0, 4, (count,), generator=generator)
        grad = torch.randn(count, 5, generator=generator) if gradient else None
        if edit is not None:
            embeddings, labels, grad = edit(row, embeddings, labels, grad)
        stats = StepStatistics()
        stats.add({"loss/total": embeddings.sum()})
        stats.add(batch_statistics(embeddings, labels, grad, host))
        hosts.append(stats.transfer())
    return hosts


def _no_positives(row, embeddings, labels, grad):
    return embeddings, torch.arange(len(labels)), grad


def _zero_gradients(row, embeddings, labels, grad):
    grad[: row + 1] = 0.0  # some rows partly inactive, one wholly when row + 1 ≥ N
    return embeddings, labels, grad


def _diverged(row, embeddings, labels, grad):
    if row % 2:
        embeddings[0, 0] = float("inf")
    if row % 3 == 0:
        embeddings[-1, 1] = float("nan")
    return embeddings, labels, grad


@pytest.mark.parametrize("count", [1, 2, 7, 40])
@pytest.mark.parametrize("gradient", [False, True])
@pytest.mark.parametrize("edit", [None, _no_positives, _zero_gradients, _diverged])
def test_batched_finish_equals_the_one_step_finish(count, gradient, edit) -> None:
    if edit is _zero_gradients and not gradient:
        return
    hosts = _steps(count, 6, gradient, edit)
    batched = finish_steps(hosts)
    for host, values in zip(hosts, batched, strict=True):
        with np.errstate(all="ignore"):  # as the finish itself: NaN/inf are values
            expected = _reference(host.raw[1:], count, gradient)
        expected["loss/total"] = host.raw[0]
        _same(values, expected)
        _same(finish_steps([host])[0], expected)  # K = 1 is the same computation


def test_directions_batched_equal_the_one_step_finish() -> None:
    torch.manual_seed(3)
    tracker = DirectionTracker(host=False)
    hosts, current = [], torch.randn(5, 3)
    for step in range(8):
        stats = StepStatistics()
        current = current.clone() if step == 4 else torch.randn(5, 3)  # step 4: still
        stats.add(tracker.update(current))
        hosts.append(stats.transfer())
    batched = finish_steps(hosts)
    assert all(math.isnan(v) for v in batched[0].values())  # the first update: no turn
    for host, values in zip(hosts[1:], batched[1:], strict=True):
        expected = ref.finish_directions(*np.split(host.raw.astype(np.float64), [5]))
        _same(values, expected)
    assert math.isnan(batched[4]["direction/update_ratio"])  # nothing moved


def _close(got: dict[str, float], expected: dict[str, float]) -> None:
    """Equal up to float32 rounding (torch reduces in float32, the host in float64)."""
    assert got.keys() == expected.keys()
    for name, value in expected.items():
        if math.isnan(value):
            assert math.isnan(got[name]), name
        else:
            assert got[name] == pytest.approx(value, rel=2e-5, abs=1e-6), name


@pytest.mark.parametrize("count", [1, 2, 7, 40])
@pytest.mark.parametrize("gradient", [False, True])
@pytest.mark.parametrize("edit", [None, _no_positives, _zero_gradients, _diverged])
def test_a_batch_reduced_on_the_host_gives_the_device_values(count, gradient, edit) -> None:
    if edit is _zero_gradients and not gradient:
        return
    on_host = _steps(count, 6, gradient, edit, host=True)
    on_device = _steps(count, 6, gradient, edit, host=False)
    assert on_host[0].layout != on_device[0].layout  # the two paths really differ
    batched = finish_steps(on_host)
    for host, values, expected in zip(on_host, batched, finish_steps(on_device), strict=True):
        _close(values, expected)
        _same(finish_steps([host])[0], values)  # K = 1 is the same computation


def test_turns_reduced_on_the_host_give_the_device_values() -> None:
    torch.manual_seed(4)
    finished = {}
    for host in (False, True):
        tracker, hosts = DirectionTracker(host), []
        generator = torch.Generator().manual_seed(5)
        current = torch.randn(6, 4, generator=generator)
        for step in range(7):
            stats = StepStatistics()
            current = current.clone() if step == 3 else torch.randn(6, 4, generator=generator)
            stats.add(tracker.update(current))
            stats.sample_norms = tracker.norms
            hosts.append(stats.transfer())
        finished[host] = finish_steps(hosts), np.concatenate([h.sample_norms for h in hosts])
    (device, device_norms), (host, host_norms) = finished[False], finished[True]
    np.testing.assert_allclose(host_norms, device_norms, rtol=1e-6)
    for got, expected in zip(host, device, strict=True):
        _close(got, expected)
    assert math.isnan(host[3]["direction/update_ratio"])  # nothing moved


def test_small_cpu_batches_are_reduced_on_the_host() -> None:
    assert reduces_on_host(torch.zeros(40, 64))  # the digits MLP's batch
    assert reduces_on_host(torch.zeros(256, 256))
    assert not reduces_on_host(torch.zeros(257, 256))  # K pending steps would hold too much
    assert not reduces_on_host(torch.zeros(40, 64), host=False)


def test_steps_of_another_layout_are_finished_apart_in_step_order() -> None:
    hosts = _steps(8, 2, True) + _steps(5, 1, True) + _steps(8, 1, True)
    pending = PendingStatistics(max_steps=4, clock=lambda: 0.0)
    for step, host in enumerate(hosts):
        assert not pending.due()
        pending.add(step, host, {"lr": 0.1})
    assert pending.due()
    records = pending.finish()
    assert [r.step for r in records] == [0, 1, 2, 3] and len(pending) == 0
    assert records[2].values["norm/mean"] == finish_steps([hosts[2]])[0]["norm/mean"]
    assert all(r.values["lr"] == 0.1 for r in records)
    assert pending.last is records[-1]


def test_pending_steps_are_due_after_their_age() -> None:
    now = [0.0]
    pending = PendingStatistics(max_steps=32, max_age_s=0.5, clock=lambda: now[0])
    pending.add(1, _steps(4, 1, False)[0])
    now[0] = 0.4
    assert not pending.due()
    now[0] = 0.5
    assert pending.due()


def test_a_step_finished_later_keeps_the_wall_time_it_happened_at() -> None:
    """The store's wall_time (the wall-clock axis, the live page's lag) is the step's,
    not the time of the batched finish that reports it."""
    from sphere_engine.tracking import InMemoryTracker

    before = time.time()
    (host,) = _steps(6, 1, True)
    after = time.time()
    pending = PendingStatistics()
    pending.add(3, host)
    time.sleep(0.3)
    (record,) = pending.finish()
    tracker = InMemoryTracker()
    tracker.track_many(record.values, record.step, record.wall_time)
    walls = {wall for _, _, _, wall in tracker.scalars}
    assert len(walls) == 1 and before <= walls.pop() <= after


def test_a_step_on_its_way_to_the_host_finishes_as_one_already_there() -> None:
    """Steps handed over with their device copy still pending (``PendingTransfer``, what
    an accelerator's step is until the writer thread waits for it) finish, mixed with
    steps already on the host, to the same values."""
    from sphere_engine.diagnostics.batched_finish import finish_waiting
    from sphere_engine.diagnostics.external_step import ExternalStep
    from sphere_engine.diagnostics.step_transfer import PendingTransfer

    steps = ExternalStep(log_every=1)
    generator = torch.Generator().manual_seed(3)
    embeddings = torch.randn(12, 5, generator=generator)
    labels = torch.arange(12) % 3
    for step in (1, 2):
        steps.observe(embeddings * step, labels, step)
    waiting = steps.drain_unfinished(finish=True)
    host = waiting[1][1]
    flat = torch.from_numpy(np.concatenate([host.raw, host.sample_norms]))
    pending = PendingTransfer(host.groups, flat, len(host.raw))
    mixed = [waiting[0], (2, pending, waiting[1][2], waiting[1][3])]
    assert [r.values for r in finish_waiting(mixed)] == [r.values for r in finish_waiting(waiting)]
    norms = (embeddings * 2).norm(dim=1).double()
    assert finish_waiting(mixed)[1].values["norm/mean"] == pytest.approx(float(norms.mean()))
