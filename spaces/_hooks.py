"""Registers the built-in library spaces (``spaces/library/*.yaml``) by name, and short
names for common scikit-learn estimator components (imported only when built)."""

from __future__ import annotations

from pathlib import Path

from ensembo.hookspecs import hookimpl
from ensembo.spaces.components import LazyEstimator

LIBRARY = Path(__file__).parent / "library"

ESTIMATORS = {
    "simple-imputer": "sklearn.impute.SimpleImputer",
    "standard-scaler": "sklearn.preprocessing.StandardScaler",
    "minmax-scaler": "sklearn.preprocessing.MinMaxScaler",
    "robust-scaler": "sklearn.preprocessing.RobustScaler",
    "svc": "sklearn.svm.SVC",
    "svr": "sklearn.svm.SVR",
    "linear-svc": "sklearn.svm.LinearSVC",
    "knn-classifier": "sklearn.neighbors.KNeighborsClassifier",
    "knn-regressor": "sklearn.neighbors.KNeighborsRegressor",
    "decision-tree-classifier": "sklearn.tree.DecisionTreeClassifier",
    "decision-tree-regressor": "sklearn.tree.DecisionTreeRegressor",
    "random-forest-classifier": "sklearn.ensemble.RandomForestClassifier",
    "random-forest-regressor": "sklearn.ensemble.RandomForestRegressor",
    "extra-trees-classifier": "sklearn.ensemble.ExtraTreesClassifier",
    "extra-trees-regressor": "sklearn.ensemble.ExtraTreesRegressor",
    "gradient-boosting-classifier": "sklearn.ensemble.GradientBoostingClassifier",
    "gradient-boosting-regressor": "sklearn.ensemble.GradientBoostingRegressor",
    "adaboost-classifier": "sklearn.ensemble.AdaBoostClassifier",
    "logistic-regression": "sklearn.linear_model.LogisticRegression",
    "ridge": "sklearn.linear_model.Ridge",
    "elastic-net": "sklearn.linear_model.ElasticNet",
    "gaussian-nb": "sklearn.naive_bayes.GaussianNB",
    "lda": "sklearn.discriminant_analysis.LinearDiscriminantAnalysis",
    "qda": "sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis",
    "mlp-classifier": "sklearn.neural_network.MLPClassifier",
    "mlp-regressor": "sklearn.neural_network.MLPRegressor",
}


@hookimpl
def ensembo_add_spaces():
    return {path.stem: (lambda path=path: path) for path in sorted(LIBRARY.glob("*.yaml"))}


@hookimpl
def ensembo_add_estimators():
    return {name: LazyEstimator(path) for name, path in ESTIMATORS.items()}
