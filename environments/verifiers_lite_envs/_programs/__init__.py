"""Agent programs the bundled program environments run (each a script a user could write)."""
