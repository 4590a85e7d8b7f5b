"""Registration: the module named by this distribution's ``ensembo`` entry point.

Each hook returns registry name -> factory. ensembo calls a factory with the options
the user wrote next to the name (``{name: knn, k: 7}`` -> ``KNNSurrogate(k=7)``).
"""

import ensembo

from ensembo_plugin_example.knn import KNNSurrogate
from ensembo_plugin_example.stacking import Stacking


@ensembo.hookimpl
def ensembo_add_surrogates():
    return {"knn": KNNSurrogate}


@ensembo.hookimpl
def ensembo_add_ensemble_strategies():
    return {"stacking": Stacking}
