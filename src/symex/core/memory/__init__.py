"""Memory: objects and address spaces, and the executor's accesses through them."""
