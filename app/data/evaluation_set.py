"""What a run's evaluations during training were computed on, named for the pages: the
test set, or, for a run with validation folds (``data.folds``), the validation classes
of its fold (it never evaluates on the test classes until its final test)."""

from __future__ import annotations

from typing import Any

from sphere_engine.catalogue import Source, find

TEST_SET = Source.EVALUATION.label  # "test set"


def evaluation_set(record: Any) -> str:
    """ "test set", or "validation classes of fold <i>" for a fold run (the run info's
    ``evaluated_on``, else its config's ``data.folds``)."""
    info = getattr(record, "run_info", None) or {}
    section = (getattr(record, "config", None) or {}).get("data") or {}
    folds = section.get("folds") or 0
    if info.get("evaluated_on") == "validation" or (info.get("evaluated_on") is None and folds):
        return f"validation classes of fold {int(section.get('fold') or 0)}"
    return TEST_SET


def evaluation_label(key: str, where: str) -> str:
    """An evaluation metric's title qualified by what it was evaluated on ("norm
    variance (validation classes of fold 1)"); metrics of one source keep their own."""
    metric = find(key, Source.EVALUATION)
    if metric is None:
        return key
    title = metric.label(Source.EVALUATION)
    return title.replace(f"({TEST_SET})", f"({where})")


def split_title(record: Any) -> str:
    """The evaluation chart's "test split", or "validation classes of fold <i>"."""
    where = evaluation_set(record)
    return "test split" if where == TEST_SET else where
