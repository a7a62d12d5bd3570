"""Rendering fused kernels to source text (no numba import here: the text imports it)."""
