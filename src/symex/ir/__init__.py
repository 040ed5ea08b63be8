"""ir layer of symex (see docs/architecture.md)."""
