"""Which stored runs belong to a declared experiment by their config alone.

A run launched from the Launch form with a preset's config loaded, a seed sweep of it
or a CLI run with the same settings carries no ``repro:`` tag, yet it is the same
experiment: it counts when its config equals a variant's, leaving out what says where
and how often a run ran rather than what it learned (``PLACEMENT``), and the seed and
steps (the report shows both per run and says when fewer steps ran than declared).
A field added after a run was stored takes its default there, so the run still matches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sphere_engine.config import RunConfig
from sphere_engine.experiments.spec import Experiment

#: (section, field) that do not change what a run learns: files' location, devices,
#: checkpoints, logging cadence, where the evaluation runs.
PLACEMENT = (
    ("data", "root"),
    ("data", "download"),
    ("data", "num_workers"),
    ("training", "seed"),
    ("training", "steps"),
    ("training", "device"),
    ("training", "devices"),
    ("training", "checkpoint_every"),
    ("training", "checkpoint_dir"),
    ("training", "keep_checkpoints"),
    ("training", "compile"),
    ("training", "channels_last"),
    ("diagnostics", "log_every"),
    ("diagnostics", "eval_every"),
    ("diagnostics", "tracked_samples"),
    ("diagnostics", "snapshot_size"),
    ("diagnostics", "gradient_stats"),
    ("evaluation", "background"),
    ("evaluation", "final_test"),
)
_PLACEHOLDER_ROOT = "<data root>"


def _essence(config: dict[str, Any]) -> str:
    """The config without ``PLACEMENT``, as comparable text."""
    kept = {section: dict(fields) for section, fields in config.items() if isinstance(fields, dict)}
    for section, name in PLACEMENT:
        kept.get(section, {}).pop(name, None)
    return repr(sorted((s, sorted(f.items(), key=str)) for s, f in kept.items()))


def variant_matcher(experiment: Experiment) -> Callable[[dict[str, Any]], str | None]:
    """A function from a stored (validated, complete) run config to the name of the
    variant of ``experiment`` it equals, or None."""
    root = _PLACEHOLDER_ROOT if experiment.needs_data_root else None
    by_essence = {}
    for variant in experiment.variants:
        declared = experiment.config(variant, experiment.seeds[0], experiment.steps, root)
        by_essence.setdefault(_essence(RunConfig.from_dict(declared).to_dict()), variant.name)

    defaults = RunConfig().to_dict()

    def match(config: dict[str, Any]) -> str | None:
        return by_essence.get(_essence(with_defaults(config, defaults))) if config else None

    return match


def with_defaults(config: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    """A stored config with the fields added since it was stored at their ``defaults``
    (``RunConfig().to_dict()``), so an old run matches the experiment it ran. A merge,
    not a parse: the Report matches every run of the store this way."""
    filled = dict(config)
    for section, fields in defaults.items():
        stored = config.get(section)
        if isinstance(stored, dict) and isinstance(fields, dict):
            filled[section] = {**fields, **stored}
    return filled
