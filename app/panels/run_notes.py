"""A run's notes on its page: shown, and edited in place."""

from __future__ import annotations

from typing import Any

import streamlit as st

from app import data, ui


def notes(record: Any) -> None:
    """The notes of ``record`` in an expander (open when there are some), saved on
    the button."""
    with st.expander("Notes", expanded=bool(record.notes), icon=":material/edit_note:"):
        text = st.text_area(
            "Notes",
            value=record.notes,
            key=f"run.notes.{record.run_id}",
            label_visibility="collapsed",
            placeholder="What this run is for, what you saw…",
        )
        if st.button("Save notes", key="run.notes.save", disabled=text == record.notes):
            data.set_notes(record.run_id, text)
            ui.flash("Notes saved")
            st.rerun()
