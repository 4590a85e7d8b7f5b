"""Built-in surrogates."""
