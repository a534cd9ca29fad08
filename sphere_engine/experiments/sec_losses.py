"""SEC added to five pair losses; do larger R@1 gains come with larger variance drops?"""

from __future__ import annotations

from sphere_engine.experiments.bases import DIGITS_PAIR_LOSS, RETRIEVAL
from sphere_engine.experiments.spec import Claim, Comparison, Experiment, Variant

SEC_WEIGHT = 0.5
#: (loss, label, the rebuttal's training norm variance without → with SEC, Cars-196)
LOSSES = (
    ("triplet", "triplet", (5.77, 0.02)),
    ("semihard_triplet", "semihard triplet", (2.82, 0.03)),
    ("npair", "normalised N-pair", (1.76, 0.13)),
    ("multi_similarity", "multi-similarity", (1.68, 0.004)),
    ("tuplet_margin", "tuplet margin", None),
)


def variant_name(label: str, with_sec: bool) -> str:
    return f"{label} + SEC" if with_sec else label


def _variants() -> tuple[Variant, ...]:
    variants = []
    for loss, label, paper in LOSSES:
        for with_sec in (False, True):
            reference = {} if paper is None else {"train_mean:norm/var": paper[int(with_sec)]}
            regularizer = (
                {"name": "sec", "weight": SEC_WEIGHT}
                if with_sec
                else {"name": "none", "weight": 0.0}
            )
            overrides = {"objective": {"name": loss}, "regularizer": regularizer}
            variants.append(Variant(variant_name(label, with_sec), overrides, reference))
    return tuple(variants)


EXPERIMENT = Experiment(
    name="sec-losses",
    title="SEC across pair losses, and gain vs variance drop (SEC paper; Reviewer 4)",
    description=(
        f"Triplet, semihard triplet, normalised N-pair, multi-similarity and tuplet margin "
        f"loss, each without and with SEC (η = {SEC_WEIGHT}). Per loss and seed: the drop of "
        "the training norm variance and the R@1 gain; their Pearson correlation across losses "
        "and seeds answers 'do larger gains come from larger variance reductions?'."
    ),
    base=DIGITS_PAIR_LOSS,
    variants=_variants(),
    metrics=RETRIEVAL,
    claims=tuple(
        Claim(
            f"SEC lowers the training norm variance of the {label} loss",
            (
                Comparison(
                    "train_mean:norm/var",
                    variant_name(label, True),
                    variant_name(label, False),
                    "<",
                ),
            ),
        )
        for _, label, _ in LOSSES
    )
    + tuple(
        Claim(
            f"SEC improves R@1 of the {label} loss",
            (Comparison("recall@1", variant_name(label, True), variant_name(label, False)),),
        )
        for _, label, _ in LOSSES
    ),
    analyses=("loss_pairs",),
    pairs=tuple((variant_name(label, False), variant_name(label, True)) for _, label, _ in LOSSES),
    paper_dataset="cars196",
    notes="Pairs: (loss, loss + SEC) with the same seed.",
)
