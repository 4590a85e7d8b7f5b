"""The Branin function (global minimum 0.397887), the objective of experiment.yaml."""

import math


def loss(config):
    x, y = config["x"], config["y"]
    a, b, c = 1.0, 5.1 / (4 * math.pi**2), 5 / math.pi
    r, s, t = 6.0, 10.0, 1 / (8 * math.pi)
    return a * (y - b * x**2 + c * x - r) ** 2 + s * (1 - t) * math.cos(x) + s
