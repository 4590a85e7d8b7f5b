"""Built-in ensemble strategies."""
