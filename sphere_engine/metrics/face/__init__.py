"""Face-recognition protocols read from their own file formats (SCIENCE.md §7).

- ``pairs.py``: LFW / CFP-FP / AgeDB pairs lists, 10-fold best-threshold accuracy;
- ``templates.py``: IJB-B/C image → (template, media) lists and template pooling;
- ``one_to_one.py``: 1:1 TAR@FAR over template pairs, with the impostor count;
- ``one_to_n.py``: 1:N open-set TPIR@FPIR of probes against a gallery + distractors;
- ``conventions.py``: ``bounded`` and ``insightface`` ways of reading thresholds.

Embeddings come keyed by image id (``image_embeddings.py``).
"""

from sphere_engine.metrics.face.conventions import CONVENTIONS, DEFAULT_CONVENTION
from sphere_engine.metrics.face.image_embeddings import ImageEmbeddings, load_image_embeddings
from sphere_engine.metrics.face.one_to_n import identification_metrics
from sphere_engine.metrics.face.one_to_one import tar_at_far
from sphere_engine.metrics.face.pairs import pairs_protocol_metrics, read_pairs_file
from sphere_engine.metrics.face.protocol import FaceAnalysis, face_protocol_metrics
from sphere_engine.metrics.face.templates import (
    read_detector_scores,
    read_template_media,
    read_template_pairs,
    read_template_subjects,
    template_features,
)

__all__ = [
    "CONVENTIONS",
    "DEFAULT_CONVENTION",
    "FaceAnalysis",
    "ImageEmbeddings",
    "face_protocol_metrics",
    "identification_metrics",
    "load_image_embeddings",
    "pairs_protocol_metrics",
    "read_detector_scores",
    "read_pairs_file",
    "read_template_media",
    "read_template_pairs",
    "read_template_subjects",
    "tar_at_far",
    "template_features",
]
