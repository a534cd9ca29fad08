"""The Launch page's Study mode: a study preset or a study file (TOML), checked like
``spherescope study run`` (one line naming the field, nothing queued), then created and
coordinated by a detached process (it outlives the page; ``spherescope up`` resumes it)."""

from __future__ import annotations

import tomllib
from typing import Any

import streamlit as st

from app import data
from sphere_engine.experiments.studies import STUDY_PRESETS, STUDY_TITLES, study_preset

FILE = "(a study file)"
STUDY_PAGE = "views/study.py"
EXAMPLE = """name = "my-study"
folds = 2
trials = 8
reproductions = 3
[base.data]
name = "synthetic"
options = { num_classes = 64 }
[arms.triplet]
set = { "objective.name" = "triplet" }
space = { "objective.options.margin" = { type = "float", low = 0.01, high = 0.5 } }
"""


def study_mode() -> bool:
    return st.toggle(
        "Study mode: compare methods fairly (a search per arm, folds, reproductions)",
        key="launch.study",
    )


def _table(choice: str, text: str) -> dict[str, Any]:
    if choice != FILE:
        return study_preset(choice)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ValueError(f"study file: not valid TOML ({error})") from None


def _checked(table: dict[str, Any], overrides: list[str]) -> Any:
    from sphere_engine.config import apply_overrides
    from worker.study.spec import check_spec, parse_spec

    if overrides:
        table = {**table, "base": apply_overrides(dict(table.get("base", {})), overrides)}
    spec = parse_spec(table)
    check_spec(spec)
    return spec


@st.cache_data(ttl=300, show_spinner="Checking every config the study can launch…")
def _check(choice: str, text: str, overrides: tuple[str, ...]) -> str | None:
    try:
        _checked(_table(choice, text), list(overrides))
    except ValueError as error:
        return str(error)
    return None


def render() -> None:
    choice = st.selectbox(
        "Study",
        [*STUDY_PRESETS, FILE],
        key="study.choice",
        format_func=lambda n: n if n == FILE else f"{n}: {STUDY_TITLES[n]}",
    )
    text = ""
    if choice == FILE:
        text = st.text_area("Study file (TOML)", EXAMPLE, height=300, key="study.text")
    override_text = st.text_input(
        "Base config overrides (section.key=value, comma-separated)",
        key="study.overrides",
        placeholder="data.root=/data/CUB_200_2011, training.steps=200",
    )
    overrides = tuple(part.strip() for part in override_text.split(",") if part.strip())
    parallel = st.number_input("Runs in flight (--parallel)", 1, 64, 2, key="study.parallel")
    problem = _check(choice, text, overrides)
    if problem:
        st.error(problem, icon=":material/block:")
    if st.button("Start study", type="primary", disabled=bool(problem), key="study.go"):
        from worker.study import control

        try:
            spec = _checked(_table(choice, text), list(overrides))
            study_id = control.create_study(str(data.store().home), spec,
                                            parallel=int(parallel))  # fmt: skip
        except ValueError as error:  # a missing broker: one line, nothing created
            st.error(str(error), icon=":material/block:")
            return
        control.start_detached(str(data.store().home), study_id)
        st.success(f"Study {study_id} started.", icon=":material/check_circle:")
        st.page_link(STUDY_PAGE, label=f"Open study {study_id}", icon="🧪",
                     query_params={"study_id": study_id})  # fmt: skip
