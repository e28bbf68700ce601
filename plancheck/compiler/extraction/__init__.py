"""Reading a plan out of a model's text: one package for the linter and the reference-parity
scorer.

Both readings share the JSON mending (:func:`plancheck.compiler.extraction.mend.load_or_mend`:
``json.loads``, else what json-repair reads, with json-repair 0.64.6's readings of the common
kinds of damage computed rather than called) and differ where the reference's quirks do:

* the linter (:mod:`~plancheck.compiler.extraction.linter`) looks for the plan where a model
  puts it (the whole text, a code fence, after the marker sentence, the best JSON value in the
  text), keeps positions so that diagnostics point into the original text, and reports each
  assumption it made;
* the reference evaluator's reading (:mod:`~plancheck.compiler.extraction.isolation`, then
  :mod:`~plancheck.compiler.extraction.mend`) follows DisasterBench's ``evaluators.py`` quirk
  for quirk (regular expressions on flattened text, a bracket-slice fallback); the scorer in
  :mod:`plancheck.scoring.reference` shapes and compares what it reads.
"""
