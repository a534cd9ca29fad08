"""A real Lightning Trainer with SphereScopeCallback writing to a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from db import queries
from db.store import RunStore
from spherescope.integrations.lightning import SphereScopeCallback
from tests.spherescope.conftest import toy_problem

lightning = pytest.importorskip("lightning")  # an extra, but in the test extra: present


class Embedder(lightning.LightningModule):
    def __init__(self, return_embeddings: bool) -> None:
        super().__init__()
        self.net, _, _ = toy_problem()
        self.return_embeddings = return_embeddings

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        inputs, _ = batch
        embeddings = self.net(inputs)
        loss = -torch.nn.functional.normalize(embeddings, dim=1)[:, 0].mean()
        return {"loss": loss, "embeddings": embeddings} if self.return_embeddings else loss

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        inputs, labels = batch
        return {"embeddings": self.net(inputs), "labels": labels}

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _fit(callback: SphereScopeCallback, module: Embedder, tmp_path: Path) -> None:
    _, inputs, labels = toy_problem()
    loader = DataLoader(TensorDataset(inputs, labels), batch_size=20)
    trainer = lightning.Trainer(
        max_epochs=2,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
        accelerator="cpu",
        num_sanity_val_steps=1,
    )
    trainer.fit(module, loader, loader)


@pytest.mark.parametrize("source", ["output key", "module hook"])
def test_lightning_trainer_logs_steps_gradients_and_validation(
    source: str, store: RunStore, tmp_path: Path
) -> None:
    if source == "output key":
        callback = SphereScopeCallback(name="lightning")
        module = Embedder(return_embeddings=True)
    else:
        callback = SphereScopeCallback(name="lightning", module="net")
        module = Embedder(return_embeddings=False)
    _fit(callback, module, tmp_path)
    run_id = callback.run.id
    record = queries.get_run(store, run_id)
    assert (record.kind, record.status) == ("external", "finished")
    series = queries.metric_series(store, run_id, ["norm/mean", "grad/radial_cos", "cos/gap"])
    for name in ("norm/mean", "grad/radial_cos", "cos/gap"):
        steps = series[series["name"] == name]["step"].tolist()
        assert steps == [1, 2, 3, 4, 5, 6], name  # 3 batches × 2 epochs
    radial = series[series["name"] == "grad/radial_cos"]["value"]
    assert (radial.abs() < 1e-4).all()  # a loss on normalised embeddings
    evals = queries.eval_series(store, run_id, ["recall@1"])
    assert evals["step"].tolist() == [3, 6]  # one evaluation per validation epoch
    assert queries.snapshot_steps(store, run_id) == [3, 6]
    assert len(queries.snapshot(store, run_id, 6)) == 60


def test_an_exception_in_training_ends_the_run_failed(store: RunStore, tmp_path: Path) -> None:
    class Broken(Embedder):
        def training_step(self, batch: tuple, batch_idx: int) -> dict:
            if self.global_step == 1:
                raise RuntimeError("boom in step 2")
            return super().training_step(batch, batch_idx)

    callback = SphereScopeCallback(name="broken")
    with pytest.raises(RuntimeError, match="boom"):
        _fit(callback, Broken(return_embeddings=True), tmp_path)
    record = queries.get_run(store, callback.run.id)
    assert record.status == "failed" and "boom in step 2" in record.status_message
