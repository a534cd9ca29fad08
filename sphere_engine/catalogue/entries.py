"""Every statistic the engine logs, declared once (SCIENCE.md §6 for the definitions).

Per-step statistics come from ``sphere_engine.diagnostics`` (norms, cosines, gradients,
tracked-sample directions), ``sphere_engine.train`` (loss terms, lr, timings) and the
regularisers' ``diagnostics()``; evaluation metrics from
``sphere_engine.metrics.evaluate_embeddings`` and ``sphere_engine.evaluation``. A new
statistic gets one ``Metric`` line here (and, for a new chart, one ``ChartGroup``);
``tests/sphere_engine/test_catalogue.py`` fails for a logged key missing here.
"""

from __future__ import annotations

from sphere_engine.catalogue.facts import DEFAULT_RECALL_KS, FINAL_TEST_PREFIX
from sphere_engine.catalogue.metric import ChartGroup, Metric, Source

TRAIN, EVAL = Source.TRAINING_BATCH, Source.EVALUATION
BOTH = (TRAIN, EVAL)


def _eval(
    key: str,
    title: str,
    unit: str = "",
    higher_is_better: bool | None = None,
    *,
    log_scale: bool = False,
    short: str = "",
) -> Metric:
    """An evaluation-only metric."""
    return Metric(key, "eval", title, unit, higher_is_better, log_scale, (EVAL,), short)


#: The Run page's tabs, in order. The first is open by default and also shows the
#: evaluation chart: what a run is watched for (the loss, the norm spread that SEC
#: collapses, the cosines, Recall@1). Only the open tab is read and redrawn on a live
#: refresh: each chart costs the browser about the same per refresh whatever its rows
#: (Streamlit re-renders every element and Vega re-lays out every view), and sixteen of
#: them took ~40 % of a core for two watching tabs, taken from the training it watched.
OVERVIEW, NORMS, GRADIENTS, OPTIMISATION = (
    "Overview",
    "Norms",
    "Gradients and directions",
    "Optimisation and speed",
)
MINING = "Mining"  # pair losses that mine only: shown when a run logged mining/*
CHART_SECTIONS: tuple[str, ...] = (OVERVIEW, NORMS, GRADIENTS, OPTIMISATION, MINING)

#: The Run page's training-step charts, in page order within their tab (two per row).
CHART_GROUPS: tuple[ChartGroup, ...] = (
    ChartGroup("loss", "Loss terms", OVERVIEW, legend_title="term", per_key=True),
    ChartGroup(
        "norm_band", "Embedding norm (training batch): mean, ± std, min–max", OVERVIEW, "band"
    ),
    ChartGroup(
        "norm_var",
        "Norm variance (training batch)",
        OVERVIEW,
        y_title="norm/var",
        log_scale=True,
    ),
    ChartGroup("cosines", "Positive / negative cosine", OVERVIEW),
    ChartGroup(
        "norm_cv",
        "Coefficient of variation (std / mean, training batch)",
        NORMS,
        y_title="norm/cv",
        log_scale=True,
    ),
    ChartGroup("norm_percentiles", "Norm percentiles p05 / p50 / p95 (training batch)", NORMS),
    ChartGroup("sample_norms", "Tracked-sample norm trajectories", NORMS, "sample_norms"),
    ChartGroup(
        "sec",
        "SEC target μ against the mean norm",
        NORMS,
        also=("norm/mean",),
        requires=("sec/mu_batch", "sec/mu_ema"),
    ),
    ChartGroup("norm_hist", "Norm distribution over steps (training batch)", NORMS, "heatmap"),
    ChartGroup(
        "gradient",
        "Gradient magnitude vs 1/‖f‖ (correlation) and radial cosine",
        GRADIENTS,
        y_title="correlation / |cos|",
    ),
    ChartGroup("gradient_norm", "Mean gradient norm ‖∂L/∂f‖", GRADIENTS, log_scale=True),
    ChartGroup(
        "rotation", "Rotation balance: small-norm / large-norm half (1 = balanced)", GRADIENTS
    ),
    ChartGroup(
        "direction_angle",
        "Mean turn of the tracked samples since their previous pass (degrees)",
        GRADIENTS,
    ),
    ChartGroup("regularizer", "Regulariser diagnostics", OPTIMISATION),
    ChartGroup("lr", "Learning rate", OPTIMISATION, log_scale=True),
    ChartGroup("time", "Seconds per step", OPTIMISATION, y_title="s"),
    ChartGroup("throughput", "Training samples per second", OPTIMISATION, y_title="samples / s"),
    ChartGroup(
        "mining_active",
        "Active pairs / triplets (fraction of the batch's candidates)",
        MINING,
        y_title="fraction",
        requires=("mining/active_fraction",),
    ),
    ChartGroup(
        "mining_similarity",
        "Hardest-negative cosine against the mean positive / negative cosine",
        MINING,
        y_title="cosine",
        also=("cos/pos", "cos/neg"),
        requires=("mining/hardest_neg_sim",),
    ),
    ChartGroup(
        "mining_pos_hist",
        "Positive-pair cosine distribution over steps (training batch)",
        MINING,
        "similarity_heatmap",
        requires=("mining/active_fraction",),
    ),
    ChartGroup(
        "mining_neg_hist",
        "Negative-pair cosine distribution over steps (training batch)",
        MINING,
        "similarity_heatmap",
        requires=("mining/active_fraction",),
    ),
)

