"""Claim measurements: the blind labelling sample, its scorer and the alias-resolution sample."""
