"""The findings of a run as the CLI and the report print them (``db.findings``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from db.findings import stored_findings
from db.store import RunStore
from db.writer_store import WriterStore
from sphere_engine.findings import Detection, Severity

MARKS = {Severity.CRITICAL: "[critical]", Severity.WARNING: "[warning]", Severity.INFO: "[info]"}


def stored_run_findings(store: WriterStore, run_id: str) -> list[Detection]:
    """What the run's end stored (empty if it could not be evaluated)."""
    return stored_findings(store.get_run(run_id).run_info) or []


def format_findings(found: list[Detection]) -> str:
    """A short text block: one line per finding with its figures, then what to try."""
    if not found:
        return "findings: none"
    lines = ["findings:"]
    for finding in found:
        lines.append(f"  {MARKS[finding.severity]} {finding.title}: {finding.message}")
        lines.append(f"      try: {finding.action}")
    return "\n".join(lines)


def findings_json(found: list[Detection]) -> list[dict[str, Any]]:
    return [finding.to_dict() for finding in found]


def findings_markdown(store: RunStore, runs: Iterable[tuple[str, str]]) -> str:
    """The report's findings of ``runs`` ((run id, label) pairs): one bullet per finding
    with its figures and what to try, or a line saying that none fired."""
    lines = []
    for run_id, label in runs:
        for finding in stored_run_findings(store, run_id):
            lines.append(
                f"- `{label}` — **{finding.title}** ({finding.severity.value}): "
                f"{finding.message}. Try: {finding.action}"
            )
    if not lines:
        return "Findings: none on these runs (`sphere_engine.findings`)."
    return "\n".join(["Findings on these runs:", "", *lines])
