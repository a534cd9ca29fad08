"""The types of the metric catalogue: where a value comes from and how to show it.

Torch-free on purpose (standard library only): the dashboard, the run store's readers
and the CLI import the catalogue without loading the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Source(StrEnum):
    """Which data a logged value describes; also which table of the store holds it.

    The value is the qualifier of a column key (``train:norm/var``); ``db.queries``
    uses the same two qualifiers for its ``final_metrics`` columns.
    """

    TRAINING_BATCH = "train"  # per logged step, on the last training batch (scalars table)
    EVALUATION = "eval"  # at each evaluation, on the test split or an analysed file (evals)

    @property
    def label(self) -> str:
        """How titles and column headers name the source."""
        return "training batch" if self is Source.TRAINING_BATCH else "test set"


#: A key ending in one of these names a family of keys (see ``Metric``).
FAMILY_ENDINGS = ("/", "@", "=")

#: The qualifier separator of a column key: ``"<source>:<key>"``.
QUALIFIER = ":"


@dataclass(frozen=True)
class Metric:
    """One logged statistic.

    ``key`` is the name the engine logs (``norm/var``); a key ending in ``/``, ``@`` or
    ``=`` stands for a family whose members are named at run time (``loss/`` + a
    regulariser's registry name, ``recall@`` + a configured K, ``...@eps=`` + an ε).
    ``sources`` says where it is logged: per training step, at evaluation, or both
    ("shown" follows: the Run page's step charts for the training batch, its evaluation
    chart and the final tables for evaluations). ``group`` is the Run page
    chart it is drawn in (see ``ChartGroup``); evaluation-only metrics use ``"eval"``.
    """

    key: str
    group: str
    title: str
    unit: str = ""
    higher_is_better: bool | None = None
    log_scale: bool = False
    sources: tuple[Source, ...] = (Source.TRAINING_BATCH,)
    short: str = ""  # a table header, e.g. "R@1"; defaults to the title

    @property
    def is_family(self) -> bool:
        return self.key.endswith(FAMILY_ENDINGS)

    @property
    def shown(self) -> str:
        """Where the value is shown: "training step", "evaluation" or "both"."""
        if len(self.sources) > 1:
            return "both"
        return "training step" if self.sources[0] is Source.TRAINING_BATCH else "evaluation"

    def matches(self, key: str) -> bool:
        return key.startswith(self.key) if self.is_family else key == self.key

    def label(self, source: Source) -> str:
        """The title qualified by its source where the key is logged from both."""
        return f"{self.title} ({source.label})" if len(self.sources) > 1 else self.title

    def header(self, source: Source) -> str:
        """A short table header, qualified by its source where the key has both."""
        short = self.short or self.title
        return f"{short} ({source.label})" if len(self.sources) > 1 else short


@dataclass(frozen=True)
class ChartGroup:
    """One chart of the Run page's grid of training-step charts.

    ``kind``: ``"lines"`` (one line per metric), ``"band"`` (mean ± std and min–max of
    the norms), ``"sample_norms"`` (the tracked samples' norm trajectories, which are
    not scalars), ``"heatmap"`` (the ``norm_hist/<bin>`` family as step × norm) or
    ``"similarity_heatmap"`` (a ``mining/*_sim_hist/<bin>`` family as step × cosine).
    ``also`` draws keys of another group in this chart too (the SEC
    target against the mean norm). ``log_scale`` charts follow the page's log toggle.
    ``section``: the Run page's tab that shows it (``CHART_SECTIONS``; only the open
    tab's charts are read and drawn, so a watched run's refresh draws a handful).
    """

    id: str
    title: str
    section: str
    kind: str = "lines"
    y_title: str = "value"
    legend_title: str = "name"
    also: tuple[str, ...] = ()
    log_scale: bool = False
    #: Drawn only when one of these keys was logged (a SEC chart without SEC is noise).
    requires: tuple[str, ...] = ()
    #: One small chart per key, each with its own y scale (the loss terms: with η = 0
    #: the SEC term's scale flattened the total and the metric term to a line at 0).
    per_key: bool = False


def column_key(source: Source, key: str) -> str:
    """``"train:norm/var"``: a key qualified by its source (distinct table columns)."""
    return f"{source.value}{QUALIFIER}{key}"


def split_column_key(column: str) -> tuple[Source, str]:
    """Inverse of ``column_key``; ValueError for an unqualified or unknown source."""
    source, separator, key = column.partition(QUALIFIER)
    if not separator or source not in {s.value for s in Source}:
        raise ValueError(
            f"column {column!r} must be qualified by its source: 'train:<key>' or 'eval:<key>'"
        )
    return Source(source), key
