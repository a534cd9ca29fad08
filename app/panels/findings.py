"""The Run page's findings panel: what the run's logged geometry means, most severe
first; each finding opens to its explanation, what to try, and its evidence chart with
the span it fired on shaded."""

from __future__ import annotations

import streamlit as st

from app import ui
from app.charts.findings import evidence_chart
from app.data.findings import BOXES, evidence_series, findings
from db.findings import untrusted_reasons
from sphere_engine.findings import Severity, get_finding

#: The expanders' icons: bundled Material symbols (an emoji is an empty box without an
#: emoji font).
ICONS = {
    Severity.CRITICAL: ":material/dangerous:",
    Severity.WARNING: ":material/warning:",
    Severity.INFO: ":material/info:",
}


def show(run_id: str, *, live: bool) -> None:
    """The panel (nothing but a one-line note when no finding fired)."""
    found = findings(run_id)
    if not found:
        note = "so far" if live else "for this run"
        st.caption(f"Findings: none {note} (the rules of `sphere_engine.findings`).")
        return
    st.subheader("Findings")
    reasons = untrusted_reasons(found)
    if reasons:
        st.markdown(
            f":red-badge[:material/block: Untrusted result] {', '.join(reasons)}: left out "
            "of best highlights and rankings unless asked."
        )
    for detection in found:
        as_of = f" (as of step {detection.as_of:,})" if live and detection.as_of else ""
        getattr(st, BOXES[detection.severity])(
            f"**{detection.title}** — {detection.message}{as_of}", icon=None
        )
        with st.expander(
            f"Why, and what to try: {detection.title}",
            icon=ICONS[detection.severity],
            key=f"run.finding.{detection.name}",
        ):
            finding = get_finding(detection.name)
            st.markdown(finding.explanation)
            st.caption(f"Source: {finding.paper}")
            st.markdown(f"**Try:** {detection.action}")
            rows = evidence_series(run_id, detection.evidence)
            if rows.empty:
                st.caption("No evidence series logged.")
            else:
                span = (detection.step_start, detection.step_end)
                title = f"Evidence: {', '.join(key for _, key in detection.evidence)}"
                ui.show_chart(evidence_chart(rows, span, title))
