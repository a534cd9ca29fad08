"""Run from test_distributed_frameworks.py: ``python lightning_ddp_job.py STRATEGY``.

Two CPU processes under Lightning's ``STRATEGY``; rank r scales its embeddings by
1 + 2r (unit-norm inputs, an identity layer that does not learn), so the global
batch has norm mean 2 and variance 1 while each rank alone has variance 0.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

from sphere_engine import tv_compat
from spherescope.integrations.lightning import SphereScopeCallback

tv_compat.define_missing_ops()
import lightning  # noqa: E402

WIDTH = 4


def data(size: int, seed: int) -> TensorDataset:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.nn.functional.normalize(torch.randn(size, WIDTH, generator=generator))
    return TensorDataset(inputs, torch.arange(size) % 3)


class Scaled(lightning.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Linear(WIDTH, WIDTH, bias=False)
        with torch.no_grad():
            self.net.weight.copy_(torch.eye(WIDTH))

    def training_step(self, batch: list, batch_idx: int) -> dict:
        inputs, labels = batch
        embeddings = self.net(inputs) * (1 + 2 * self.global_rank)
        loss = embeddings.pow(2).sum(dim=1).mean()
        return {"loss": loss, "embeddings": embeddings, "labels": labels}

    def validation_step(self, batch: list, batch_idx: int) -> dict:
        inputs, labels = batch
        return {"embeddings": self.net(inputs), "labels": labels}

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.0)


def main(strategy: str) -> None:
    trainer = lightning.Trainer(
        accelerator="cpu",
        devices=2,
        strategy=strategy,
        max_epochs=1,
        callbacks=[SphereScopeCallback(name=f"lightning-{strategy}")],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    train = DataLoader(data(16, 0), batch_size=4)
    validation = DataLoader(data(7, 1), batch_size=2)
    trainer.fit(Scaled(), train, validation)


if __name__ == "__main__":
    main(sys.argv[1])