METRICS: tuple[Metric, ...] = (
    # ---- per training step (sphere_engine.train, sphere_engine.diagnostics)
    Metric("loss/total", "loss", "loss", higher_is_better=False, short="loss"),
    Metric("loss/metric", "loss", "metric-loss term", higher_is_better=False),
    Metric("loss/", "loss", "regulariser term (loss/<regulariser>)", higher_is_better=False),
    Metric("norm/mean", "norm_band", "mean norm", sources=BOTH),
    Metric("norm/std", "norm_band", "norm std", sources=BOTH),
    Metric("norm/min", "norm_band", "min norm", sources=BOTH),
    Metric("norm/max", "norm_band", "max norm", sources=BOTH),
    Metric(
        "norm/var",
        "norm_var",
        "norm variance",
        higher_is_better=False,
        log_scale=True,
        sources=BOTH,
        short="norm var",
    ),
    Metric("norm/cv", "norm_cv", "norm CV", higher_is_better=False, log_scale=True, sources=BOTH),
    Metric("norm/p05", "norm_percentiles", "5th percentile norm"),
    Metric("norm/p50", "norm_percentiles", "median norm"),
    Metric("norm/p95", "norm_percentiles", "95th percentile norm"),
    Metric("cos/pos", "cosines", "mean positive-pair cosine", higher_is_better=True),
    Metric("cos/neg", "cosines", "mean negative-pair cosine", higher_is_better=False),
    Metric("cos/gap", "cosines", "positive − negative cosine", higher_is_better=True),
    Metric("grad/norm_inv_corr", "gradient", "corr(‖∂L/∂f‖, 1/‖f‖)"),
    Metric("grad/radial_cos", "gradient", "mean |cos(∂L/∂f, f)|"),
    Metric("grad/norm_mean", "gradient_norm", "mean gradient norm", log_scale=True),
    Metric("grad/rotation_ratio", "rotation", "gradient rotation, small / large-norm half"),
    Metric("direction/update_ratio", "rotation", "direction turn, small / large-norm half"),
    Metric("direction/angle_mean", "direction_angle", "mean turn of tracked samples", "degrees"),
    Metric("sec/mu_batch", "sec", "SEC μ of the batch"),
    Metric("sec/mu_ema", "sec", "SEC μ (moving average)"),
    Metric("isotropic/m", "regularizer", "isotropic mean squared radius"),
    Metric("center/mean_distance", "regularizer", "mean distance to class centre"),
    Metric("norm_hist/", "norm_hist", "fraction of the batch in a norm bin (norm_hist/<bin>)"),
    Metric(
        "mining/active_fraction",
        "mining_active",
        "active pairs / triplets",
        "fraction",
        short="active",
    ),
    Metric("mining/hardest_neg_sim", "mining_similarity", "hardest-negative cosine"),
    Metric(
        "mining/pos_sim_hist/",
        "mining_pos_hist",
        "fraction of the positive pairs in a cosine bin (mining/pos_sim_hist/<bin>)",
    ),
    Metric(
        "mining/neg_sim_hist/",
        "mining_neg_hist",
        "fraction of the negative pairs in a cosine bin (mining/neg_sim_hist/<bin>)",
    ),
    Metric("lr", "lr", "learning rate"),
    Metric("time/step", "time", "step time", "s", higher_is_better=False),
    Metric("eval/pending", "time", "evaluations in flight", "count", higher_is_better=False),
    Metric("time/samples_per_s", "throughput", "throughput", "samples/s", higher_is_better=True),
    # ---- at evaluation (sphere_engine.metrics.evaluate_embeddings, sphere_engine.evaluation)
    *(
        Metric(
            f"recall@{k}", "eval", f"recall@{k}", "fraction", True, sources=(EVAL,), short=f"R@{k}"
        )
        for k in DEFAULT_RECALL_KS
    ),
    Metric("precision@1", "eval", "precision@1", "fraction", True, sources=(EVAL,)),
    Metric("r_precision", "eval", "R-precision", "fraction", True, sources=(EVAL,)),
    Metric("map@r", "eval", "MAP@R", "fraction", True, sources=(EVAL,), short="MAP@R"),
    Metric("knn_accuracy", "eval", "10-NN accuracy", "fraction", True, sources=(EVAL,)),
    Metric("retrieval/queries", "eval", "retrieval queries", "count", sources=(EVAL,)),
    Metric(
        "retrieval/queries_skipped", "eval", "queries without a match", "count", sources=(EVAL,)
    ),
    Metric("retrieval/max_r", "eval", "largest R of MAP@R", "count", sources=(EVAL,)),
    Metric(
        "retrieval/classes_skipped", "eval", "classes without a match", "count", sources=(EVAL,)
    ),
    Metric(
        "clustering/train_points", "eval", "points k-means trained on", "count", sources=(EVAL,)
    ),
    Metric("eval/seconds", "eval", "evaluation compute time", "s", sources=(EVAL,)),
    Metric(
        "eval/lag_steps", "eval", "steps trained during the evaluation", "count", sources=(EVAL,)
    ),
    Metric("nmi", "eval", "NMI (k-means)", "fraction", True, sources=(EVAL,), short="NMI"),
    Metric("ami", "eval", "AMI (k-means)", "fraction", True, sources=(EVAL,), short="AMI"),
    Metric("f1", "eval", "pairwise F1 (k-means)", "fraction", True, sources=(EVAL,), short="F1"),
    Metric("agglomerative_nmi", "eval", "NMI (Ward)", "fraction", True, sources=(EVAL,)),
    Metric("agglomerative/points", "eval", "points clustered by Ward", "count", sources=(EVAL,)),
    Metric(
        "angle/inter_min", "eval", "min angle between centroids", "degrees", True, sources=(EVAL,)
    ),
    Metric(
        "angle/inter_mean", "eval", "mean angle between centroids", "degrees", True, sources=(EVAL,)
    ),
    Metric(
        "angle/simplex_bound", "eval", "simplex bound on the min angle", "degrees", sources=(EVAL,)
    ),
    Metric(
        "angle/intra_mean", "eval", "mean angle to own centroid", "degrees", False, sources=(EVAL,)
    ),
    Metric("angle/intra_over_inter", "eval", "intra / inter angle", "", False, sources=(EVAL,)),
    Metric("alignment", "eval", "alignment", "", False, sources=(EVAL,)),
    Metric(
        "hyperspherical_energy",
        "eval",
        "hyperspherical energy of centroids",
        "",
        False,
        sources=(EVAL,),
    ),
    Metric("uniformity", "eval", "uniformity", "", False, sources=(EVAL,)),
    Metric(
        "effective_rank",
        "eval",
        "effective rank (unit embeddings)",
        "dimensions",
        True,
        sources=(EVAL,),
    ),
    Metric(
        "uniformity/points", "eval", "points in the uniformity sample", "count", sources=(EVAL,)
    ),
    Metric(
        "classifier_accuracy",
        "eval",
        "classifier accuracy",
        "fraction",
        True,
        sources=(EVAL,),
        short="accuracy",
    ),
    Metric(
        "vertex/angle_mean", "eval", "mean centroid–vertex angle", "degrees", False, sources=(EVAL,)
    ),
    Metric(
        "vertex/angle_max", "eval", "max centroid–vertex angle", "degrees", False, sources=(EVAL,)
    ),
    # ---- evaluations of SCIENCE.md §7 (sphere_engine.evaluation, config `evaluation`)
    _eval("recall@", "recall@K (a configured K)", "fraction", True, short="R@K"),
    _eval("verification/auc", "verification ROC AUC", "fraction", True, short="ROC AUC"),
    _eval("verification/eer", "equal error rate", "fraction", False, short="EER"),
    _eval("verification/tar@far=", "TAR at a FAR", "fraction", True, short="TAR@FAR"),
    _eval("verification/accuracy", "verification accuracy (10-fold)", "fraction", True),
    _eval("verification/accuracy_std", "verification accuracy std (10-fold)", "fraction"),
    _eval("verification/genuine_pairs", "genuine pairs scored", "count"),
    _eval("verification/impostor_pairs", "impostor pairs scored", "count"),
    _eval("verification/min_far", "smallest resolvable FAR", "fraction", log_scale=True),
    _eval("clustering/softmax_nmi", "NMI (k-means on softmax)", "fraction", True),
    _eval("clustering/softmax_ami", "AMI (k-means on softmax)", "fraction", True),
    _eval("clustering/softmax_f1", "pairwise F1 (k-means on softmax)", "fraction", True),
    _eval("linear_probe/accuracy", "linear-probe accuracy", "fraction", True, short="probe acc"),
    _eval("linear_probe/train_accuracy", "linear-probe train accuracy", "fraction", True),
    *(
        _eval(
            f"robustness/{attack}/{what}@eps=", f"{title} under {attack.upper()}", "fraction", True
        )
        for attack in ("fgsm", "pgd")
        for what, title in (("accuracy", "accuracy"), ("recall@1", "R@1"))
    ),
    # ---- the final test after validation folds (evaluation.final_test): MLRC's three
    # by name, every other key of that one evaluation as a family
    *(
        _eval(
            FINAL_TEST_PREFIX + key,
            f"{title} (final test)",
            "fraction",
            True,
            short=f"test {short}",
        )
        for key, title, short in (
            ("precision@1", "precision@1", "P@1"),
            ("r_precision", "R-precision", "R-Prec"),
            ("map@r", "MAP@R", "MAP@R"),
        )
    ),
    _eval(FINAL_TEST_PREFIX, "a metric of the final test evaluation"),
)

