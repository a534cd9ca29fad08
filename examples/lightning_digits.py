"""SphereScope with PyTorch Lightning: an MLP on scikit-learn's digits (offline).

pip install 'spherescope[lightning]'
.venv/bin/python examples/lightning_digits.py [--epochs 3] [--home DIR]
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch.utils.data import DataLoader, TensorDataset

from spherescope.integrations.lightning import SphereScopeCallback

# isort: split
# lightning after the callback module: on a CPU-only torch it makes torchvision importable
import lightning


class DigitsEmbedder(lightning.LightningModule):
    def __init__(self, dim: int = 32, scale: float = 16.0) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, dim)
        )
        self.weights = torch.nn.Parameter(torch.randn(10, dim))
        self.scale = scale

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        inputs, labels = batch
        embeddings = self.net(inputs)
        logits = self.scale * F.normalize(embeddings, dim=1) @ F.normalize(self.weights, dim=1).T
        # "embeddings" is where SphereScopeCallback looks (key="embeddings" by default)
        return {"loss": F.cross_entropy(logits, labels), "embeddings": embeddings}

    def validation_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> dict:
        inputs, labels = batch
        return {"embeddings": self.net(inputs), "labels": labels}

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument(
        "--batches-per-epoch", type=int, default=None, help="shorter epochs (default: all)"
    )
    parser.add_argument("--home", default=None, help="run store (default: $SPHERESCOPE_HOME)")
    args = parser.parse_args()

    torch.manual_seed(0)
    digits = load_digits()
    inputs = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    labels = torch.tensor(digits.target)
    train = DataLoader(TensorDataset(inputs[:1400], labels[:1400]), batch_size=40, shuffle=True)
    test = DataLoader(TensorDataset(inputs[1400:], labels[1400:]), batch_size=200)
    callback = SphereScopeCallback(name="digits-lightning", config=vars(args), home=args.home)
    trainer = lightning.Trainer(
        max_epochs=args.epochs,
        limit_train_batches=args.batches_per_epoch,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        accelerator="cpu",
    )
    trainer.fit(DigitsEmbedder(), train, test)
    print(f"run {callback.run.id} written to {callback.run.store.home}")


if __name__ == "__main__":
    main()
