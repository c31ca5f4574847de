"""Isolation backends: how arms and the proxy are started, kept apart and stopped."""
