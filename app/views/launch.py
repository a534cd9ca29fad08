"""Launch: one run from the form, a sweep (grid × seeds), or a preset from SCIENCE.md."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from app import data, launch_checks, launch_form, study_form, ui
from app.panels import run_on
from app.presets import PRESETS
from app.sweep_form import sweep_size, sweep_widgets
from app.ui import plural
from sphere_engine.catalogue.numbers import format_number as number

LAUNCHED = "launch.launched"


def main() -> None:
    st.title("Launch runs")
    if study_form.study_mode():  # Run, Sweep or Study: a study has a form of its own
        study_form.render()
        return
    # -- widgets: presets ------------------------------------------------------------
    with st.expander("Presets (the experiments of SCIENCE.md)", expanded=False):
        preset_key = st.selectbox(
            "Preset", list(PRESETS), key="launch.preset", format_func=lambda k: PRESETS[k].title
        )
        preset = PRESETS[preset_key]
        st.caption(preset.description)
        st.dataframe(pd.DataFrame({"run": preset.names}), hide_index=True, width="stretch")
        left, right = st.columns(2)
        launch_preset = left.button(
            f"Launch preset ({plural(len(preset.names), 'run')})",
            key="launch.preset.go",
            type="primary",
        )
        edit_index = right.selectbox(
            "Edit one of its runs in the form",
            range(len(preset.names)),
            key="launch.preset.edit",
            format_func=lambda i: preset.names[i],
        )
        if right.button("Load into the form", key="launch.preset.load"):
            launch_form.load_into_form(preset.configs[edit_index])
            st.rerun()
    # -- widgets: the form -----------------------------------------------------------
    config, error = launch_form.render()
    st.divider()
    name_col, tags_col, project_col = st.columns(3)
    run_name = name_col.text_input("Run name (optional)", key="launch.name")
    tag_text = tags_col.text_input("Tags (comma-separated)", key="launch.tags")
    project = project_col.text_input(
        "Project", value=data.selected_project() or "default", key="launch.project"
    ).strip()
    tags = [t.strip() for t in tag_text.split(",") if t.strip()]
    slurm_request = run_on.render()
    sweep = st.toggle("Sweep mode: a grid of values × several seeds", key="launch.sweep")
    grid: dict[str, list] = {}
    seeds: list[int] = []
    sweep_problem = None
    if sweep:  # combinations are checked once the form's own config is valid
        grid, seeds, sweep_problem = sweep_widgets(config, check=not error)
    with st.expander("Config (JSON)"):
        st.code(launch_form.config_preview(config), language="json")
    if error:
        tabs = " and ".join(launch_form.error_tabs(error))
        st.error(f"Invalid config (tab {tabs or 'Data'}) — {error}", icon=":material/block:")
    unusual = [] if error else launch_checks.absurd_settings(config)
    for line in unusual:
        st.warning(line, icon=":material/warning:")
    confirmed = not unusual or st.checkbox(
        "Launch with these settings anyway", key="launch.confirm"
    )
    _estimate(config)
    blocked = error or sweep_problem or (None if confirmed else "confirm the unusual settings")
    if slurm_request is not None and sweep:
        blocked = blocked or "sweeps run on the workers; a SLURM job is one run"
    label = f"Launch sweep ({plural(sweep_size(grid, seeds), 'run')})" if sweep else "Launch run"
    launch_clicked = st.button(
        label,
        key="launch.go",
        type="primary",
        disabled=bool(blocked),
        help=f"Disabled: {blocked}" if blocked else None,
    )
    # -- data: launching -------------------------------------------------------------
    try:  # refused by the launcher (no broker, checkpoint_dir outside the store): one line
        if launch_preset:
            sweep_id = data.new_sweep_id(preset.key)
            ids = data.launch_runs(
                preset.configs,
                names=preset.names,
                tags=[preset.key, *tags],
                sweep_id=sweep_id,
                run_tags=preset.tags,  # the experiment's: the runs count in its report
                project=project,
            )
            st.session_state[LAUNCHED] = {"ids": ids, "sweep_id": sweep_id}
        if launch_clicked and not blocked:
            if sweep:
                sweep_id, ids = data.launch_sweep(
                    config, grid, seeds, name=run_name or None, tags=tags, project=project
                )
                st.session_state[LAUNCHED] = {"ids": ids, "sweep_id": sweep_id}
            elif slurm_request is not None:
                run_id = data.submit_slurm_run(
                    config, slurm_request, name=run_name or None, tags=tags, project=project
                )
                st.session_state[LAUNCHED] = {"ids": [run_id], "sweep_id": None}
            else:
                ids = data.launch_runs(
                    [config], names=[run_name or None], tags=tags, project=project
                )
                st.session_state[LAUNCHED] = {"ids": ids, "sweep_id": None}
    except ValueError as refused:
        st.error(str(refused))
    # -- where the runs went ---------------------------------------------------------
    launched = st.session_state.get(LAUNCHED)
    if launched:
        if launch_preset or launch_clicked:  # said where the user is: by the button
            _toast_launched(launched)
        _show_launched(launched)


def _estimate(config: dict) -> None:
    guess = launch_checks.estimate(config, data.runs())
    if guess is None:
        st.caption(
            "Estimated duration: unknown until a run of this model on this data has finished here."
        )
        return
    st.caption(
        f"Estimated duration ≈ {ui.format_seconds(guess.seconds)} at "
        f"{number(guess.steps_per_s)} steps/s (median of the last "
        f"{plural(guess.runs, 'finished run')} of `{guess.model}` on this data here, "
        "start-up excluded)."
    )


def _toast_launched(launched: dict) -> None:
    """A toast (in view wherever the page is scrolled) with a link to the first run."""
    ids = launched["ids"]
    first = ids[0]
    more = f" and {plural(len(ids) - 1, 'more run')}" if len(ids) > 1 else ""
    st.toast(
        f"Launched [{first}](run?run_id={first}){more}.",
        icon=":material/rocket_launch:",
        duration="long",
    )


def _show_launched(launched: dict) -> None:
    ids = launched["ids"]
    st.success(
        f"Launched {len(ids)} run{'s' if len(ids) != 1 else ''}"
        + (f" in sweep `{launched['sweep_id']}`" if launched.get("sweep_id") else "")
        + ". They appear on the Runs page; open one to watch it live.",
        icon=":material/check_circle:",
    )
    for run_id in ids:
        ui.run_link(run_id, label=f"Open run {run_id}")
    st.page_link(ui.RUNS_PAGE, label="All runs", icon=":material/list:")
    if len(ids) > 1:
        st.page_link(
            ui.COMPARE_PAGE,
            label="Compare these runs",
            icon=":material/compare_arrows:",
            query_params={"runs": ",".join(ids)},
        )


ui.run_page(main)
