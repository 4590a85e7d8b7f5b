"""The :class:`Study`: ask/tell over a space, with optional storage and ensembling.

The study is a thin facade. It resolves components through the registry, hands out
configurations (``ask``), records results (``tell``), keeps the ensemble strategy
informed, and persists every state change. ``optimize`` runs the loop.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from typing import Any

import numpy as np

from ensembo import (
    checks,
    component_use,
    components,
    defaults,
    interrupts,
    observers,
    spaces,
    study_arguments,
    study_resume,
    study_runs,
    told_results,
    trial_table,
    wiring,
)
from ensembo.ensemble import Ensemble
from ensembo.ensemble_keeper import check_strategy_fits
from ensembo.objective import InvalidResultError, NonFiniteLossError
from ensembo.protocols import Proposer
from ensembo.registry import Registry
from ensembo.storage import (
    Storage,
    keeps_in_memory,
    open_storage,
    put_trials,
    shared_object,
)
from ensembo.study_arguments import TASKS
from ensembo.suggestion import Suggester
from ensembo.trials import Evaluation, Trial, TrialState, handed_back, handed_out, next_to_run

logger = logging.getLogger(__name__)


class Study:
    """Optimize a loss over ``space``, building an ensemble as trials finish.

    Components are given by registry name, by ``{"name": ..., **options}`` or as
    objects; a surrogate or ensemble strategy object serves one study (or its resumes
    from the same file), since it keeps that study's state. ``surrogate=None`` is random
    search. ``seed`` fixes the whole sequence of configurations: each trial draws from a
    generator seeded by ``(seed, number)``. In a parallel run only random search and the
    initial design repeat: a model-based suggestion depends on which results have
    arrived when it is asked, which timing decides.
    """

    def __init__(
        self,
        space: Any,
        *,
        surrogate: Any = defaults.AUTO,
        acquisition: Any = "ei",
        acquisition_optimizer: Any = defaults.AUTO,
        initial_design: Any = defaults.AUTO,
        n_initial: int | None = None,
        ensemble: Any = "best",
        loss: str | None = None,
        validation_targets: np.ndarray | None = None,
        classes: Sequence[Any] | None = None,
        task: str | None = None,
        budget: int | None = None,
        seed: int = 0,
        storage: Storage | str | PathLike | None = None,
        registry: Registry | None = None,
        callbacks: Iterable[Any] = (),
        metadata: Mapping[str, Any] | None = None,
    ):
        self.space = spaces.load(space, registry=registry)
        self.seed = checks.whole_number("seed", seed, 0)
        if budget is not None:
            checks.whole_number("budget", budget, 1)
        if task is not None:
            checks.one_of("task", task, TASKS)
        validation_targets = checks.one_per_example("validation_targets", validation_targets)
        self.registry = registry
        self.metadata = checks.mapping("metadata", metadata)
        self._given_classes = None if classes is None else np.asarray(classes).tolist()
        # ask and tell may come from several threads: numbering, proposals and records
        # must not interleave (the optimize loops call both from one thread anyway).
        self._lock = threading.RLock()
        self.models: dict[int, Any] = {}
        self._specs = study_arguments.component_specs(
            self.space, surrogate=surrogate, acquisition=acquisition,
            acquisition_optimizer=acquisition_optimizer, initial_design=initial_design,
            ensemble=ensemble,
        )
        self.n_initial = (
            defaults.default_n_initial(self.space)
            if n_initial is None
            else checks.whole_number("n_initial", n_initial, 0)
        )
        self.context = study_arguments.ensemble_context(
            loss=loss, validation_targets=validation_targets, classes=classes, task=task,
            budget=budget, seed=self.seed, registry=registry,
        )
        component_use.check_unused(self._specs, storage)
        if loss is not None:  # an unknown loss, or one for the other task, fails here
            study_arguments.check_loss(loss, self.context, self.registry)
        built = wiring.build_proposer(self._specs, self.registry)
        self._specs["acquisition_optimizer"] = built.acquisition_optimizer
        self.suggester = Suggester(
            self.space,
            built.proposer,
            self._build("initial_design", self._specs["initial_design"]),
            self.n_initial,
            self.seed,
        )
        self.strategy = self._build("ensemble_strategy", ensemble)
        parts = components.split_spec("ensemble_strategy", ensemble)
        self._strategy_name = parts and parts[0]  # the registry name, which messages use
        check_strategy_fits(self.strategy, self.context, self.registry, self._strategy_name)
        self._observer_manager = wiring.observer_manager(self.registry, callbacks)
        if not keeps_in_memory(storage):  # refused before the file is made
            study_arguments.check_storable(
                metadata=self.metadata, loss=loss, specs=self._specs, space=self.space
            )
        self.storage = open_storage(storage)  # only once every argument is known to be good
        try:
            study_resume.continue_stored(self)
        except BaseException:
            if self.storage is not storage:  # opened here: let go of the file and its lock
                self.close()
            raise
        component_use.record_use(self._specs, storage)

    def close(self) -> None:
        """Close the storage file, releasing it for another process (a study also lets
        go of it when garbage-collected). ``with Study(...) as study:`` closes at the end."""
        close = getattr(self.storage, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> Study:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __reduce__(self) -> Any:  # pickle, copy.deepcopy: it holds a lock and its storage
        raise TypeError("a Study cannot be pickled or deep-copied; use storage= and Study.load")

    # --- wiring -------------------------------------------------------------------------

    def _build(self, kind: str, spec: Any) -> Any:
        return components.build(kind, spec, self.registry)

    def _meta(self) -> dict[str, Any]:
        return study_arguments.study_meta(
            space=self.space, specs=self._specs, n_initial=self.n_initial, seed=self.seed,
            context=self.context, given_classes=self._given_classes,
            metadata=self.metadata, environments=self.environments,
        )

    @classmethod
    def load(cls, storage: Storage | str | PathLike, **overrides: Any) -> Study:
        """Resume the study kept in ``storage``.

        Components given as live objects were not stored and must be passed again in
        ``overrides`` (e.g. ``surrogate=my_surrogate``).
        """
        return study_arguments.load_stored(cls, storage, overrides)

    # --- ask / tell ---------------------------------------------------------------------

    def suggest(self, number: int) -> dict[str, Any]:
        """The configuration the study would hand out as trial ``number``."""
        return self.suggest_batch(number, 1)[0]

    def suggest_batch(self, first: int, n: int) -> list[dict[str, Any]]:
        """Configurations for trials ``first .. first + n - 1``.

        Model-based suggestions are made one after the other, each with the pending
        trials and the batch so far as pending (fantasies, kriging believer by default,
        in the proposer). A suggestion that repeats a trial, or that nearly equals a
        pending trial or another suggestion of the batch (see
        :class:`ensembo.execution.DistinctConfigs`; TPE and random proposers know
        nothing of pending trials), is proposed again with fresh randomness, and after
        that replaced by a random draw, so that workers do not evaluate it twice.
        """
        with self._lock:  # the proposer's view is kept and changed in place, as an ask does
            return self.suggester.batch(self.history, self._keeper.targets, first, n)

    def enqueue(self, config: Mapping[str, Any], *, skip_if_known: bool = False) -> Trial:
        """Queue a configuration of your own (a known good one, a library default) to
        be evaluated before the proposer's next suggestions.

        ``config`` may name only some hyperparameters; the active ones it leaves out
        take their defaults (:meth:`ensembo.spaces.Space.complete`). Queued trials
        (state ``pending``) are handed out by :meth:`ask` after interrupted ones, in the
        order queued; they are stored, so they survive a resume, take the place of the
        initial design's point with the same number, and count towards ``n_trials``.
        ``skip_if_known`` returns the first trial that already has this configuration
        instead, so a script that queues and then resumes does not queue twice.
        """
        with self._lock:
            complete = self.space.complete(config)
            if skip_if_known and self.history.holds_config(complete):
                return next(t for t in self.history if t.config == complete)
            trial = Trial(number=len(self.history), config=complete)
            self._record(trial)
            return trial

    def add(
        self,
        config: Mapping[str, Any],
        result: float | Evaluation | Mapping[str, Any],
        *,
        predictions: np.ndarray | None = None,
        skip_if_known: bool = False,
    ) -> Trial:
        """Record a configuration evaluated elsewhere, as :meth:`enqueue` then
        :meth:`tell` would: to warm-start a study from earlier results. A result that
        is not usable raises ``InvalidResultError`` and records nothing; one the storage
        cannot keep (``info`` values that are not JSON, in a study file) is recorded as
        a failed trial with the reason, as :meth:`optimize` records it.

        ``skip_if_known`` looks for the first trial that already has this configuration.
        A queued or interrupted one (nobody is evaluating it) is told this result. A
        running one is being evaluated by whoever asked it, and its ``tell`` will record
        the outcome: it is returned unchanged, the result is not recorded, and a warning
        says so. A complete or failed one is returned unchanged."""
        try:  # a result that cannot be used is the caller's mistake: record nothing
            evaluation = told_results.checked_evaluation(result, predictions, self._keeper)
        except (ValueError, TypeError) as invalid:
            raise InvalidResultError(f"add(): the result is not usable: {invalid}") from None
        with self._lock:
            queued = self.enqueue(config, skip_if_known=skip_if_known)
            if queued.state is TrialState.RUNNING:  # its owner's tell must not be refused
                logger.warning(
                    "add(): trial %d has this configuration and is running (asked and not "
                    "yet told); the added result was not recorded: the trial's own tell "
                    "records its outcome", queued.number,
                )
                return queued
            if queued.state.finished:
                return queued
            told_results.say_defaults_filled_in(self.space, config, queued)
            return self._tell(
                queued, evaluation, None, TrialState.COMPLETE, None, fail_unusable=True
            )

    def ask(self) -> Trial:
        """Hand out the next trial (RUNNING) and record it."""
        return self.ask_batch(1)[0]

    def ask_batch(self, n: int) -> list[Trial]:
        """Hand out ``n`` trials: interrupted ones to re-run first, then queued ones
        (:meth:`enqueue`), then new ones."""
        n = checks.whole_number("n", n, 1)
        with self._lock:
            return self._ask_batch(n)

    def _ask_batch(self, n: int) -> list[Trial]:
        shared_object.check_still_writer(self.storage, self._writer_token)  # it writes state
        requeued, trials = next_to_run(self.history, n, self.suggest_batch)
        if len(trials) > len(requeued):  # the proposer moved on: a resume starts from here
            self._model_state.save(self.proposer, for_trial=trials[len(requeued)].number)
        try:  # all recorded before observers hear of any: one that raises loses none
            self._record(*trials)
            for trial in trials:
                self._notify("ensembo_trial_started", study=self, trial=trial)
        except BaseException as error:  # nobody got the batch: ask must hand it out again
            self._record(*handed_back(self.history, requeued, trials, error))
            raise
        return [handed_out(trial) for trial in trials]  # the caller's to change

    def tell(
        self,
        trial: Trial | int,
        result: float | Evaluation | Mapping[str, Any] | None = None,
        *,
        predictions: np.ndarray | None = None,
        state: TrialState | str = TrialState.COMPLETE,
        error: str | BaseException | None = None,
    ) -> Trial:
        """Record the outcome of a trial handed out by :meth:`ask`.

        ``result`` is a loss, an :class:`Evaluation` or a mapping with ``loss``; pass
        ``state="failed"`` with ``error`` (text or the exception) for a failed
        evaluation. A result that cannot be used (none, not a number, predictions of the
        wrong shape, info the storage cannot keep) raises ``InvalidResultError`` and
        records nothing: the trial stays running, to be told again. ``error=`` with a
        complete result, and a queued trial never asked (:meth:`enqueue`; :meth:`add`
        records a result evaluated elsewhere), raise ``TrialError`` and record nothing.
        A NaN or infinite loss is a failed evaluation: the trial is failed, with a warning.
        """
        with self._lock:
            told_results.refuse_queued(self.history.awaiting_result(trial))
            return self._tell(trial, result, predictions, state, error, fail_unusable=False)

    def _tell_returned(self, trial: Trial | int, value: Any) -> Trial:
        """Record what the objective returned in :meth:`optimize`: there an unusable
        return is the objective's failure, as an exception would be, and fails the trial
        with the reason (the loop logs it)."""
        with self._lock:
            return self._tell(trial, value, None, TrialState.COMPLETE, None, fail_unusable=True)

    def _tell(
        self,
        trial: Trial | int,
        result: Any,
        predictions: np.ndarray | None,
        state: TrialState | str,
        error: str | BaseException | None,
        *,
        fail_unusable: bool,
    ) -> Trial:
        state = told_results.told_state(state, result, predictions, error)
        current = self.history.awaiting_result(trial)
        if result is None and state is TrialState.COMPLETE and not fail_unusable:
            raise told_results.unusable(
                current, "none was given (a loss, an Evaluation or a mapping with 'loss')"
            )
        now = self._clock.now()
        if state is not TrialState.COMPLETE:
            return self._finish(current.with_failure(error or state.value, now, state))
        try:
            evaluation = told_results.checked_evaluation(result, predictions, self._keeper)
        except NonFiniteLossError as non_finite:
            if not fail_unusable:  # the loop logs its own failures
                logger.warning("trial %d failed: %s", current.number, non_finite)
            return self._finish(current.with_failure(str(non_finite), now))
        except (ValueError, TypeError) as invalid:
            if fail_unusable:
                return self._finish(current.with_failure(str(invalid), now))
            raise told_results.unusable(current, invalid) from None
        with interrupts.deferred():  # a Ctrl-C waits until the trial is announced too
            try:
                completed = current.with_result(evaluation, now)  # info refused here too
                self._record(completed)
            except (TypeError, ValueError) as refused:  # e.g. info or predictions not storable
                if fail_unusable:
                    reason = f"the result cannot be stored: {refused}"
                    return self._finish(current.with_failure(reason, now))
                raise told_results.unusable(current, refused, "cannot be stored") from None
            # Only the storage's refusal above is the result's fault: an error of the
            # strategy or of an observer below propagates as it is, the trial recorded.
            return self._announce(completed, evaluation.model)

    def _finish(self, finished: Trial) -> Trial:
        """Record a trial's outcome, then announce it (a Ctrl-C waits for both)."""
        with interrupts.deferred():
            self._record(finished)
            return self._announce(finished)

    def _announce(self, finished: Trial, model: Any = None) -> Trial:
        """Keep a recorded trial's model, then tell the ensemble and the observers."""
        if model is not None:
            self.models[finished.number] = model
        if finished.state is TrialState.COMPLETE:
            self._refresh_ensemble()
        self._notify("ensembo_trial_finished", study=self, trial=finished)
        return finished

    def _notify(self, hook_name: str, **kwargs: Any) -> Any:
        return observers.notify(self._observer_manager, hook_name, **kwargs)

    def _record(self, *trials: Trial) -> None:
        """Write ``trials`` (in one atomic step where the storage can) and put them in
        the history, both or neither: a Ctrl-C waits."""
        if not trials:  # nothing to hand back: no write, no wait for a locked file
            return
        shared_object.check_still_writer(self.storage, self._writer_token)
        with interrupts.deferred():
            put_trials(self.storage, trials)
            for trial in trials:
                self.history.put(trial)

    def _refresh_ensemble(self, announce: bool = True) -> None:
        """Let the strategy see the new results, then take its ensemble."""
        ensemble = self._keeper.refresh(self.history)
        if ensemble is not None and announce:
            self._notify("ensembo_ensemble_updated", study=self, ensemble=ensemble)

    # --- the loop -----------------------------------------------------------------------

    def optimize(
        self,
        objective: Callable[[dict[str, Any]], Any],
        n_trials: int | None = None,
        *,
        timeout: float | None = None,
        catch: type[BaseException] | Iterable[type[BaseException]] = (Exception,),
        show_progress: bool = False,
        n_jobs: int | None = None,
        executor: Any = None,
        trial_timeout: float | None = None,
        memory_limit: int | str | None = None,
        max_retries: int = 2,
    ) -> Study:
        """Evaluate ``objective`` until ``n_trials`` trials finished (or ``timeout`` s).

        An exception of a class in ``catch`` (an exception class, or a tuple, list or
        other iterable of them; ``()`` catches nothing) marks the trial failed with the
        error text and the run continues; others fail the trial and propagate (anything
        else as ``catch`` is refused before the first trial). Ctrl-C marks the running
        trials interrupted and re-raises. ``show_progress`` draws a progress bar on
        stderr when it is a terminal.

        Parallel and distributed evaluation (see :mod:`ensembo.execution`): ``n_jobs=k``
        evaluates ``k`` trials at once in local processes (``-1``: one per CPU);
        ``executor`` takes a ``dask.distributed.Client`` or any
        ``concurrent.futures.Executor``. A new trial is asked as soon as a worker frees.
        ``trial_timeout`` (seconds) and ``memory_limit`` (bytes or ``"2GB"``) are
        enforced by running each evaluation in its own process, killed at the limit
        (trial failed, reason ``timeout``/``memory``). An evaluation whose process
        crashed or whose worker was lost is re-queued up to ``max_retries`` times.
        """
        study_runs.optimize(
            self, self._observer_manager, objective, n_trials, timeout=timeout, catch=catch,
            show_progress=show_progress, n_jobs=n_jobs, executor=executor,
            trial_timeout=trial_timeout, memory_limit=memory_limit, max_retries=max_retries,
        )
        return self

    # --- results ------------------------------------------------------------------------

    @property
    def proposer(self) -> Proposer:
        return self.suggester.proposer

    @property
    def trials(self) -> Sequence[Trial]:
        return self.history

    @property
    def best_trial(self) -> Trial | None:
        return self.history.best()

    @property
    def ensemble(self) -> Ensemble | None:
        return self._keeper.current

    def trials_dataframe(self) -> Any:
        """The trials as a pandas DataFrame (pandas is optional: ``ensembo[data]``); see
        :func:`ensembo.trial_table.dataframe` for its columns."""
        with self._lock:
            trials = list(self.history)
        return trial_table.dataframe(trials, self.space.names, self.ensemble)

    def components(self) -> dict[str, Any]:
        """The component specs in use (names and options, or the objects)."""
        return dict(self._specs)

