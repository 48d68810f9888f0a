"""Offline jobs: python -m precompute.<job> --help."""
