"""robustness_accuracy / robustness_recall on a small trained digits classifier."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from sphere_engine.metrics import retrieval_metrics
from sphere_engine.robustness import AttackSettings, robustness_accuracy, robustness_recall

EPSILONS = (0.0, 0.05, 0.1, 0.2, 0.3)
SETTINGS = AttackSettings(epsilons=EPSILONS, steps=10, batch_size=100)


def test_accuracy_curve(digits_model):
    model, head, x, y = digits_model
    model.train(), head.eval()  # the evaluation switches to eval mode and back
    result = robustness_accuracy(model, head, x, y, SETTINGS)
    assert model.training and not head.training
    with torch.no_grad():
        clean = float((head(model(x)).argmax(1) == y).float().mean())
    assert clean > 0.9  # a model worth attacking
    for attack in ("fgsm", "pgd"):
        curve = [result[f"robustness/{attack}/accuracy@eps={e:g}"] for e in EPSILONS]
        assert curve[0] == pytest.approx(clean)
        assert all(b <= a for a, b in itertools.pairwise(curve)), curve
        assert curve[-1] < 0.5 * clean
    fgsm_curve = np.array([result[f"robustness/fgsm/accuracy@eps={e:g}"] for e in EPSILONS])
    pgd_curve = np.array([result[f"robustness/pgd/accuracy@eps={e:g}"] for e in EPSILONS])
    assert pgd_curve[1:].mean() < fgsm_curve[1:].mean()  # PGD stronger on average
    again = robustness_accuracy(model, head, x, y, SETTINGS)
    assert again == result


def test_recall_curve_against_the_clean_gallery(digits_model):
    model, _, x, y = digits_model
    result = robustness_recall(model, x, y, AttackSettings(epsilons=(0.0, 0.1, 0.3), batch_size=64))
    with torch.no_grad():
        embeddings = model(x)
    clean = retrieval_metrics(embeddings, y, ks=(1,))["recall@1"]
    for attack in ("fgsm", "pgd"):
        curve = [result[f"robustness/{attack}/recall@1@eps={e:g}"] for e in (0.0, 0.1, 0.3)]
        assert curve[0] == pytest.approx(clean)
        assert curve[0] > curve[1] > curve[2]
    # a separate gallery: the first half's clean embeddings without class 0, queried by
    # the second half (its class-0 queries have no positive and are left out)
    half = len(y) // 2
    gallery = torch.arange(half)[y[:half] != 0]
    split = robustness_recall(
        model,
        x[half:],
        y[half:],
        AttackSettings(epsilons=(0.0,), attacks=("fgsm",)),
        gallery_embeddings=embeddings[gallery],
        gallery_labels=y[gallery],
    )
    expected = retrieval_metrics(
        embeddings[half:],
        y[half:],
        ks=(1,),
        reference=embeddings[gallery],
        reference_labels=y[gallery],
    )
    assert expected["retrieval/queries_skipped"] > 0
    assert split["robustness/fgsm/recall@1@eps=0"] == pytest.approx(expected["recall@1"])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"epsilons": ()}, "at least one"),
        ({"epsilons": (-1.0,)}, "epsilon must be"),
        ({"attacks": ("cw",)}, "attacks must be"),
        ({"batch_size": 0}, "batch_size"),
        ({"input_range": (0.0, 0.5)}, "outside input_range"),
    ],
)
def test_bad_options(digits_model, options, message):
    model, head, x, y = digits_model
    with pytest.raises(ValueError, match=message):
        robustness_accuracy(model, head, x, y, AttackSettings(**options))
    with pytest.raises(ValueError, match="one entry per input"):
        robustness_accuracy(model, head, x, y[:-1])


def _trainable(*modules):
    return [p.requires_grad for module in modules for p in module.parameters()]


def test_parameters_frozen_during_the_attack_and_restored(digits_model):
    """Autograd computes no weight gradient during the attacks (their cost, not only
    their accumulation); each parameter's own flag comes back, a frozen one stays so."""
    model, head, x, y = digits_model
    model[0].bias.requires_grad_(False)  # a user's frozen parameter stays frozen
    before = _trainable(model, head)
    seen = []
    hook = head.register_forward_hook(lambda *_: seen.append(_trainable(model, head)))
    try:
        robustness_accuracy(model, head, x, y, AttackSettings((0.1,), steps=2, batch_size=100))
        robustness_recall(model, x, y, AttackSettings((0.1,), ("pgd",), steps=2))
    finally:
        hook.remove()
        model[0].bias.requires_grad_(True)
    assert seen and not any(any(flags) for flags in seen)
    assert before[1] is False and sum(before) == len(before) - 1
    assert _trainable(model, head) == [True] * len(before)
    assert all(p.grad is None for module in (model, head) for p in module.parameters())


def test_parameters_and_mode_restored_after_an_error(digits_model):
    model, head, x, y = digits_model
    model.train(), head.eval()
    calls = []

    def fail_on_the_third_call(*_):
        calls.append(1)
        if len(calls) == 3:
            raise RuntimeError("boom")

    hook = head.register_forward_hook(fail_on_the_third_call)
    try:
        with pytest.raises(RuntimeError, match="boom"):
            robustness_accuracy(model, head, x, y, AttackSettings((0.1,), steps=5, batch_size=100))
    finally:
        hook.remove()
    assert all(_trainable(model, head)) and model.training and not head.training
