"""Datasets, train/test splits and batch samplers.

Importing this package registers every dataset in ``DATASETS``.
"""

from sphere_engine.data import (  # noqa: F401 - imported to register the datasets
    benchmarks,
    cifar10,
    cifar100,
    digits,
    emnist,
    fashion_mnist,
    image_folder,
    mnist,
    synthetic,
)
from sphere_engine.data.batches import batch_sampler, iter_batches
from sphere_engine.data.dataset_info import DatasetInfo
from sphere_engine.data.dataset_spec import DatasetSpec
from sphere_engine.data.dataset_splits import DatasetSplits
from sphere_engine.data.image_augment import ImageAugment
from sphere_engine.data.image_folder_data import ImageFolderData
from sphere_engine.data.pk_batch_sampler import PKBatchSampler
from sphere_engine.data.registry import (
    DATASETS,
    create_dataset,
    dataset_info,
)
from sphere_engine.data.shuffled_batch_sampler import ShuffledBatchSampler
from sphere_engine.data.tensor_data import TensorData
from sphere_engine.data.vector_augment import VectorAugment

__all__ = [
    "DATASETS",
    "DatasetInfo",
    "DatasetSpec",
    "DatasetSplits",
    "ImageAugment",
    "ImageFolderData",
    "PKBatchSampler",
    "ShuffledBatchSampler",
    "TensorData",
    "VectorAugment",
    "batch_sampler",
    "create_dataset",
    "dataset_info",
    "iter_batches",
]
