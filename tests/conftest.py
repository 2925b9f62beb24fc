"""Shared pytest setup: make ``tests/`` importable for the reference helpers."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
