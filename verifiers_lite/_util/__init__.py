"""Private plumbing shared by every layer: the injectable clock, the sync bridge, interrupt notes,
lazy exports, optional dependencies and resource scopes. Not public API."""
