"""Ranks of each query's positives by counting: MAP@R without ranking R neighbours.

MAP@R and R-precision need, per query, only where its R positives (reference samples
of its class) fall among its R nearest. Number the positives by score, best first;
positive m sits at rank m + n_m, n_m = negatives ranked above it, and

    AP@R = (1/R) Σ_{m : m + n_m ≤ R} m / (m + n_m),   R-precision = #{m : m + n_m ≤ R} / R.

Which negatives can matter: with the positives sorted ascending, a_1 ≤ … ≤ a_R, and
θ = a_K for some K, at least R − K + 1 positives score ≥ θ; if at least K − 1
negatives do too, R samples score ≥ θ, so every sample in the top R does, and the
negatives below θ (the ones not counted) precede only positives that rank beyond R
either way (a positive below θ has all the counted ones above it: m + n_m > R). K is
guessed per class from its last finished block (a class none of whose blocks has
finished: from the last finished block of any class, as a share of R): the median
count of negatives in the top R (about that many positives fall below the R-th
score). A row whose guess
fails that check has c < K − 1 negatives ≥ a_K; it retries once with K' = c + 1,
which holds for sure (a_K' ≤ a_K has those c negatives above it). So a row's
candidates are about the negatives of its top R (~2 %–10 % of R on trained
embeddings; ~500 of 54,000 per query on the 60k bench), not all negatives above its
lowest positive. Where more than 1.25 R remain (untrained embeddings, or the very
first blocks, which start from K = R/32), they are cut at the row's R-th best negative.

Each candidate is located among its row's sorted positives by one binary search,
giving c_j = positives above it. Then n_m = #{j : c_j < m} is a step function of m,
constant between consecutive sorted c_j, and over a run of m with n_m = t the sum
has a closed form, Σ_{m=lo}^{hi} m/(m + t) = (hi − lo + 1) − t·(H_{hi+t} − H_{lo−1+t})
with H the harmonic numbers. So the work per query is its share of the sgemm, one
float sort of its R positive scores, a comparison pass over its row, and
O(candidates), all in numpy calls on whole blocks. Blocks run as independent tasks,
one per core (each with a single-threaded sgemm; numpy releases the GIL in all the
large calls), so the cores never wait for each other.

Ties: equal scores rank by ascending reference index (``neighbors.py``). Only a
negative whose score equals one of the query's positives depends on it (at float32
resolution a few per query at R ≈ 6,000); for those the equal positives' indices are
compared, so the counts stay exact.
The short nearest-neighbour list (Recall@K, kNN vote) comes from the same candidates
(k ≤ R: the k best positives and the candidates with fewer than k positives above),
else from a top-k of the same score block.

The work is split by job: ``search`` (the reference in class order, the block size),
``scoring`` (a block's scores, and the top-k fallback), ``candidates`` (which negatives
are counted), ``positives_above`` (each candidate among the sorted positives, ties
included), ``counting`` (the precision sums, in memory-capped groups), ``nearest`` (the
k nearest from the same candidates), ``guesses`` (K per class), ``scheduling`` (blocks
on threads, in order) and ``blocks`` (``ranked_blocks``, the entry).
"""

from sphere_engine.metrics.positive_ranks.blocks import ranked_blocks
from sphere_engine.metrics.positive_ranks.parts import RankedBlock

__all__ = ["RankedBlock", "ranked_blocks"]
