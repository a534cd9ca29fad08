import math

import pytest
import torch
from torch import nn

from sphere_engine.heads import HEADS, POLYTOPE_KINDS, polytope_angle, polytope_dim


def at(degrees: float, norm: float = 1.0) -> list[float]:
    return [norm * math.cos(math.radians(degrees)), norm * math.sin(math.radians(degrees))]


@pytest.mark.parametrize("kind", POLYTOPE_KINDS)
def test_auto_margin_is_the_polytope_angle(kind):
    head = HEADS.create(kind, 16, 10, margin="auto")
    assert head.margin_radians == pytest.approx(polytope_angle(kind, polytope_dim(kind, 10)))
    assert head.margin_radians == pytest.approx(head.vertex_angle)
    assert HEADS.create(kind, 16, 10).margin_radians == 0.0


def test_simplex_auto_margin_for_ten_classes_is_96_38_degrees():
    head = HEADS.create("simplex", 9, 10, margin="auto")
    assert math.degrees(head.margin_radians) == pytest.approx(96.38, abs=0.005)


@pytest.mark.parametrize("kind", POLYTOPE_KINDS)
def test_fixed_head_has_no_parameters_and_does_not_move(kind):
    torch.manual_seed(0)
    head = HEADS.create(kind, 8, 6, margin="auto")
    assert head.is_fixed
    assert list(head.parameters()) == []
    assert "vertices" in head.state_dict()
    before = head.vertices.clone()
    model = nn.Linear(5, 8)
    model_before = model.weight.detach().clone()
    params = list(model.parameters()) + list(head.parameters())
    optimizer = torch.optim.Adam(params, lr=0.1, weight_decay=0.5)
    x, y = torch.randn(32, 5), torch.randint(0, 6, (32,))
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.cross_entropy(head(model(x), y), y).backward()
        optimizer.step()
    assert torch.equal(head.vertices, before)
    assert not torch.equal(model.weight, model_before)


def test_vertices_are_padded_to_the_embedding_dim():
    head = HEADS.create("cube", 5, 4)
    assert head.vertices.shape == (4, 5)
    assert head.polytope_dim == 2
    assert torch.count_nonzero(head.vertices[:, 2:]) == 0
    torch.testing.assert_close(head.vertices.norm(dim=1), torch.ones(4))


def test_logits_by_hand_on_an_orthoplex():
    # Vertices +e1, −e1, +e2, −e2; feature at 30° with norm 5 (normalised away).
    head = HEADS.create("orthoplex", 2, 4, scale=30.0, margin=0.2).double()
    x = torch.tensor([at(30, 5.0)], dtype=torch.float64)
    c, s = math.cos(math.radians(30)), math.sin(math.radians(30))
    plain = [30 * c, -30 * c, 30 * s, -30 * s]
    assert head(x)[0].tolist() == pytest.approx(plain)
    with_margin = head(x, torch.tensor([0]))[0].tolist()
    assert with_margin == pytest.approx([30 * math.cos(math.radians(30) + 0.2), *plain[1:]])


def test_auto_margin_fallback_by_hand():
    # Target −e1 is at θ = 150°; m = φ = π/2 gives θ + m > π: 30·(cos θ − m·sin m).
    head = HEADS.create("orthoplex", 2, 4, margin="auto").double()
    x = torch.tensor([at(30)], dtype=torch.float64)
    out = head(x, torch.tensor([1]))[0, 1].item()
    assert out == pytest.approx(30 * (math.cos(math.radians(150)) - math.pi / 2))


def test_embedding_dim_too_small_names_the_minimum():
    with pytest.raises(ValueError, match="embedding_dim >= 9"):
        HEADS.create("simplex", 3, 10)
    with pytest.raises(ValueError, match="embedding_dim >= 4"):
        HEADS.create("cube", 3, 10)


@pytest.mark.parametrize("margin", [-0.1, "big", 4.0])
def test_bad_margin(margin):
    with pytest.raises(ValueError, match="margin"):
        HEADS.create("simplex", 4, 5, margin=margin)


def test_bad_scale():
    with pytest.raises(ValueError, match="scale"):
        HEADS.create("hadamard", 4, 4, scale=0.0)
