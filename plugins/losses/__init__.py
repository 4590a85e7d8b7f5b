"""Built-in losses."""
