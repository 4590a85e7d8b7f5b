"""Gaussian-process surrogates: ``gp`` (imputed encoding) and ``gp-cond`` (Lévesque's
conditional kernel, block-diagonal per condition signature)."""
