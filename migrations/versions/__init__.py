"""Alembic revision scripts, one linear history (``down_revision`` chains them)."""
