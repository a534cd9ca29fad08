"""The standard DML benchmarks in their official layouts (CUB-200-2011, Cars196,
Stanford Online Products, In-Shop); importing registers them in ``DATASETS``."""

from sphere_engine.data.benchmarks import cars196, cub200, inshop, sop  # noqa: F401
from sphere_engine.data.benchmarks.official_layout import Listing, OfficialLayout

__all__ = ["Listing", "OfficialLayout"]
