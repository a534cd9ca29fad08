"""insightface's evaluation rules, transcribed from its scripts for the tests to compare
against (github.com/deepinsight/insightface, as of the stored snapshot):

- ``recognition/arcface_torch/eval/verification.py``: ``LFold``/``calculate_roc``/
  ``calculate_accuracy`` (10-fold accuracy on the 0.01 squared-distance grid);
- ``recognition/_evaluation_/ijb/ijb_evals.py``: ``process_embeddings``,
  ``image2template_feature``, ``evaluation_1N`` (its threshold rule) and
  ``plot_roc_and_calculate_tpr`` (TAR at the ROC point nearest each FAR).

Loops and sklearn kept as in the originals: they are the independent computation.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_curve
from sklearn.model_selection import KFold
from sklearn.preprocessing import normalize


def calculate_accuracy(threshold, dist, actual_issame):
    predict_issame = np.less(dist, threshold)
    tp = np.sum(np.logical_and(predict_issame, actual_issame))
    tn = np.sum(np.logical_and(np.logical_not(predict_issame), np.logical_not(actual_issame)))
    return float(tp + tn) / dist.size


def ten_fold_accuracy(embeddings1, embeddings2, actual_issame, nrof_folds=10):
    """``calculate_roc`` (pca = 0) then ``np.mean`` / ``np.std`` of the accuracies."""
    thresholds = np.arange(0, 4, 0.01)
    k_fold = KFold(n_splits=nrof_folds, shuffle=False)
    accuracy = np.zeros(nrof_folds)
    indices = np.arange(len(actual_issame))
    dist = np.sum(np.square(np.subtract(embeddings1, embeddings2)), 1)
    for fold_idx, (train_set, test_set) in enumerate(k_fold.split(indices)):
        acc_train = np.zeros(len(thresholds))
        for threshold_idx, threshold in enumerate(thresholds):
            acc_train[threshold_idx] = calculate_accuracy(
                threshold, dist[train_set], actual_issame[train_set]
            )
        best_threshold_index = np.argmax(acc_train)
        accuracy[fold_idx] = calculate_accuracy(
            thresholds[best_threshold_index], dist[test_set], actual_issame[test_set]
        )
    return np.mean(accuracy), np.std(accuracy)


def tar_at_fars(scores, label, x_labels):
    """``plot_roc_and_calculate_tpr``'s TAR per FAR."""
    fpr, tpr, _ = roc_curve(label, scores)
    fpr, tpr = np.flipud(fpr), np.flipud(tpr)  # select largest tpr at same fpr
    return [tpr[np.argmin(abs(fpr - ii))] for ii in x_labels]


def process_embeddings(embs, use_norm_score, use_detector_score, face_scores):
    """As ``ijb_evals.process_embeddings`` (its ``use_norm_score`` normalises)."""
    if use_norm_score:
        embs = normalize(embs)
    if use_detector_score and face_scores is not None:
        embs = embs * np.expand_dims(face_scores, -1)
    return embs


def image2template_feature(img_feats, templates, medias, choose_templates=None, choose_ids=None):
    if choose_templates is not None:  # 1:N
        unique_templates, indices = np.unique(choose_templates, return_index=True)
        unique_subjectids = choose_ids[indices]
    else:  # 1:1
        unique_templates = np.unique(templates)
        unique_subjectids = None
    template_feats = np.zeros((len(unique_templates), img_feats.shape[1]))
    for count_template, uqt in enumerate(unique_templates):
        (ind_t,) = np.where(templates == uqt)
        face_norm_feats = img_feats[ind_t]
        face_medias = medias[ind_t]
        unique_medias, unique_media_counts = np.unique(face_medias, return_counts=True)
        media_norm_feats = []
        for u, ct in zip(unique_medias, unique_media_counts, strict=True):
            (ind_m,) = np.where(face_medias == u)
            if ct == 1:
                media_norm_feats += [face_norm_feats[ind_m]]
            else:
                media_norm_feats += [np.mean(face_norm_feats[ind_m], 0, keepdims=True)]
        media_norm_feats = np.array(media_norm_feats)
        template_feats[count_template] = np.sum(media_norm_feats, 0)
    template_norm_feats = normalize(template_feats)
    return template_norm_feats, unique_templates, unique_subjectids


def evaluation_1n(query_feats, gallery_feats, query_ids, reg_ids, fars):
    """``evaluation_1N``'s top-1 count and TPIR per FPIR (its threshold rule)."""
    similarity = np.dot(query_feats, gallery_feats.T)
    top_1_count = 0
    pos_sims, neg_sims, non_gallery_sims = [], [], []
    for index, query_id in enumerate(query_ids):
        if query_id in reg_ids:
            gallery_label = np.argwhere(reg_ids == query_id)[0, 0]
            index_sorted = np.argsort(similarity[index])[::-1]
            top_1_count += gallery_label in index_sorted[:1]
            pos_sims.append(similarity[index][reg_ids == query_id][0])
            neg_sims.append(similarity[index][reg_ids != query_id])
        else:
            non_gallery_sims.append(similarity[index])
    pos_sims, neg_sims = np.array(pos_sims), np.array(neg_sims)
    non_gallery_sims = np.array(non_gallery_sims)
    correct_pos_cond = pos_sims > neg_sims.max(1)
    non_gallery_sims_sorted = np.sort(non_gallery_sims.max(1))[::-1]
    recalls = []
    for far in fars:
        thresh = non_gallery_sims_sorted[max(int((non_gallery_sims_sorted.shape[0]) * far) - 1, 0)]
        recall = np.logical_and(correct_pos_cond, pos_sims > thresh).sum() / pos_sims.shape[0]
        recalls.append(recall)
    return top_1_count / len(pos_sims), recalls
