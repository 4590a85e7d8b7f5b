"""Built-in acquisition optimizers."""