#: Columns of the Runs table after the run facts: (source, key).
#: The run's main metric: the first of these evaluation keys it logged (R@1 for a
#: retrieval run, else accuracy for classification / verification). The Run page's
#: quality tile, the Runs table, early stopping, the "best" checkpoint and the run
#: catalogue's ``main_value`` all lead with it. All are higher-is-better fractions.
MAIN_METRICS: tuple[str, ...] = (
    "recall@1",
    "classifier_accuracy",
    "linear_probe/accuracy",
    "verification/accuracy",
)

RUNS_TABLE: tuple[tuple[Source, str], ...] = (
    (TRAIN, "loss/total"),
    (TRAIN, "norm/var"),
    (EVAL, "recall@1"),
)

#: The SEC paper's final table (Compare page), in its column order.
PAPER_TABLE: tuple[tuple[Source, str], ...] = (
    (EVAL, "nmi"),
    (EVAL, "f1"),
    (EVAL, "recall@1"),
    (EVAL, "map@r"),
    (EVAL, "norm/var"),
)

#: Columns added to the paper table when some compared run logged them.
PAPER_TABLE_OPTIONAL: tuple[tuple[Source, str], ...] = (
    (EVAL, "verification/tar@far=1e-3"),
    (EVAL, "verification/eer"),
    (EVAL, "clustering/softmax_nmi"),
    (EVAL, "linear_probe/accuracy"),
)

#: Evaluation metrics printed first by the CLI and drawn by default on the Run page.
KEY_EVALUATIONS: tuple[str, ...] = (
    "recall@1",
    "map@r",
    "nmi",
    "f1",
    "norm/var",
    "classifier_accuracy",
)
