"""Search: which state runs next, and seeds."""
