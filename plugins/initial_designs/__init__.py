"""Built-in initial designs: configurations evaluated before any model is fit."""
