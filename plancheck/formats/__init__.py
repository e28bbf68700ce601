"""What plancheck reads, named once: record and field lists (:mod:`.records`) and the call
shapes (:mod:`.shapes`). Layer 1, beside the IR: imports nothing above ``diagnostics``/``ir``."""
