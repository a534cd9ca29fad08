"""Data-parallel training of the engine's loop: ``DataParallel`` says which process of
the job this is and does the few collective operations the loop needs."""

from sphere_engine.parallel.data_parallel import SINGLE_PROCESS, DataParallel
from sphere_engine.parallel.stop_agreement import StopAgreement

__all__ = ["SINGLE_PROCESS", "DataParallel", "StopAgreement"]
