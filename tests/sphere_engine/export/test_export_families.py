"""Export + parity check of every backbone family at small image sizes, and a broken
export (its normalisation dropped) failing its check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from sphere_engine.config import RunConfig
from sphere_engine.data import create_dataset
from sphere_engine.export import load_exported, preprocess
from sphere_engine.export import run_model as run_model_module
from sphere_engine.export.check import COSINE_TOLERANCE
from sphere_engine.export.run_model import export_and_check
from sphere_engine.models.build import build_backbone

METRICS = ["recall@1", "map@r", "r_precision", "nmi", "angle/inter_mean"]
IMAGE_FAMILIES = ["lenetpp", "resnet18", "resnet50", "bninception", "timm/resnet10t"]


@pytest.fixture(scope="module")
def image_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("images")
    for label in range(4):
        for k in range(4):
            path = root / f"class_{label}" / f"{k}.png"
            path.parent.mkdir(parents=True, exist_ok=True)
            pixels = np.random.default_rng(label * 10 + k).integers(0, 255, (20, 24, 3))
            Image.fromarray(pixels.astype(np.uint8)).save(path)
    return root


def family_config(name: str, image_root: Path) -> RunConfig:
    data = {"name": "digits", "batch_size": 8, "samples_per_class": 2}
    if name != "mlp":
        data = {"name": "image_folder", "root": str(image_root), "image_size": 32}
    data |= {"num_workers": 0}
    return RunConfig.from_dict(
        {"data": data, "model": {"name": name, "embedding_dim": 8}, "training": {"seed": 3}}
    )


def random_state(config: RunConfig) -> dict:
    options = {"image_size": config.data.image_size} if config.data.image_size else {}
    splits = create_dataset(config.data.name, root=config.data.root, seed=3, **options)
    model, _ = build_backbone(config.model, splits.input_shape)
    return {"model": model.state_dict()}


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("mlp", "onnx"), ("mlp", "torchscript"), ("resnet18", "onnx")]
    + [(name, "torchscript") for name in IMAGE_FAMILIES],
)
def test_every_family_exports_and_passes_its_check(name, fmt, image_root, tmp_path):
    config = family_config(name, image_root)
    out = tmp_path / f"model.{fmt}"
    check = export_and_check(
        config, random_state(config), out, fmt, {"run_id": "r1"}, METRICS, normalize=True
    )
    assert check.passed, check.summary()
    assert check.max_one_minus_cos <= COSINE_TOLERANCE
    # angles are not points: only the fraction metrics are checked
    assert set(check.metric_gaps) == {"recall@1", "map@r", "r_precision", "nmi"}
    exported = load_exported(out)
    assert exported.format == fmt and exported.metadata["run_id"] == "r1"
    assert exported.metadata["normalized"] is True
    shape = exported.metadata["preprocessing"]["input_shape"]
    for batch in (1, 5):  # the batch axis is dynamic
        pixels = np.random.default_rng(batch).random((batch, *shape), dtype=np.float32)
        embeddings = exported.embed(preprocess(pixels, exported.metadata["preprocessing"]))
        assert embeddings.shape == (batch, 8)
        np.testing.assert_allclose(np.linalg.norm(embeddings, axis=1), 1.0, rtol=1e-5)


def test_image_metadata_declares_the_preprocessing(image_root, tmp_path):
    config = family_config("resnet18", image_root)
    out = tmp_path / "model.pt"
    export_and_check(config, random_state(config), out, "torchscript", {}, METRICS)
    preprocessing = load_exported(out).metadata["preprocessing"]
    assert preprocessing["input_shape"] == [3, 32, 32]
    assert preprocessing["image_size"] == [32, 32]
    assert preprocessing["pixel_range"] == [0.0, 1.0]
    np.testing.assert_allclose(np.ravel(preprocessing["mean"]), [0.485, 0.456, 0.406])
    np.testing.assert_allclose(np.ravel(preprocessing["std"]), [0.229, 0.224, 0.225])


def test_an_export_without_its_normalisation_fails_its_check(image_root, tmp_path, monkeypatch):
    real = run_model_module.preprocessing_of

    def dropped(input_shape, pixel_range):
        values = real(input_shape, pixel_range)
        return values | {"mean": 0.0, "std": 1.0}  # the mean/std normalisation left out

    monkeypatch.setattr(run_model_module, "preprocessing_of", dropped)
    config = family_config("resnet18", image_root)
    check = export_and_check(
        config, random_state(config), tmp_path / "m.pt", "torchscript", {}, METRICS
    )
    assert not check.passed
    assert check.max_one_minus_cos > COSINE_TOLERANCE


def test_fp16_records_a_measured_drop(tmp_path, image_root):
    config = family_config("mlp", image_root)
    check = export_and_check(
        config, random_state(config), tmp_path / "m.pt", "torchscript", {}, METRICS, fp16=True
    )
    assert check.fp16 and check.passed  # a drop is measured, not judged
    assert 0 < check.max_one_minus_cos < 1e-2  # fp16 rounding moves the embeddings a little
    assert load_exported(tmp_path / "m.pt").metadata["weights"].startswith("fp16")
