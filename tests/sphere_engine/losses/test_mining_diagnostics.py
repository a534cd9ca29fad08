"""Mining diagnostics of the pair losses, on hand-made 2-D batches built from angles."""

from __future__ import annotations

import math

import pytest
import torch

from sphere_engine.losses import LOSSES


def mining_statistics(loss: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The ``mining/*`` values of the loss's last batch, as the training step reads them."""
    return {} if loss.last_mining is None else loss.last_mining.statistics()


def at_angles(*degrees: float) -> torch.Tensor:
    radians = torch.tensor(degrees, dtype=torch.float64) * math.pi / 180
    return torch.stack([torch.cos(radians), torch.sin(radians)], dim=1)


LABELS = torch.tensor([0, 0, 1, 1])


def test_triplet_counts_the_triplets_inside_the_margin() -> None:
    # class 0 at 0° and 10°, class 1 at 90° and 100°: every negative is far (cos ≤ 0.17)
    loss = LOSSES.create("triplet", margin=0.1)
    loss(at_angles(0, 10, 90, 100), LABELS)
    stats = mining_statistics(loss)
    assert float(stats["mining/active_fraction"]) == 0.0
    # hardest negatives: 0°→90° (cos 0), 10°→90° and 90°→10° (cos 80°), 100°→10° (cos 0)
    expected = math.cos(math.radians(80)) / 2
    assert float(stats["mining/hardest_neg_sim"]) == pytest.approx(expected)
    # a negative at 5° from the anchor: the triplets (0°, 10°, 5°) … become active
    loss(at_angles(0, 10, 5, 100), LABELS)
    assert 0.0 < float(mining_statistics(loss)["mining/active_fraction"]) <= 1.0


def test_semihard_on_separated_classes_finds_nothing_to_learn_from() -> None:
    loss = LOSSES.create("semihard_triplet", margin=0.1)
    assert float(loss(at_angles(0, 10, 90, 100), LABELS)) == 0.0
    assert float(mining_statistics(loss)["mining/active_fraction"]) == 0.0
    # a negative between the positives: a semi-hard-or-harder triplet, learnt from
    assert float(loss(at_angles(0, 30, 20, 100), LABELS)) > 0.0
    assert float(mining_statistics(loss)["mining/active_fraction"]) > 0.0


@pytest.mark.parametrize("name", ["contrastive", "multi_similarity", "batch_hard_triplet"])
def test_every_mining_loss_reports_a_fraction_in_the_unit_interval(name: str) -> None:
    loss = LOSSES.create(name)
    loss(at_angles(0, 40, 20, 100), LABELS)
    fraction = float(mining_statistics(loss)["mining/active_fraction"])
    assert 0.0 <= fraction <= 1.0


def test_a_loss_without_mining_reports_nothing() -> None:
    loss = LOSSES.create("ntxent")
    loss(at_angles(0, 40, 20, 100), LABELS)
    assert mining_statistics(loss) == {}


def test_the_cosine_histograms_count_each_kind_of_pair_in_its_bin() -> None:
    # positives 0°-10° (cos 0.985, two ordered pairs) and 90°-180° (cos 0, two);
    # negatives: 0°-90° (0), 0°-180° (-1), 10°-90° (cos 80° = 0.174), 10°-180° (-0.985),
    # each twice
    loss = LOSSES.create("triplet", margin=0.1)
    loss(at_angles(0, 10, 90, 180), LABELS)
    from sphere_engine.diagnostics.step_transfer import StepStatistics

    stats = StepStatistics()
    stats.add(loss.last_mining.histograms())
    values, _ = stats.to_host()
    # bins of 0.05 from -1: cos 0.985 → bin 39, 0 → bin 20, 0.174 → 23, -0.985 and -1 → 0
    assert values == pytest.approx(
        {
            "mining/pos_sim_hist/39": 0.5,
            "mining/pos_sim_hist/20": 0.5,
            "mining/neg_sim_hist/20": 0.25,
            "mining/neg_sim_hist/23": 0.25,
            "mining/neg_sim_hist/00": 0.5,
        }
    )
    ntxent = LOSSES.create("ntxent")
    ntxent(at_angles(0, 10, 90, 180), LABELS)
    assert ntxent.last_mining is None


def test_sync_free_similarity_bins_equal_histc() -> None:
    """The accelerator's bin counts (no boolean selection, no sync) are histc's, edges,
    the ends and NaN included."""
    from sphere_engine.catalogue import similarity_histogram as hist
    from sphere_engine.losses.mining_record import histc_of_masked, masked_bin_counts

    generator = torch.Generator().manual_seed(0)
    values = torch.rand(64, 64, generator=generator) * 2 - 1
    edges = torch.linspace(hist.LOW, hist.HIGH, hist.BINS + 1)
    values.view(-1)[: len(edges)] = edges
    values[5, 5] = float("nan")
    values = values.clamp(hist.LOW, hist.HIGH)
    mask = torch.rand(64, 64, generator=generator) < 0.4
    mask[0, : len(edges)] = True
    mask[5, 5] = True
    assert torch.equal(masked_bin_counts(values, mask), histc_of_masked(values, mask))
