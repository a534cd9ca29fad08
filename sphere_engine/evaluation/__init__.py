"""A training run's periodic evaluation (``evaluator``), its §7 extras (``extras``) and the
evaluation of embeddings handed in from outside (``external``)."""

from sphere_engine.evaluation.evaluator import Evaluator

__all__ = ["Evaluator"]
