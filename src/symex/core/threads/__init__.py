"""Threads: scheduling and livelock detection."""
