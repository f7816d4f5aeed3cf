"""Ranking: the learned reranker (model.py), its features (features.py), the pooled pipeline (pipeline.py) and
coverage-aware selection (select.py). Training lives in scripts/."""
