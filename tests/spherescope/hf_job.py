"""Run by torchrun (or accelerate launch) from test_distributed_frameworks.py: a Hugging
Face Trainer on two CPU processes with SphereScopeCallback. ``python hf_job.py OUT``.

Rank r scales its training embeddings by 1 + 2r (unit-norm inputs, an identity
encoder that does not learn), so the global batch has norm mean 2 and variance 1.
"""

import sys

import torch
import torch.distributed as dist

from sphere_engine import tv_compat
from spherescope.integrations.huggingface import SphereScopeCallback

tv_compat.define_missing_ops()
from transformers import Trainer, TrainingArguments  # noqa: E402

WIDTH = 4


def data(size: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    inputs = torch.nn.functional.normalize(torch.randn(size, WIDTH, generator=generator))
    return inputs, torch.arange(size) % 3


class Rows(torch.utils.data.Dataset):
    def __init__(self, size: int, seed: int) -> None:
        self.inputs, self.labels = data(size, seed)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict:
        return {"inputs": self.inputs[index], "labels": self.labels[index]}


class RankScaled(torch.nn.Module):
    """An identity layer; in training it scales rank r's embeddings by 1 + 2r."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(WIDTH, WIDTH, bias=False)
        with torch.no_grad():
            self.linear.weight.copy_(torch.eye(WIDTH))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        scale = 1 + 2 * dist.get_rank() if self.training else 1
        return self.linear(inputs) * scale


class Scaled(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = RankScaled()

    def forward(self, inputs: torch.Tensor, labels: torch.Tensor) -> dict:
        embeddings = self.encoder(inputs)
        return {"loss": embeddings.pow(2).sum(dim=1).mean(), "logits": embeddings}


if __name__ == "__main__":
    args = TrainingArguments(
        output_dir=sys.argv[1],
        per_device_train_batch_size=4,
        per_device_eval_batch_size=2,
        max_steps=2,
        eval_strategy="steps",
        eval_steps=2,
        learning_rate=0.0,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
        ddp_backend="gloo",
    )
    callback = SphereScopeCallback(module="encoder", pooling="first", name="hf-ddp")
    trainer = Trainer(
        Scaled(), args, train_dataset=Rows(16, 0), eval_dataset=Rows(7, 1), callbacks=[callback]
    )
    trainer.train()
