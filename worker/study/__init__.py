"""Studies: fair, tuned, cross-validated comparisons of methods searched with Optuna
(``spec`` the study file, ``coordinator`` the search, ``results`` the table)."""

from worker.study.control import (
    cancel_study,
    coordinate,
    create_study,
    resume_unfinished_studies,
    study_status,
)
from worker.study.results import study_for_experiment, study_results
from worker.study.spec import StudySpec, load_spec, parse_spec

__all__ = [
    "StudySpec",
    "cancel_study",
    "coordinate",
    "create_study",
    "load_spec",
    "parse_spec",
    "resume_unfinished_studies",
    "study_for_experiment",
    "study_results",
    "study_status",
]
