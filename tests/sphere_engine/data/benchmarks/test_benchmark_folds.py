"""Validation folds of the image datasets read from files (one rule for every reader):
the fold's classes keep their images, names and original ids."""

from __future__ import annotations

import numpy as np
import torch
from benchmark_trees import inshop_tree, sop_tree

from sphere_engine.config import RunConfig
from sphere_engine.config.folds import fold_classes
from sphere_engine.data import ImageFolderData, create_dataset
from sphere_engine.data.folds import fold_splits
from sphere_engine.evaluation import Evaluator


def test_sop_folds_keep_images_names_and_original_ids(tmp_path):
    root = sop_tree(tmp_path / "sop", train=8, test=3, per_class=2)
    splits = create_dataset("sop", root=str(root), image_size=16)
    folded = fold_splits(splits, 4, 2)
    train, validation = fold_classes(splits.train.classes, 4, 2)
    assert isinstance(folded.validation, ImageFolderData)
    assert folded.validation.classes.tolist() == validation
    assert sorted(folded.train.classes.tolist()) == sorted(train)
    assert folded.test is splits.test
    names = dict(zip(splits.train.classes.tolist(), splits.train.class_names, strict=True))
    for part in (folded.train, folded.validation):
        assert part.class_names == [names[c] for c in part.classes.tolist()]
        for row in range(len(part)):
            source = splits.train.paths.index(part.paths[row])
            original = splits.train.classes[splits.train.labels[source]]
            assert part.classes[part.labels[row]] == original
        x, y = part[0]
        assert x.shape == (3, 16, 16) and int(y) == part.labels[0]
    assert len(folded.train) + len(folded.validation) == len(splits.train)
    assert np.isin(folded.validation.classes, splits.test.classes).sum() == 0


def test_inshop_validates_leave_one_out_and_tests_with_its_official_queries(tmp_path):
    root = inshop_tree(tmp_path / "inshop", train_items=4)
    config = RunConfig.from_dict(
        {
            "data": {"name": "inshop", "root": str(root), "folds": 2, "fold": 0},
            "evaluation": {"retrieval_protocol": "query_gallery"},
            "diagnostics": {"eval_max_samples": 3},
        }
    )
    splits = fold_splits(create_dataset("inshop", root=str(root), image_size=16), 2, 0)
    periodic = Evaluator(splits, config, torch.device("cpu"))
    assert periodic.dataset is splits.validation and periodic.is_query is None
    assert not hasattr(splits.validation, "is_query")
    final = Evaluator(splits, config, torch.device("cpu"), final_test=True)
    assert final.dataset is splits.test
    assert final.indices.tolist() == list(range(len(splits.test)))  # not 3
    assert final.is_query.tolist() == splits.test.is_query.tolist()  # the official queries
