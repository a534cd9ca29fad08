"""A real transformers Trainer (tiny BERT built from a config, nothing downloaded)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

from db import queries
from db.store import RunStore

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing may be downloaded
# the integration first: it makes torchvision importable before transformers needs it
huggingface = pytest.importorskip("spherescope.integrations.huggingface")
transformers = pytest.importorskip("transformers")  # in the test extra: present
SphereScopeCallback = huggingface.SphereScopeCallback


class TokenClasses(torch.utils.data.Dataset):
    """48 sequences of 6 tokens; the class (0..3) decides which tokens appear."""

    def __init__(self) -> None:
        generator = torch.Generator().manual_seed(0)
        self.labels = torch.arange(48) % 4
        self.ids = self.labels[:, None] * 5 + torch.randint(1, 5, (48, 6), generator=generator)

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        return {"input_ids": self.ids[index], "labels": self.labels[index]}


def test_transformers_trainer_logs_steps_gradients_and_evaluation(
    store: RunStore, tmp_path: Path
) -> None:
    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=32, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=32, max_position_embeddings=16, num_labels=4,
    )  # fmt: skip
    model = transformers.BertForSequenceClassification(config)
    arguments = transformers.TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=6,
        per_device_train_batch_size=12,
        per_device_eval_batch_size=16,
        eval_strategy="steps",
        eval_steps=3,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        logging_strategy="no",
        disable_tqdm=True,
    )
    callback = SphereScopeCallback(module="bert.pooler", name="hf", config={"model": "tiny-bert"})
    data = TokenClasses()
    trainer = transformers.Trainer(
        model=model, args=arguments, train_dataset=data, eval_dataset=data, callbacks=[callback]
    )
    trainer.train()
    run_id = callback.run.id
    record = queries.get_run(store, run_id)
    assert (record.kind, record.status, record.config) == (
        "external", "finished", {"model": "tiny-bert"},
    )  # fmt: skip
    series = queries.metric_series(store, run_id, ["norm/mean", "grad/norm_inv_corr", "cos/pos"])
    for name in ("norm/mean", "grad/norm_inv_corr", "cos/pos"):
        assert series[series["name"] == name]["step"].tolist() == [1, 2, 3, 4, 5, 6], name
    grad_mean = queries.metric_series(store, run_id, ["grad/norm_mean"])["value"]
    assert (grad_mean > 0).all()
    evals = queries.eval_series(store, run_id, ["recall@1", "nmi"])
    assert sorted(set(evals["step"])) == [3, 6]
    assert len(queries.snapshot(store, run_id, 6)) == 48
