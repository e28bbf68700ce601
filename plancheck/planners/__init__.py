"""Planners: produce plans for benchmark tasks, with or without a language model.

* ``client``: the one OpenAI-compatible chat client (retries, cache, usage);
* ``dp``, ``cot``, ``tot``, ``rap`` (+ ``mcts``), ``react``: the paper's five paradigms, sharing
  ``llm`` (per-task model session, reference post-processing, the checker loop) and ``prompts``
  (YAML templates laid out like the reference's);
* ``repair``: the checker in the loop, also public as ``plancheck.repair``;
* ``schema``: a toolset compiled to a JSON Schema for structured output;
* ``structural``: the paper's four model-free baselines; ``solver``: a model-free planner;
* ``registry`` (method name -> planner), ``tasks`` and ``runner`` (resumable batch runs).
"""
