"""An in-memory dataset whose batches are taken by indexing tensors directly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

from sphere_engine.data.splitting import remap_labels


class TensorData(Dataset[tuple[Tensor, Tensor]]):
    """Samples ``x`` (N, *input_shape) with labels (N,), kept in memory.

    ``x`` may be float32 (used as is) or uint8 images (N, C, H, W) stored compactly and
    scaled to [0, 1] then normalised with the per-channel ``mean``/``std`` batch by batch
    in ``get_batch``, instead of per-sample PIL transforms. Labels are remapped to
    0..C-1; ``classes`` keeps the original class ids (C,).
    """

    def __init__(
        self,
        x: Tensor,
        labels: np.ndarray | Sequence[int],
        mean: Sequence[float] | None = None,
        std: Sequence[float] | None = None,
    ) -> None:
        if len(x) != len(labels):
            raise ValueError(f"x has {len(x)} samples but labels has {len(labels)}")
        if x.dtype not in (torch.uint8, torch.float32):
            raise ValueError(f"x: dtype {x.dtype} is not allowed; use uint8 or float32")
        self.x = x
        self.labels, self.classes = remap_labels(np.asarray(labels))
        self.y = torch.as_tensor(self.labels, device=x.device)
        self.mean = None if mean is None else self._channel_tensor(mean)
        self.std = None if std is None else self._channel_tensor(std)

    def _channel_tensor(self, values: Sequence[float]) -> Tensor:
        """(C,) statistics shaped to broadcast over a batch (N, C, ...)."""
        shape = (1, len(values)) + (1,) * (self.x.dim() - 2)
        return torch.tensor(values, dtype=torch.float32, device=self.x.device).reshape(shape)

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        x, y = self.get_batch(torch.tensor([index]))
        return x[0], y[0]

    def get_batch(self, indices: Tensor) -> tuple[Tensor, Tensor]:
        """Samples at ``indices`` (B,): float32 inputs (B, *input_shape), labels (B,)."""
        indices = indices.to(self.x.device)
        x = self.x[indices]
        if x.dtype == torch.uint8:
            x = x.float().div_(255.0)
        if self.mean is not None:
            x = x - self.mean
        if self.std is not None:
            x = x / self.std
        return x, self.y[indices]

    def subset(self, rows: np.ndarray) -> TensorData:
        """The samples at ``rows`` (sorted int indices) as a dataset of their own, labels
        remapped over its classes (``classes`` keeps the original ids)."""
        index = torch.as_tensor(rows, dtype=torch.long, device=self.x.device)
        part = TensorData.__new__(TensorData)
        part.__dict__.update(self.__dict__)
        part.x = self.x[index]
        part.labels, part.classes = remap_labels(self.classes[self.labels[rows]])
        part.y = torch.as_tensor(part.labels, device=self.x.device)
        return part

    def to(self, device: torch.device | str) -> TensorData:
        """A copy with the data on ``device`` (batches are then indexed there)."""
        moved = TensorData.__new__(TensorData)
        moved.__dict__.update(self.__dict__)
        moved.x = self.x.to(device)
        moved.y = self.y.to(device)
        moved.mean = None if self.mean is None else self.mean.to(device)
        moved.std = None if self.std is None else self.std.to(device)
        return moved
