"""Findings: what a run's logged geometry means, declared once as rules (torch-free).

``list_findings()`` is the catalogue; ``evaluate_findings(RunSeries)`` what fires on a
run. ``db.findings`` reads a run's series from the store, evaluates and stores them.
"""

from sphere_engine.findings.finding import Detection, Finding, Hit, Severity
from sphere_engine.findings.registry import (
    RULES_VERSION,
    evaluate_findings,
    get_finding,
    list_findings,
    read_keys,
    register_finding,
)
from sphere_engine.findings.run_series import RunSeries

__all__ = [
    "RULES_VERSION",
    "Detection",
    "Finding",
    "Hit",
    "RunSeries",
    "Severity",
    "evaluate_findings",
    "get_finding",
    "list_findings",
    "read_keys",
    "register_finding",
]
