import pytest
import torch

from sphere_engine.regularizers import REGULARIZERS


def test_lists_the_norm_family():
    assert REGULARIZERS.names() == ["center", "isotropic", "l2", "sec"]


def test_unknown_name_lists_known_ones():
    with pytest.raises(ValueError, match="unknown regularizer 'none'; known: center, isotropic"):
        REGULARIZERS.create("none", 4, 3)


def test_unknown_option_raises():
    with pytest.raises(
        ValueError, match=r"regularizer\.options\.rho: unknown option.*allowed: momentum"
    ):
        REGULARIZERS.create("sec", 4, 3, rho=0.5)


@pytest.mark.parametrize("name", ["center", "isotropic", "l2", "sec"])
def test_each_reports_its_registry_name_and_returns_a_scalar(name):
    regularizer = REGULARIZERS.create(name, 4, 3)
    assert regularizer.registered_name == name
    value = regularizer(torch.randn(6, 4), torch.tensor([0, 1, 2, 0, 1, 2]))
    assert value.dim() == 0 and torch.isfinite(value)
    for key, stat in regularizer.diagnostics().items():
        assert key.startswith(f"{name}/")
        assert stat.dim() == 0 and not stat.requires_grad
    assert "embedding_dim" not in REGULARIZERS.params(name)
    for option, param in REGULARIZERS.params(name).items():
        assert param.help, f"{name}.{option} has no help text"


@pytest.mark.parametrize(("field", "args"), [("embedding_dim", (0, 3)), ("num_classes", (4, -1))])
def test_rejects_bad_fixed_args(field, args):
    with pytest.raises(ValueError, match=field):
        REGULARIZERS.create("l2", *args)
