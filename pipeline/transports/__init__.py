"""Transports: where caller audio comes from and agent audio goes."""
