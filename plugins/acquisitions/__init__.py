"""Built-in acquisitions."""
