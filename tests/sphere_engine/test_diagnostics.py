"""Per-step geometry statistics against values computed by hand."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from sphere_engine.catalogue import norm_histogram as hist
from sphere_engine.diagnostics import (
    DirectionTracker,
    StepStatistics,
    batch_statistics,
    gradient_statistics,
    packed_norm_statistics,
    pair_cosines,
)


def test_packed_norm_statistics_by_hand() -> None:
    norms = torch.tensor([1.0, 2.0, 3.0, 6.0])
    stats = packed_norm_statistics(norms)
    assert math.isclose(stats["norm/mean"].item(), 3.0)
    assert math.isclose(stats["norm/var"].item(), (4 + 1 + 0 + 9) / 4)  # population variance
    assert math.isclose(stats["norm/cv"].item(), math.sqrt(3.5) / 3.0, rel_tol=1e-6)
    assert stats["norm/min"].item() == 1.0 and stats["norm/max"].item() == 6.0
    assert math.isclose(stats["norm/p50"].item(), 2.5)


def test_pair_cosines_on_angles() -> None:
    angles = torch.tensor([0.0, math.pi / 3, math.pi / 2, math.pi])
    directions = torch.stack([angles.cos(), angles.sin()], dim=1)
    labels = torch.tensor([0, 0, 1, 1])
    stats = pair_cosines(directions, labels)
    # positives: (0, 60°) → 0.5 and (90°, 180°) → 0; negatives: 0°-90° 0, 0°-180° −1,
    # 60°-90° cos 30°, 60°-180° cos 120° = −0.5
    assert math.isclose(stats["cos/pos"].item(), 0.25, abs_tol=1e-6)
    expected_neg = (0 - 1 + math.cos(math.pi / 6) - 0.5) / 4
    assert math.isclose(stats["cos/neg"].item(), expected_neg, abs_tol=1e-6)
    assert math.isclose(stats["cos/gap"].item(), 0.25 - expected_neg, abs_tol=1e-6)


# where the per-sample reductions run: in torch (every GPU batch, large CPU batches) or
# in the host finish (small CPU batches); both must give the textbook values
BOTH_PATHS = pytest.mark.parametrize("host", [False, True], ids=["device", "host"])


@BOTH_PATHS
def test_gradient_of_normalised_loss_is_tangential_and_scales_inversely_with_norm(
    host: bool,
) -> None:
    torch.manual_seed(0)
    raw = torch.randn(64, 8)
    scales = torch.linspace(0.5, 5.0, 64)[:, None]
    embeddings = (raw / raw.norm(dim=1, keepdim=True) * scales).requires_grad_()
    target = F.normalize(torch.randn(64, 8), dim=1)
    loss = -(F.normalize(embeddings, dim=1) * target).sum()
    loss.backward()
    stats = gradient_statistics(
        embeddings.detach(), embeddings.detach().norm(dim=1), embeddings.grad, host=host
    )
    assert stats["grad/radial_cos"].item() < 1e-5  # orthogonal to f_i
    assert stats["grad/norm_inv_corr"].item() > 0.8  # magnitude ∝ 1/||f_i||
    assert stats["grad/rotation_ratio"].item() > 5.0  # small norms turn much faster


@BOTH_PATHS
def test_direction_tracker_angles_and_ratio(host: bool) -> None:
    tracker = DirectionTracker(host)
    first = torch.tensor([[1.0, 0.0], [0.0, 4.0]])  # small norm, large norm
    result = tracker.update(first)
    assert math.isnan(result["direction/angle_mean"].item())
    turned = torch.tensor([[math.cos(0.2), math.sin(0.2)], [-4 * math.sin(0.1), 4 * math.cos(0.1)]])
    result = tracker.update(turned)
    assert math.isclose(result["direction/angle_mean"].item(), math.degrees(0.15), rel_tol=1e-5)
    assert math.isclose(result["direction/update_ratio"].item(), 2.0, rel_tol=1e-5)
    assert torch.allclose(tracker.norms, torch.tensor([1.0, 4.0]))


def test_step_statistics_one_transfer_keeps_names() -> None:
    stats = StepStatistics()
    stats.add({"a": torch.tensor(1.5), "b": torch.tensor(2)})
    stats.sample_norms = torch.tensor([3.0, 4.0])
    values, norms = stats.to_host()
    assert values == {"a": 1.5, "b": 2.0}
    assert norms == [3.0, 4.0]


@BOTH_PATHS
def test_ratios_are_nan_when_nothing_moves(host: bool) -> None:
    tracker = DirectionTracker(host)
    still = torch.tensor([[1.0, 0.0], [0.0, 4.0]])
    tracker.update(still)
    result = tracker.update(still.clone())
    assert result["direction/angle_mean"].item() == 0.0
    assert math.isnan(result["direction/update_ratio"].item())
    embeddings = torch.randn(8, 3)
    stats = gradient_statistics(embeddings, None, torch.zeros(8, 3), host=host)
    assert math.isnan(stats["grad/rotation_ratio"].item())


@BOTH_PATHS
def test_tiny_turns_are_resolved(host: bool) -> None:
    tracker = DirectionTracker(host)
    tracker.update(torch.tensor([[1.0, 0.0]]))
    angle = 1e-4  # radians: acos in float32 would report 0 or ~0.02°
    result = tracker.update(torch.tensor([[math.cos(angle), math.sin(angle)]]))
    assert math.isclose(result["direction/angle_mean"].item(), math.degrees(angle), rel_tol=1e-3)


@BOTH_PATHS
def test_batch_statistics_match_a_plain_reference_implementation(host: bool) -> None:
    """The packed, few-op computation gives the textbook values (torch.quantile, the
    full N × N cosine matrix, per-sample loops), NaN where there are no positives."""
    torch.manual_seed(1)
    embeddings = torch.randn(30, 6) * torch.linspace(0.5, 3.0, 30)[:, None]
    labels = torch.tensor([3, 0, 7] * 10)  # sparse label values: classes 0, 3 and 7
    grad = torch.randn(30, 6)
    packed = batch_statistics(embeddings, labels, grad, host)
    histogram = [float(packed[k]) for k in packed if k.startswith(hist.PREFIX)]
    assert sum(histogram) == pytest.approx(1.0)  # fractions of the batch, every norm once
    stats = {k: packed[k] for k in packed if not k.startswith(hist.PREFIX)}

    norms = embeddings.norm(dim=1)
    expected = {
        "norm/mean": norms.mean(), "norm/var": norms.var(correction=0),
        "norm/std": norms.std(correction=0), "norm/min": norms.min(), "norm/max": norms.max(),
        "norm/p05": torch.quantile(norms, 0.05), "norm/p50": torch.quantile(norms, 0.5),
        "norm/p95": torch.quantile(norms, 0.95),
    }  # fmt: skip
    expected["norm/cv"] = expected["norm/std"] / expected["norm/mean"]
    unit = F.normalize(embeddings, dim=1)
    cosines = unit @ unit.T
    same = labels[:, None] == labels[None, :]
    off_diagonal = ~torch.eye(30, dtype=torch.bool)
    expected["cos/pos"] = cosines[same & off_diagonal].mean()
    expected["cos/neg"] = cosines[~same].mean()
    expected["cos/gap"] = expected["cos/pos"] - expected["cos/neg"]
    grad_norms = grad.norm(dim=1)
    expected["grad/norm_mean"] = grad_norms.mean()
    expected["grad/norm_inv_corr"] = torch.corrcoef(torch.stack([grad_norms, 1 / norms]))[0, 1]
    expected["grad/radial_cos"] = (F.cosine_similarity(grad, embeddings, dim=1)).abs().mean()
    tangential = grad - (grad * unit).sum(dim=1, keepdim=True) * unit
    rotation = tangential.norm(dim=1) / norms
    order = norms.argsort()
    expected["grad/rotation_ratio"] = rotation[order[:15]].mean() / rotation[order[15:]].mean()

    assert set(stats) == set(expected)
    for name, value in expected.items():
        assert math.isclose(stats[name].item(), value.item(), rel_tol=1e-5, abs_tol=1e-6), name

    singletons = batch_statistics(embeddings[:3], labels[:3], None, host)  # no positive pairs
    assert math.isnan(singletons["cos/pos"].item()) and math.isnan(singletons["cos/gap"].item())
    assert not math.isnan(singletons["cos/neg"].item())


@BOTH_PATHS
@pytest.mark.parametrize("rows", [30, 600])  # below and above the serial-kernel size
def test_pair_cosines_on_small_and_large_batches_match_the_cosine_matrix(
    rows: int, host: bool
) -> None:
    """The per-class sums take a serial kernel for small CPU batches and index_add_ for
    large ones: both give the textbook pair means."""
    torch.manual_seed(2)
    embeddings = torch.randn(rows, 64)
    labels = torch.randint(0, 7, (rows,))
    stats = batch_statistics(embeddings, labels, None, host)
    unit = F.normalize(embeddings, dim=1)
    cosines = unit @ unit.T
    same = labels[:, None] == labels[None, :]
    positive = cosines[same & ~torch.eye(rows, dtype=torch.bool)].mean().item()
    negative = cosines[~same].mean().item()
    assert math.isclose(stats["cos/pos"].item(), positive, rel_tol=1e-4, abs_tol=1e-5)
    assert math.isclose(stats["cos/neg"].item(), negative, rel_tol=1e-4, abs_tol=1e-5)


def test_pair_sums_without_a_class_count_equal_the_per_class_sums() -> None:
    """The accelerator's N × N form of the pair sums (no class count read on the host)
    gives the CPU's per-class sums."""
    from sphere_engine.diagnostics.batch_statistics import _pair_sums, pair_sums_by_matrix

    generator = torch.Generator().manual_seed(1)
    directions = torch.nn.functional.normalize(torch.randn(40, 16, generator=generator), dim=1)
    labels = torch.randint(0, 7, (40,), generator=generator) * 3  # sparse class ids
    by_class = _pair_sums(directions, labels)
    torch.testing.assert_close(pair_sums_by_matrix(directions, labels), by_class)
