"""Backbones that map inputs to raw embeddings.

Importing this package registers every backbone in ``MODELS`` (and the ``timm/<name>``
family).
"""

from sphere_engine.models.backbone import Backbone
from sphere_engine.models.bn_inception import BNInception
from sphere_engine.models.embedding_layer import EmbeddingLayer
from sphere_engine.models.lenet_pp import LeNetPP
from sphere_engine.models.mlp import MLP
from sphere_engine.models.registry import MODELS, create_model
from sphere_engine.models.timm_backbone import TimmBackbone
from sphere_engine.models.torchvision_resnet import ResNet18, ResNet50

__all__ = [
    "MLP",
    "MODELS",
    "BNInception",
    "Backbone",
    "EmbeddingLayer",
    "LeNetPP",
    "ResNet18",
    "ResNet50",
    "TimmBackbone",
    "create_model",
]
