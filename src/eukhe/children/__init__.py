"""Subagents (H5): spawned as durable child runs, watched for progress, and reported
back to their parent exactly once."""
