"""The findings registry: rules add themselves with ``@register_finding``; the app, the
worker, the CLI and the SDK evaluate the same list."""

from __future__ import annotations

import logging
from collections.abc import Callable

from sphere_engine.findings.finding import Detection, Finding, Hit
from sphere_engine.findings.run_series import RunSeries

log = logging.getLogger(__name__)

_FINDINGS: dict[str, Finding] = {}

#: Raised whenever what the rules say about a run changes (severities, thresholds), so
#: findings stored with an ended run under older rules are evaluated again when read.
RULES_VERSION = 2


Check = Callable[[RunSeries], Hit | None]


def register_finding(**declaration: object) -> Callable[[Check], Finding]:
    """Decorate a check ``(RunSeries) -> Hit | None``; the finding's name is the
    function's name, so it is written once."""

    def wrap(check: Check) -> Finding:
        finding = Finding(name=check.__name__, check=check, **declaration)  # type: ignore[arg-type]
        if finding.name in _FINDINGS:
            raise ValueError(f"finding {finding.name!r} is registered twice")
        _FINDINGS[finding.name] = finding
        return finding

    return wrap


def list_findings() -> list[Finding]:
    """Every registered finding, in declaration order."""
    import sphere_engine.findings.rules  # noqa: F401  (registers the catalogue)

    return list(_FINDINGS.values())


def get_finding(name: str) -> Finding:
    list_findings()
    try:
        return _FINDINGS[name]
    except KeyError:
        raise ValueError(f"unknown finding {name!r}; known: {', '.join(_FINDINGS)}") from None


def evaluate_findings(series: RunSeries) -> list[Detection]:
    """The findings that fire on ``series``, most severe first (only the overriding one
    when such a finding fires: ``Finding.overrides``). A rule that raises on odd data is
    logged and skipped: a diagnosis must never break what shows it."""
    detections = []
    as_of = series.last_step()
    for finding in list_findings():
        try:
            hit = finding.check(series)
        except Exception:
            log.exception("finding %s failed on this run's series", finding.name)
            continue
        if hit is not None:
            if finding.overrides:
                return [Detection.of(finding, hit, as_of)]
            detections.append(Detection.of(finding, hit, as_of))
    return sorted(detections, key=lambda d: d.severity.rank)


def read_keys() -> tuple[tuple[object, str], ...]:
    """Every (source, key) some finding reads (what a reader must fetch)."""
    keys: list = []
    for finding in list_findings():
        keys += [k for k in finding.series_keys() if k not in keys]
    return tuple(keys)
