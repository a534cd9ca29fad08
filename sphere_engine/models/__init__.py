"""Backbones that map inputs to raw embeddings.

Importing this package registers every backbone in ``MODELS``.
"""

from sphere_engine.models.embedding_layer import EmbeddingLayer
from sphere_engine.models.lenet_pp import LeNetPP
from sphere_engine.models.mlp import MLP
from sphere_engine.models.registry import MODELS, create_model, list_models
from sphere_engine.models.resnet18 import ResNet18

__all__ = ["MLP", "MODELS", "EmbeddingLayer", "LeNetPP", "ResNet18", "create_model", "list_models"]
