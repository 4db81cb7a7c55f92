"""The ranking's room: one place ranks a gap's readings, stage by stage, in its one order.

    scores = weighted_mean([m.score_readings(p, s, hint, readings) for m in members], weights, kinds)
    pool = ranked_pool(readings, scores)                      # stages 1–2 (pool): the restorer's ranked pool
    shown = Ranking(demotions, calibration).rank(annotated_pool, prefix, suffix, hint)   # stages 3–4 (order)

Its modules: :mod:`.pool` (readings, their union and scores to probabilities), :mod:`.doubts`
(the facts that make a reading doubtful), :mod:`.demotions` (their factors), :mod:`.calibration`
(the fitted parameters applied, NumPy only) and :mod:`.order` (:class:`~.order.Ranking`, the one
sort). The members and the presentation import it, never the reverse; ``apollo-restore tune``
fits its parameters (:mod:`apollo_restore.tune`).

Every reading ``r`` of a gap's pool ``U`` goes through four stages (:data:`~.order.STAGES`); the
first two give a restorer's ranked pool (an ensemble's, or one restorer's alone), the last two
what is shown:

1. **members**: each member ``i`` scores ``r``: ``log pᵢ(r)`` (nats, its ``score_readings``);
   ``U`` is the union of the members' proposals (merged by :func:`~.pool.match_key`, in the order
   first proposed).
2. **weights** (the ensemble, :func:`~.pool.weighted_mean` and :func:`~.pool.ranked_pool`)::

       s(r) = Σᵢ wᵢ · log pᵢ(r) / Σ_{i a language model} wᵢ
       q(r) = exp s(r) / Σ_{r' ∈ U} exp s(r')

   language models being the members of kind ``neural`` or ``classical``; a prior's or a
   document's score counts in the sum only. A restorer on its own (the neural member) gives ``s``
   (its own score) and ``q`` the same way (:func:`~.pool.to_candidates`); retrieval
   (:mod:`apollo_restore.retrieve.augment`) ranks the model's pool joined by the parallels'
   readings by ``s`` plus a prior ``w · log(1 + count)`` (:func:`~.pool.ranked_pool`'s ``prior``).
3. **demotions** (:class:`~.demotions.Demotions`, of the doubts :func:`~.doubts.doubts` finds)::

       φ(r)  = Π factors of r's doubts (truncated, repeats the context, misses an exact hint),
               the misses lowered together under an exact count (hold_count)
       q'(r) = q(r) · φ(r) / Σ_{r'} q(r') · φ(r')        (q' = q when every φ is 1)

4. **calibration** (:class:`~.calibration.Calibration`, per hint condition ``a``–``h`` and a
   shared ``δ``)::

       α    = a · exp(g · log n + h · min(m, M))
       z(r) = α · log q'(r) − δ · [r leaves an unknown word]
       none = b − c · max z + d · log n + e · m + f · s*
       p(r) = exp z(r) / (Σ_{r'} exp z(r') + exp none)

   with the parameters of the gap's kind (a real lacuna, every text's; a synthetic gap) and
   ``n`` (the best reading's letters held within the hint's range: an exact hint's count, no
   hint the reading's; :func:`~.calibration.gap_letters`), ``m`` (the margin
   of the best ``log q'`` over the next, nats), ``M`` (:data:`~.calibration.MARGIN_CAP`, 10 nats:
   the inverse temperature ``α`` moves with ``log n`` and the capped margin) and ``s*`` (``s`` of
   the best reading) read off the reading of highest ``q'`` (the first of them in the stage-2
   order); without a calibration, or for a hint condition it has no parameters for, ``p = q'``.
   ``tests/restoration/test_ranking_formula.py`` evaluates these four lines against the code.

**The order** is by ``p``, best first; ties go by ``q · φ``, then by the stage-2 order (``s``,
then ``U``'s). :func:`~.order.best_first` is the one sort: the ensemble's pool (stage 2) and what
is shown (:meth:`~.order.Ranking.rank`) are both ordered by it; the stages' modules compute
numbers only, and the presentation (:mod:`apollo_restore.restoration.presentation`) annotates,
calls :meth:`~.order.Ranking.rank`, words the doubts as notes and cuts to ``k``.
``apollo-restore tune`` fits the stages with parameters, :data:`~.order.FITTED_STAGES`, by these
names and with these functions.
"""
