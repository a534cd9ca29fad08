"""Studies: fair, tuned, cross-validated comparisons of methods searched with Optuna
(``spec`` the study file, ``coordinator`` the search, ``results`` the table).

The names below load their module on first use: a coordinator (``study resume``)
imports ``worker.study.control`` without paying for the statistics of ``results``
(SciPy) or anything else it does not call."""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "StudySpec": "spec",
    "cancel_study": "control",
    "coordinate": "control",
    "create_study": "control",
    "load_spec": "spec",
    "parse_spec": "spec",
    "resume_unfinished_studies": "control",
    "study_for_experiment": "results",
    "study_results": "results",
    "study_status": "control",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)
