"""A finding: a rule over a run's logged series that says what the geometry means.

Declared once (``sphere_engine.findings.rules``), evaluated on plain pandas series by
the run's end (``db.findings``), the dashboard while a run goes, the CLI and the report,
so all of them say the same thing about the same run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sphere_engine.catalogue.metric import Source

if TYPE_CHECKING:
    from sphere_engine.findings.run_series import RunSeries


class Severity(StrEnum):
    """How urgently a finding asks for attention, most urgent first in listings. Decided
    per firing from the evidence (``Hit.severity``), never per rule."""

    CRITICAL = "critical"  # the run's result cannot be trusted (diverged, never learned)
    WARNING = "warning"  # the run learns, but a known failure is under way
    INFO = "info"  # worth knowing before spending more compute

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


@dataclass(frozen=True)
class Hit:
    """What a rule saw: one sentence with absolute figures, the span of steps that shows
    it, and how severe this evidence is (each rule decides it per firing)."""

    message: str
    step_start: int | None = None
    step_end: int | None = None
    severity: Severity = field(kw_only=True)


@dataclass(frozen=True)
class Finding:
    """One rule of the catalogue.

    ``check`` looks at a run's series and returns a ``Hit`` (with its severity) or
    ``None``; ``evidence`` are the (source, metric key) series that show it (the Run
    page opens their chart with the hit's span highlighted; ``check`` reads only these
    and ``reads``). ``worst`` is the most severe a firing of the rule can be (the
    catalogue lists it; a hit above it is reported at it).
    """

    name: str
    title: str
    worst: Severity
    explanation: str
    paper: str
    evidence: tuple[tuple[Source, str], ...]
    action: str
    check: Callable[[RunSeries], Hit | None]
    reads: tuple[tuple[Source, str], ...] = ()
    #: When it fires, no other finding is reported: what the run logged after it no
    #: longer measures learning (a diverged run's "collapse" or "overfitting" is noise).
    overrides: bool = False

    def series_keys(self) -> tuple[tuple[Source, str], ...]:
        """Every series the rule reads."""
        return self.evidence + tuple(k for k in self.reads if k not in self.evidence)


@dataclass(frozen=True)
class Detection:
    """A finding that fired on one run (what is stored with the run and shown)."""

    name: str
    title: str
    severity: Severity
    message: str
    step_start: int | None
    step_end: int | None
    action: str
    evidence: tuple[tuple[Source, str], ...]
    #: The last step the run had logged when this was evaluated (a live run's findings
    #: are "as of" it); None when unknown (stored before it was recorded).
    as_of: int | None = None

    @classmethod
    def of(cls, finding: Finding, hit: Hit, as_of: int | None = None) -> Detection:
        severity = max(hit.severity, finding.worst, key=lambda s: s.rank)
        return cls(
            finding.name,
            finding.title,
            severity,
            hit.message,
            hit.step_start,
            hit.step_end,
            finding.action,
            finding.evidence,
            as_of,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-plain form (stored in the run's info, printed by ``--json``)."""
        return {
            "name": self.name,
            "title": self.title,
            "severity": self.severity.value,
            "message": self.message,
            "step_start": self.step_start,
            "step_end": self.step_end,
            "action": self.action,
            "evidence": [f"{source.value}:{key}" for source, key in self.evidence],
            "as_of": self.as_of,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Detection:
        evidence = []
        for item in data.get("evidence", []):
            source, _, key = str(item).partition(":")
            evidence.append((Source(source), key))
        return cls(
            str(data["name"]),
            str(data.get("title", data["name"])),
            Severity(data.get("severity", "info")),
            str(data.get("message", "")),
            data.get("step_start"),
            data.get("step_end"),
            str(data.get("action", "")),
            tuple(evidence),
            data.get("as_of"),
        )
