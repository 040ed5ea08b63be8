"""The interpreter: the executor, its decisions, calls, values and compiled code."""
