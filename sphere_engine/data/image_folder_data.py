"""A dataset of image files decoded on access (for folders too large to hold in memory)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import torch
from torch import Tensor
from torch.utils.data import Dataset

from sphere_engine.data.splitting import remap_labels
from sphere_engine.tv_compat import torchvision

# A submodule torchvision does not import itself; torchvision is loaded by now.
v2 = importlib.import_module("torchvision.transforms.v2")

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


class ImageFolderData(Dataset[tuple[Tensor, Tensor]]):
    """Image files with class labels; each item is decoded with PIL (as RGB), turned into
    uint8 pixels (3, S, S) by ``transform`` (default: resized to ``image_size`` ×
    ``image_size``) and normalised: a float tensor (3, S, S) and its label.

    The two halves are separate so that a DataLoader moves uint8 pixels (``pixels``: a
    quarter of float32's bytes to collate, share between processes, pin and copy; the
    float conversion was most of a worker's time per image) and each batch is
    normalised on its device (``normalise``); ``iter_batches`` does that.

    Labels are remapped to 0..C-1; ``classes`` keeps the original class ids (C,). There
    is no ``get_batch``: batches come through a DataLoader (workers decode in parallel).
    """

    def __init__(
        self,
        paths: Sequence[Path],
        labels: np.ndarray | Sequence[int],
        image_size: int,
        mean: Sequence[float] = IMAGENET_MEAN,
        std: Sequence[float] = IMAGENET_STD,
        transform: Callable | None = None,
        class_names: Sequence[str] | None = None,
    ) -> None:
        if len(paths) != len(labels):
            raise ValueError(f"paths has {len(paths)} entries but labels has {len(labels)}")
        self.paths = list(paths)
        self.labels, self.classes = remap_labels(np.asarray(labels))
        #: The name of each remapped class (None: the dataset has no names).
        self.class_names = list(class_names) if class_names is not None else None
        self.transform = transform or v2.Compose(
            [v2.ToImage(), v2.Resize((image_size, image_size), antialias=True)]
        )
        # inputs = pixels · scale + shift = (pixels / 255 − mean) / std, per channel
        std_t = torch.tensor(std, dtype=torch.float32).reshape(-1, 1, 1)
        self._scale = 1.0 / (255.0 * std_t)
        self._shift = -torch.tensor(mean, dtype=torch.float32).reshape(-1, 1, 1) / std_t
        self._on_device: dict[torch.device, tuple[Tensor, Tensor]] = {}

    def subset(self, rows: np.ndarray) -> ImageFolderData:
        """The images at ``rows`` (sorted int indices) as a dataset of their own, labels
        remapped over its classes (``classes`` and the class names follow)."""
        part = ImageFolderData.__new__(ImageFolderData)
        part.__dict__.update(self.__getstate__())
        part.__dict__.pop("is_query", None)  # a test split's own queries (In-Shop)
        part.paths = [self.paths[i] for i in rows]
        local = self.labels[rows]
        part.labels, part.classes = remap_labels(self.classes[local])
        if self.class_names is not None:
            kept = np.unique(local)  # sorted local ids = sorted original ids
            part.class_names = [self.class_names[i] for i in kept]
        return part

    def __getstate__(self) -> dict:  # loader workers get no device copies
        return {**self.__dict__, "_on_device": {}}

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, index: int) -> tuple[Tensor, Tensor]:
        return self.normalise(self.pixels(index)), torch.tensor(self.labels[index])

    def pixels(self, index: int) -> Tensor:
        """Image ``index`` decoded and transformed: uint8 (3, S, S)."""
        image = torchvision.datasets.folder.default_loader(str(self.paths[index]))
        pixels = self.transform(image)
        if pixels.dtype != torch.uint8:
            raise TypeError(f"ImageFolderData.transform must give uint8 pixels, got {pixels.dtype}")
        return pixels

    def normalise(self, pixels: Tensor) -> Tensor:
        """uint8 pixels (3, S, S) or a batch (N, 3, S, S) → float32 model inputs, on the
        pixels' device."""
        if pixels.device not in self._on_device:
            self._on_device[pixels.device] = (
                self._scale.to(pixels.device),
                self._shift.to(pixels.device),
            )
        scale, shift = self._on_device[pixels.device]
        return torch.addcmul(shift, pixels.float(), scale)
