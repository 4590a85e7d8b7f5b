"""Which configuration each new trial gets.

The initial design fills the first trials; after that the proposer suggests, with
failed trials modelled as the worst result and every suggestion kept distinct from
known trials, pending ones and the rest of its batch. Each trial draws from a
generator seeded by ``(seed, number)``, so a study's sequence does not depend on
how its trials were batched, and a serial study resumed repeats the uninterrupted
one. Resumed with trials pending, it repeats it too with a surrogate refitted on
every ask (``rf``); a surrogate conditioned on the pending trials (``gp``) reuses the
fit of an earlier ask, which the resumed process does not have, so its next proposal
can differ (by about 1e-9 with an ML-II fit, in one check).

An initial-design point that repeats a known trial (a small discrete space, a design
that drew the same point twice) is redrawn from the prior with the trial's own
generator: a repeat tells the model nothing new. Only exact repeats count there, not
nearness to pending trials, so that batching cannot change the sequence.

When prior draws keep repeating, a small finite space is listed and an untaken
configuration picked from the list, so a repeat comes only once the space is known to
be exhausted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from ensembo import execution
from ensembo.attribution import calling, describe_component
from ensembo.modelled_history import FailuresAsWorst, with_pending
from ensembo.protocols import Proposer
from ensembo.spaces.enumeration import every_config
from ensembo.trials import History, TrialState, config_key

logger = logging.getLogger(__name__)

_RUNNERS_UP = 4
_RANDOM_DRAWS = 20
_RANDOM_PURPOSE = 1000
_LISTING_PURPOSE = 999
_LISTING_LIMIT = 10_000  # value combinations of a space small enough to list
_NOT_LISTED = object()


@attrs.define
class Suggester:
    """Suggestions for a study: ``space`` searched by ``proposer`` after
    ``n_initial`` trials from ``initial_design``."""

    space: Any
    proposer: Proposer
    initial_design: Any
    n_initial: int
    seed: int
    _initial_configs: list[dict[str, Any]] | None = None
    _modelled: FailuresAsWorst = attrs.field(factory=FailuresAsWorst, init=False, repr=False)
    _listing: Any = attrs.field(default=_NOT_LISTED, init=False, repr=False)
    _repeats_warned: bool = attrs.field(default=False, init=False, repr=False)

    def rng(self, number: int, purpose: int = 0) -> np.random.Generator:
        return np.random.default_rng([self.seed, number, purpose])

    def batch(
        self,
        history: History,
        targets_of: Callable[[History], np.ndarray],
        first: int,
        n: int,
    ) -> list[dict[str, Any]]:
        """Configurations for trials ``first .. first + n - 1``; ``targets_of`` gives
        the values the proposer models for a history's completed trials (the ensemble
        strategy's targets).

        Each trial's targets are taken with the batch so far pending, as one ``ask``
        after another would see them: round-robin strategies (``esmbo``, ``eo``,
        ``segor``) pick the bootstrap or slot by the trial's number."""
        if first < self.n_initial or history.count_in_state(TrialState.COMPLETE) < 2:
            return self._unmodelled_batch(history, targets_of, first, n)
        distinct = execution.DistinctConfigs(self.space, history)
        chosen: list[dict[str, Any]] = []
        for number in range(first, first + n):
            seen = with_pending(history, chosen) if chosen else history
            modelled, targets = self._modelled(seen, targets_of(seen), base=history)
            chosen.append(self._propose_distinct(number, modelled, targets, distinct))
        return chosen

    def _unmodelled_batch(
        self,
        history: History,
        targets_of: Callable[[History], np.ndarray],
        first: int,
        n: int,
    ) -> list[dict[str, Any]]:
        """The initial design's trials of the batch (all of it while fewer than two
        trials are complete), then model-based ones that count those as pending."""
        unmodelled = history.count_in_state(TrialState.COMPLETE) < 2
        head = [
            number for number in range(first, first + n) if unmodelled or number < self.n_initial
        ]
        configs: list[dict[str, Any]] = []
        for number in head:
            configs.append(self._unmodelled(number, history, configs))
        rest = n - len(head)
        if not rest:
            return configs
        return configs + self.batch(
            with_pending(history, configs), targets_of, first + len(head), rest
        )

    def _unmodelled(
        self, number: int, history: History, batch: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """The design's configuration for trial ``number`` (a prior draw past the
        design), redrawn when it repeats a known trial or one of ``batch``."""
        planned = (
            self._initial(number)
            if number < self.n_initial
            else self.space.sample(1, self.rng(number))[0]
        )
        taken = {config_key(config) for config in batch}

        def is_new(config: dict[str, Any]) -> bool:
            return config_key(config) not in taken and not history.holds_config(config)

        if is_new(planned):
            return planned
        drawn = self._new_draw(number, is_new)
        if drawn is not None:
            logger.info("trial %d: the initial design repeated a known trial; drew another", number)
            return drawn
        self._warn_repeat(number)
        return planned

    def _new_draw(
        self, number: int, accept: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
        """The first of ``_RANDOM_DRAWS`` prior draws (the trial's own generators) that
        ``accept`` takes; failing that, in a space small enough to list, a configuration
        it takes picked at random from the list; None if there is none.

        Prior draws alone missed the last few configurations: a run of 40 trials over
        40 configurations repeated two while two others were never drawn."""
        for attempt in range(_RANDOM_DRAWS):
            drawn = self.space.sample(1, self.rng(number, _RANDOM_PURPOSE + attempt))[0]
            if accept(drawn):
                return drawn
        return self._listed_draw(number, accept)

    def _listed_draw(
        self, number: int, accept: Callable[[dict[str, Any]], bool]
    ) -> dict[str, Any] | None:
        """A configuration of the listed space that ``accept`` takes, tried in an order
        drawn with the trial's generator; None if the space is not listed or has none."""
        listing = self._listed()
        if listing is None:
            return None
        order = self.rng(number, _LISTING_PURPOSE).permutation(len(listing))
        taken = next((listing[i] for i in order if accept(listing[i])), None)
        return None if taken is None else dict(taken)  # the listing is kept: hand out a copy

    def _listed(self) -> list[dict[str, Any]] | None:
        """Every configuration of the space (listed once), or None when it is infinite
        or too large to list."""
        if self._listing is _NOT_LISTED:
            self._listing = every_config(self.space, _LISTING_LIMIT)
        return self._listing

    def _warn_repeat(self, number: int) -> None:
        """The warning for a repeat: "exhausted" only when the listing shows it. Only the
        first is a warning (later ones are DEBUG records): a budget of 30 on a space of
        two configurations logged 28 identical warnings."""
        level = logging.DEBUG if self._repeats_warned else logging.WARNING
        later = "" if self._repeats_warned else " (later repeats are logged at DEBUG level)"
        self._repeats_warned = True
        if self._listed() is not None:
            logger.log(level, "trial %d repeats a known configuration; the space is "
                       "exhausted%s", number, later)
            return
        logger.log(level, "trial %d repeats a known configuration: %d prior draws found no "
                   "new one%s", number, _RANDOM_DRAWS, later)

    def _initial(self, number: int) -> dict[str, Any]:
        if self._initial_configs is None:
            with calling("initial design", self.initial_design, "configs"):
                self._initial_configs = self.initial_design.configs(
                    self.space, self.n_initial, np.random.default_rng([self.seed, 2**31])
                )
        return self._initial_configs[number]

    def _propose_distinct(
        self,
        number: int,
        history: History,
        targets: np.ndarray,
        distinct: execution.DistinctConfigs,
    ) -> dict[str, Any]:
        """One model-based suggestion for ``history`` (the batch so far pending in it)."""
        # first the proposer's best; if refused, its runners-up from one more call. With
        # trials pending, refusals are common and a call is what a waiting worker pays
        # for, so the runners-up come with the best (the same best: the optimizer ranks).
        counts = (_RUNNERS_UP, _RUNNERS_UP) if history.pending() else (1, _RUNNERS_UP)
        kind, source, method = _proposing_component(self.proposer)
        proposed: list[dict[str, Any]] = []
        for attempt, count in enumerate(counts):
            rng = self.rng(number, attempt)
            with calling("proposer", self.proposer, "propose"):
                proposed = list(self.proposer.propose(self.space, history, targets, count, rng))
            if not proposed:
                logger.warning("trial %d: %s returned no configuration", number,
                               describe_component(kind, source))
            with calling(kind, source, method, "configurations of the space"):
                for config in map(self.space.validate, proposed):
                    if distinct.admit(config):
                        return config
        drawn = self._new_draw(number, distinct.admit)
        if drawn is not None:
            reason = "proposals repeated known trials" if proposed else "nothing was proposed"
            logger.info("trial %d: %s; drew a random one", number, reason)
            return drawn
        self._warn_repeat(number)
        if not proposed:
            return self.space.sample(1, self.rng(number))[0]
        return self.space.validate(proposed[0])


def _proposing_component(proposer: Proposer) -> tuple[str, Any, str]:
    """Whose configurations a proposer hands on, to name it when they are invalid: a
    model-based proposer's acquisition optimizer, or a proposer plugin itself."""
    optimizer = getattr(proposer, "optimizer", None)
    if optimizer is not None:
        return "acquisition optimizer", optimizer, "maximize"
    return "proposer", proposer, "propose"
