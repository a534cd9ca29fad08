"""The host half of the diagnostics: finishing raw values, tracked-sample embedding."""

from __future__ import annotations

import math
import warnings

import numpy as np
import torch

from sphere_engine.diagnostics import StepStatistics, batch_statistics
from sphere_engine.diagnostics.tracked_samples import tracked_embedder


def test_a_diverged_batch_gives_gaps_without_warnings() -> None:
    embeddings = torch.randn(8, 4)
    embeddings[2, 0] = float("inf")
    embeddings[5, 1] = float("nan")
    stats = StepStatistics()
    stats.add(batch_statistics(embeddings, torch.arange(8) % 2, torch.randn(8, 4)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "invalid value" must not escape
        values, _ = stats.to_host()
    assert math.isnan(values["norm/var"]) and math.isnan(values["grad/norm_inv_corr"])


def test_loss_terms_added_together_keep_their_names_and_values() -> None:
    stats = StepStatistics()
    loss = torch.tensor(2.0, requires_grad=True) * 1.5
    stats.add({"loss/total": loss, "loss/metric": torch.tensor(0.25)})
    stats.add({})
    values, norms = stats.to_host()
    assert values == {"loss/total": 3.0, "loss/metric": 0.25} and norms == []


def test_tracked_samples_of_a_batchnorm_model_are_embedded_in_eval_mode() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6))
    model.train()
    inputs = torch.randn(5, 4)
    running = model[1].running_mean.clone()
    embedded = tracked_embedder(model)(inputs)
    assert model.training  # back in train mode
    assert torch.equal(model[1].running_mean, running)  # BatchNorm learned nothing
    model.eval()
    assert torch.allclose(embedded, model(inputs))


def test_tracked_samples_of_a_mode_free_model_need_no_mode_switch() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3))
    model.train()
    switches = []
    model.register_forward_pre_hook(lambda module, args: switches.append(module.training))
    inputs = torch.randn(5, 4)
    embedded = tracked_embedder(model)(inputs)
    assert switches == [True] and not embedded.requires_grad
    assert torch.equal(embedded, model(inputs).detach())


def test_norm_cv_is_one_routine_with_nan_for_a_zero_mean() -> None:
    """The per-step diagnostics and the evaluation metrics gave 0 and NaN for all-zero
    norms; both now say the ratio is undefined."""
    from sphere_engine.diagnostics.numpy_finish import finish_norms
    from sphere_engine.metrics.norms import norm_statistics

    zeros = np.zeros((1, 5))
    (row,) = finish_norms(zeros, zeros)
    assert math.isnan(row[3])  # NORM_NAMES order: mean, var, std, cv, ...
    assert math.isnan(norm_statistics(np.zeros((5, 3)))["norm/cv"])
    spread = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    (row,) = finish_norms(spread, spread)
    expected = norm_statistics(np.diag(spread[0]))["norm/cv"]
    assert row[3] == expected == np.std(spread) / np.mean(spread)
