"""One module per tool-pool format that ``--tools X.json`` reads (listed in
:mod:`plancheck.corpus.pool_registry`)."""
