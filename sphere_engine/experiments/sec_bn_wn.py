"""SEC rebuttal, Table 5: BatchNorm or weight norm instead of (or with) SEC."""

from __future__ import annotations

from sphere_engine.experiments.bases import DIGITS_PAIR_LOSS, NO_REG, RETRIEVAL, sec
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Variant, merge

BN = {"model": {"embedding_bn": True}}
WN = {"model": {"weight_norm": True}}
VAR = "train_mean:norm/var"

EXPERIMENT = Experiment(
    name="sec-bn-wn",
    title="BatchNorm and weight norm vs SEC (SEC rebuttal, Table 5)",
    description=(
        "Semihard triplet loss; no regulariser, SEC (η = 0.5), BatchNorm on the embedding, "
        "BN + SEC, weight norm on the last layer, WN + SEC."
    ),
    base=DIGITS_PAIR_LOSS,
    variants=(
        Variant("none", NO_REG, {VAR: 7.63}),
        Variant("SEC", sec(0.5), {VAR: 3.20}),
        Variant("BN", merge(BN, NO_REG), {VAR: 7.77}),
        Variant("BN + SEC", merge(BN, sec(0.5))),
        Variant("WN", merge(WN, NO_REG), {VAR: 9.31}),
        Variant("WN + SEC", merge(WN, sec(0.5)), {VAR: 3.18}),
    ),
    metrics=RETRIEVAL,
    claims=(
        Claim(
            "BatchNorm does not reduce the norm variance as SEC does",
            (Comparison(VAR, "BN", "SEC"), Comparison(VAR, "BN", "BN + SEC")),
        ),
        Claim(
            "Weight norm does not reduce the norm variance as SEC does",
            (Comparison(VAR, "WN", "SEC"), Comparison(VAR, "WN", "WN + SEC")),
        ),
        Claim(
            "SEC still improves R@1 on top of BN and of WN",
            (
                Comparison("recall@1", "BN + SEC", "BN"),
                Comparison("recall@1", "WN + SEC", "WN"),
            ),
        ),
    ),
    paper_dataset="cars196",
    notes="Paper values: Cars-196, semihard triplet; BN + SEC has no published variance.",
)
