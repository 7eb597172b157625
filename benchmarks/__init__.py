"""Benchmarks of the course kernels against torch (`make bench`)."""
