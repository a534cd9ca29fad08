"""K's guess per class, learnt from the class's finished blocks."""

from __future__ import annotations

import numpy as np

from sphere_engine.metrics.positive_ranks.parts import RankedBlock


class Guesses:
    """K's guess per class (see the package doc): a block reads its class's when it
    starts and updates it when it ends. A class none of whose blocks has finished yet
    starts from the share of R of the last finished block of any class (classes of one
    embedding are alike; at 10k / 100 classes every class is a single block, and R/32
    left ~27 % of rows crowded), the very first blocks from R/32."""

    def __init__(self) -> None:
        self.per_class: dict[int, int] = {}
        self.latest_share = 1 / 32  # of R: a few % of the top R are negatives

    def start(self, index: int, r: int) -> int:
        return self.per_class.get(index, max(1, int(self.latest_share * r)))

    def finish(self, index: int, r: int, block: RankedBlock) -> None:
        # About as many positives as top-R negatives fall below the R-th score (see
        # the package doc): the median passes for about half the rows, the others
        # retry once with the K their count vouches for. Set when the block ends, not
        # when it is yielded, so that the class's next blocks already start from it.
        guess = max(1, int(np.median(r - block.hits_in_r)))
        self.per_class[index] = guess
        self.latest_share = guess / r
