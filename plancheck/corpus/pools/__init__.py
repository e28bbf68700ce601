"""One module per tool-pool format that ``--tools FILE`` reads, each ending in ``FORMAT =
PoolFormat(...)``: the registry (:mod:`plancheck.corpus.pool_registry`) finds them here."""
