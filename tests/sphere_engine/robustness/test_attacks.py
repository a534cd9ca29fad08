"""FGSM and PGD: ε = 0 is the identity, perturbations stay in the ball and the range."""

from __future__ import annotations

import pytest
import torch

from sphere_engine.robustness import classification_loss, embedding_shift_loss, fgsm, pgd


@pytest.mark.parametrize("attack", ["fgsm", "pgd"])
def test_zero_epsilon_returns_the_clean_inputs(digits_model, attack):
    model, head, x, y = digits_model
    loss_of = classification_loss(model, head, y)
    attacked = fgsm(loss_of, x, 0.0) if attack == "fgsm" else pgd(loss_of, x, 0.0)
    assert torch.equal(attacked, x)


@pytest.mark.parametrize("epsilon", [0.05, 0.2])
def test_perturbations_stay_in_the_ball_and_the_range(digits_model, epsilon):
    model, head, x, y = digits_model
    loss_of = classification_loss(model, head, y)
    generator = torch.Generator().manual_seed(1)
    for attacked in (
        fgsm(loss_of, x, epsilon),
        pgd(loss_of, x, epsilon, steps=5, generator=generator),
        pgd(loss_of, x, epsilon, steps=3, step_size=1.0, random_start=True),  # overshoots
    ):
        assert (attacked - x).abs().max() <= epsilon + 1e-6
        assert attacked.min() >= 0.0 and attacked.max() <= 1.0
    dim = x / 2  # darker images, in a narrower valid range
    attacked = fgsm(embedding_shift_loss(model, model(dim)), dim, epsilon, input_range=(0.0, 0.5))
    assert (attacked - dim).abs().max() <= epsilon + 1e-6
    assert attacked.min() >= 0.0 and attacked.max() <= 0.5 and attacked.max() > dim.max() - 1e-6
    # digits has many pixels at 0 and 1: a real attack moves the others by exactly ε
    moved = (fgsm(loss_of, x, epsilon) - x).abs()
    assert (moved - epsilon).abs().lt(1e-6).float().mean() > 0.3


def test_attacks_raise_the_loss_and_leave_parameters_untouched(digits_model):
    model, head, x, y = digits_model
    loss_of = classification_loss(model, head, y)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():  # the attack still gets its input gradient
        clean_loss = loss_of(x).mean()
        attacked = pgd(loss_of, x, 0.1, generator=torch.Generator().manual_seed(0))
        assert loss_of(attacked).mean() > clean_loss
    assert all(p.grad is None for p in model.parameters())
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_pgd_random_start_is_seeded(digits_model):
    model, head, x, y = digits_model
    loss_of = classification_loss(model, head, y)
    runs = [
        pgd(loss_of, x, 0.1, steps=2, generator=torch.Generator().manual_seed(s)) for s in (3, 3, 4)
    ]
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f, x: fgsm(f, x, -0.1), "epsilon must be"),
        (lambda f, x: fgsm(f, x, 0.1, input_range=(1.0, 0.0)), "input_range"),
        (lambda f, x: pgd(f, x, 0.1, steps=0), "steps must be"),
        (lambda f, x: pgd(f, x, 0.1, step_size=0.0), "step_size must be"),
    ],
)
def test_bad_options(digits_model, call, message):
    model, head, x, y = digits_model
    with pytest.raises(ValueError, match=message):
        call(classification_loss(model, head, y), x)
